import FoundationEssentials
import SinglecastProtocol
import SinglecastSupport

/// `singlecastctl watch`: prints daemon events until the daemon stops.
package struct WatchCommand: CLICommand {
    package static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print daemon events as they happen.",
        discussion:
            "Runs until the daemon stops or you press Control-C. On a terminal, active downloads show live "
            + "progress bars; otherwise each event is one line, with progress at most every 5 seconds per download. "
            + "Podcast events (subscribed, refreshed, unsubscribed) and episode events (played, unplayed, deleted) "
            + "are one line each.",
        arguments: [
            .option(
                "topic",
                valueName: "topic",
                help: "Print only events of this topic, and daemon.stopping; repeat for several. (values: "
                    + EventTopic.allCases.map(\.rawValue).joined(separator: ", ") + ")",
                repeating: true
            ),
            .option(
                "event",
                valueName: "name",
                help: "Print only this event, such as download.completed, and daemon.stopping; repeat for "
                    + "several. With --topic, each event must be of one of the topics.",
                repeating: true
            ),
        ]
    )

    package var options: GlobalOptions
    /// Empty for every topic. The daemon checks the names, so a newer daemon's topics work here too.
    package var topics: [String]
    /// Empty for every event of the topics; checked by the daemon too.
    package var events: [String]

    package init(_ arguments: ParsedArguments) throws {
        options = try GlobalOptions(arguments)
        topics = arguments.options("topic")
        events = arguments.options("event")
    }

    /// With chosen events, `daemon.stopping` too: without it the daemon's stop would look like a lost connection.
    /// The daemon sends it to every watcher; one from before that rule, still running after an upgrade, sends it
    /// only when asked.
    private var watchParams: WatchParams {
        guard !events.isEmpty else { return WatchParams(topics: topics) }
        var (topics, events) = (topics, events)
        if !topics.isEmpty && !topics.contains(EventTopic.daemon.rawValue) { topics.append(EventTopic.daemon.rawValue) }
        if !events.contains(DaemonEvent.stopping.rawValue) { events.append(DaemonEvent.stopping.rawValue) }
        return WatchParams(topics: topics.isEmpty ? nil : topics, events: events)
    }

    package func run(_ context: CommandContext) async throws {
        let path = context.socketPath(options)
        let params = topics.isEmpty && events.isEmpty ? nil : try WireCoding.value(of: watchParams)
        let json = options.json
        let timeout = context.responseTimeout
        let stdout = context.stdout
        let isTerminal = stdout.isTerminal && context.environment["TERM"] != "dumb"
        try await Blocking.run {
            let connection = try ControlConnection(path: path)
            var sawStopping = false
            var renderer = ProgressRenderer(mode: isTerminal ? .terminal : .plain)
            func show(_ method: String, _ params: JSONValue?, _ line: [UInt8]) {
                if method == DaemonEvent.stopping.rawValue { sawStopping = true }
                if json {
                    stdout.write(String(decoding: line, as: UTF8.self) + "\n")
                    return
                }
                if isTerminal { renderer.columns = stdout.terminalColumns }
                if method.hasPrefix("download."), let params,
                    let event = try? WireCoding.decode(DownloadEventParams.self, from: params)
                {
                    stdout.write(renderer.event(method, event.download, now: Date()))
                } else if method.hasPrefix("podcast."), let params,
                    let event = try? WireCoding.decode(PodcastEventParams.self, from: params)
                {
                    stdout.write(renderer.message(PodcastText.eventLine(method, event) + "\n"))
                } else if method == EpisodeEvent.marked.rawValue, let params,
                    let event = try? WireCoding.decode(EpisodesMarkedParams.self, from: params)
                {
                    stdout.write(renderer.message(PodcastText.markedEventLine(event) + "\n"))
                } else if method.hasPrefix("episode."), let params,
                    let event = try? WireCoding.decode(EpisodeEventParams.self, from: params)
                {
                    stdout.write(renderer.message(PodcastText.episodeEventLine(method, event) + "\n"))
                } else {
                    stdout.write(renderer.message(Self.eventLine(method, params)))
                }
            }
            _ = try connection.call(Method.watch.rawValue, params: params, timeout: timeout, notification: show)
            // Events can be hours apart, so from here on there is no deadline; text output wakes up every second
            // to notice downloads whose progress events stopped.
            let wakeUp: Duration? = json ? nil : .seconds(1)
            while true {
                let next: (RPCIncoming, line: [UInt8])?
                do {
                    next = try connection.nextMessage(timeout: wakeUp)
                } catch let error as ClientError where error.code == .timedOut {
                    stdout.write(renderer.tick(now: Date()))
                    continue
                }
                guard let (message, line) = next else { break }
                if case .notification(let method, let params) = message { show(method, params, line) }
                // Events about other downloads can keep the wait above from ever timing out.
                if !json { stdout.write(renderer.tick(now: Date())) }
            }
            if !sawStopping {
                throw ClientError(
                    code: .connectionClosed,
                    message: "singlecastd at \(path) closed the connection without announcing that it was stopping."
                )
            }
        }
    }

    /// `2026-11-29 13:00 daemon.reloaded  <message>` plus a newline, the time local (``Timestamps/text(_:zone:)``);
    /// `events.dropped` as `2026-11-29 13:00 … 1,500 events dropped (…)`.
    ///
    /// Events without a `message` show their other params as JSON instead, so new event kinds print usefully
    /// before this client learns about them.
    package static func eventLine(_ method: String, _ params: JSONValue?, zone: LocalTimeZone = .system) -> String {
        var fields: [String: JSONValue] = [:]
        if case .object(let object) = params { fields = object }
        let at: String
        if case .string(let value) = fields.removeValue(forKey: "at") {
            at = Timestamps.text(value, zone: zone)
        } else {
            at = Timestamps.text(WallClock.timestamp(), zone: zone)
        }
        // The daemon lost events this watcher did not read in time (a bulk operation, a paused terminal).
        if method == DroppedEvents.method, case .integer(let count) = fields["count"] {
            let what =
                count == 1
                ? "1 event dropped (singlecastd could not send it"
                : "\(ListSummary.grouped(count)) events dropped (singlecastd could not send them"
            return "\(at) … \(what) in time)\n"
        }
        var detail: String?
        if case .string(let message) = fields.removeValue(forKey: "message") {
            detail = message
        } else if !fields.isEmpty, let data = try? WireCoding.encoder().encode(JSONValue.object(fields)) {
            detail = String(decoding: data, as: UTF8.self)
        }
        return "\(at) \(method)" + (detail.map { "  \($0)" } ?? "") + "\n"
    }
}
