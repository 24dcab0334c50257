import FoundationEssentials
import SinglecastFeeds
import SinglecastStore
import SinglecastSupport

/// The gPodder API's JSON, both ways: what the server answers, parsed with bounds, and the bodies singlecast sends.
/// Pure, so that the parsers are fuzzed (`Fuzz/sync-json.swift`) and the shapes tested without a server.
package enum SyncWire {
    /// The largest answer read; a bigger one is refused before it is parsed (`FetchRequest.maxBytes`).
    package static let maxResponseBytes: Int64 = 32 << 20
    /// The most entries (URLs, actions, devices) one answer may carry.
    package static let maxEntries = 200_000
    /// A URL longer than this is not a feed or an episode anyone subscribes to: the entry is skipped and counted.
    package static let maxURLLength = 8192

    /// A device of the account (`GET /api/2/devices/{user}.json`).
    package struct Device: Sendable, Hashable {
        package var id: String
    }

    /// Subscription changes of one device since a timestamp.
    package struct SubscriptionChanges: Sendable, Hashable {
        package var add: [String]
        package var remove: [String]
        package var timestamp: Int64
        /// Entries dropped as unusable (not a string URL, too long).
        package var skipped = 0
    }

    /// What an upload answered: the server's timestamp, and URLs it rewrote (`update_urls`, old → new).
    package struct UploadResponse: Sendable, Hashable {
        package var timestamp: Int64
        package var updateURLs: [String: String]
    }

    /// One episode action of another device.
    package struct Action: Sendable, Hashable {
        package enum Kind: String, Sendable, Hashable {
            case download, delete, play, new, flattr
        }
        package var podcast: String
        package var episode: String
        package var guid: String?
        package var device: String?
        package var kind: Kind
        /// Unix seconds; `nil` when the server gave none or an unreadable one.
        package var timestamp: Int64?
        package var position: Int64?
        package var total: Int64?

        /// Whether a play action reached the end (position at or past total), which marks the episode played.
        package var reachedEnd: Bool {
            guard kind == .play, let position, let total, total > 0 else { return false }
            return position >= total
        }
    }

    package struct Actions: Sendable, Hashable {
        package var actions: [Action]
        package var timestamp: Int64
        package var skipped = 0
    }

    // MARK: - Parsing

    private static func decode<T: Decodable>(_ type: T.Type, _ body: Data, what: String) throws(SyncError) -> T {
        guard body.count <= maxResponseBytes else {
            throw SyncError(.badResponse, "the server's \(what) is larger than \(maxResponseBytes >> 20) MiB")
        }
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch {
            throw SyncError(.badResponse, "the server's \(what) is not the JSON the gPodder API describes")
        }
    }

    /// A JSON value that may be anything: entries of the wrong type are skipped, not fatal.
    private enum Loose: Decodable {
        case string(String)
        case other
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            self = (try? container.decode(String.self)).map(Loose.string) ?? .other
        }
    }

    private static func urls(_ entries: [Loose]?, skipped: inout Int) throws(SyncError) -> [String] {
        let entries = entries ?? []
        guard entries.count <= maxEntries else {
            throw SyncError(.badResponse, "the server's answer lists more than \(maxEntries) entries")
        }
        var result: [String] = []
        for entry in entries {
            if case .string(let url) = entry, !url.isEmpty, url.utf8.count <= maxURLLength {
                result.append(url)
            } else {
                skipped += 1
            }
        }
        return result
    }

    /// A timestamp the server sent, which must be a plausible Unix time in seconds.
    private static func timestamp(_ value: Int64?, what: String) throws(SyncError) -> Int64 {
        guard let value, (0...(1 << 40)).contains(value) else {
            throw SyncError(.badResponse, "the server's \(what) has no usable timestamp")
        }
        return value
    }

    private struct ChangesBody: Decodable {
        var add: [Loose]?
        var remove: [Loose]?
        var timestamp: Int64?
    }

    package static func subscriptionChanges(_ body: Data) throws(SyncError) -> SubscriptionChanges {
        let decoded = try decode(ChangesBody.self, body, what: "subscription changes")
        var skipped = 0
        let add = try urls(decoded.add, skipped: &skipped)
        let remove = try urls(decoded.remove, skipped: &skipped)
        let stamp = try timestamp(decoded.timestamp, what: "subscription changes")
        return SubscriptionChanges(add: add, remove: remove, timestamp: stamp, skipped: skipped)
    }

    private struct UploadBody: Decodable {
        var timestamp: Int64?
        var update_urls: [[Loose]]?
    }

    package static func uploadResponse(_ body: Data) throws(SyncError) -> UploadResponse {
        let decoded = try decode(UploadBody.self, body, what: "upload answer")
        var moves: [String: String] = [:]
        for pair in (decoded.update_urls ?? []).prefix(maxEntries) where pair.count == 2 {
            // An empty new URL means the server refused the old one; there is nothing to move to.
            if case .string(let old) = pair[0], case .string(let new) = pair[1], !new.isEmpty, old != new {
                moves[old] = new
            }
        }
        return UploadResponse(timestamp: try timestamp(decoded.timestamp, what: "upload answer"), updateURLs: moves)
    }

    private struct DeviceBody: Decodable {
        var id: String?
    }

    package static func devices(_ body: Data) throws(SyncError) -> [Device] {
        let decoded = try decode([DeviceBody].self, body, what: "device list")
        guard decoded.count <= maxEntries else {
            throw SyncError(.badResponse, "the server's device list has more than \(maxEntries) devices")
        }
        return decoded.compactMap { $0.id.flatMap { SyncSettings.isDeviceID($0) ? Device(id: $0) : nil } }
    }

    private struct ActionBody: Decodable {
        var podcast: String?
        var episode: String?
        var guid: String?
        var device: String?
        var action: String?
        var timestamp: String?
        var position: Int64?
        var total: Int64?

        // A number that is not an integer (or does not fit) costs its action, not the whole answer.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            podcast = try? container.decodeIfPresent(String.self, forKey: .podcast)
            episode = try? container.decodeIfPresent(String.self, forKey: .episode)
            guid = try? container.decodeIfPresent(String.self, forKey: .guid)
            device = try? container.decodeIfPresent(String.self, forKey: .device)
            action = try? container.decodeIfPresent(String.self, forKey: .action)
            timestamp = try? container.decodeIfPresent(String.self, forKey: .timestamp)
            position = try? container.decodeIfPresent(Int64.self, forKey: .position)
            total = try? container.decodeIfPresent(Int64.self, forKey: .total)
        }

        enum CodingKeys: String, CodingKey {
            case podcast, episode, guid, device, action, timestamp, position, total
        }
    }

    private struct ActionsBody: Decodable {
        var actions: [ActionBody]?
        var timestamp: Int64?
    }

    package static func actions(_ body: Data) throws(SyncError) -> Actions {
        let decoded = try decode(ActionsBody.self, body, what: "episode actions")
        let entries = decoded.actions ?? []
        guard entries.count <= maxEntries else {
            throw SyncError(.badResponse, "the server's answer has more than \(maxEntries) episode actions")
        }
        var actions: [Action] = []
        actions.reserveCapacity(entries.count)
        var skipped = 0
        for entry in entries {
            guard let podcast = entry.podcast, let episode = entry.episode, !podcast.isEmpty, !episode.isEmpty,
                podcast.utf8.count <= maxURLLength, episode.utf8.count <= maxURLLength,
                let kind = entry.action.flatMap({ Action.Kind(rawValue: $0.lowercased()) })
            else {
                skipped += 1
                continue
            }
            actions.append(
                Action(
                    podcast: podcast,
                    episode: episode,
                    guid: entry.guid,
                    device: entry.device,
                    kind: kind,
                    timestamp: entry.timestamp.flatMap(parseTimestamp),
                    position: entry.position.map { max(0, $0) },
                    total: entry.total.map { max(0, $0) }
                )
            )
        }
        return Actions(
            actions: actions,
            timestamp: try timestamp(decoded.timestamp, what: "episode actions"),
            skipped: skipped
        )
    }

    /// The API's action timestamps: ISO 8601 in UTC, usually without a zone (`2026-12-04T21:00:00`).
    package static func parseTimestamp(_ text: String) -> Int64? {
        guard let date = FeedDate.parseISO8601(text) else { return nil }
        return OutsideNumber.int64(date.timeIntervalSince1970)
    }

    /// Unix milliseconds as the API writes action timestamps.
    package static func formatTimestamp(milliseconds: Int64) -> String {
        let seconds = Int(milliseconds / 1000)
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = seconds - days * 86400
        let (year, month, day) = FeedDate.civil(fromDays: days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(year)
        return String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText
            + "-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
    }

    // MARK: - Bodies sent

    private struct ChangesUpload: Encodable {
        var add: [String]
        var remove: [String]
    }

    package static func subscriptionUpload(add: [String], remove: [String]) -> Data {
        (try? JSONEncoder().encode(ChangesUpload(add: add, remove: remove))) ?? Data("{}".utf8)
    }

    private struct ActionUpload: Encodable {
        var podcast: String
        var episode: String
        var guid: String?
        var device: String
        var action: String
        var timestamp: String
        var started: Int64?
        var position: Int64?
        var total: Int64?
    }

    package static func actionUpload(_ entries: [SyncOutboxEntry], device: String) -> Data {
        let actions = entries.compactMap { entry -> ActionUpload? in
            guard let episode = entry.episodeURL, !entry.kind.isSubscription else { return nil }
            // A play of unknown length goes in the API's minimal form, without them.
            let isPlay = entry.kind == .play && entry.position != nil && entry.total != nil
            return ActionUpload(
                podcast: entry.podcastURL,
                episode: episode,
                guid: entry.guid,
                device: device,
                action: entry.kind.rawValue,
                timestamp: formatTimestamp(milliseconds: entry.at),
                // The API wants started, position and total together on a play, and only there.
                started: isPlay ? 0 : nil,
                position: isPlay ? entry.position : nil,
                total: isPlay ? entry.total : nil
            )
        }
        return (try? JSONEncoder().encode(actions)) ?? Data("[]".utf8)
    }

    private struct DeviceUpload: Encodable {
        var caption: String
        var type: String
    }

    package static func deviceUpload(caption: String) -> Data {
        (try? JSONEncoder().encode(DeviceUpload(caption: caption, type: "server"))) ?? Data("{}".utf8)
    }
}
