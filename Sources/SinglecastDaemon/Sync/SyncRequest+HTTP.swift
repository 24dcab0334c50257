import FoundationEssentials
import SinglecastHTTP

/// The URL and body of each ``SyncRequest``, per flavour of the API: the only place that knows the endpoints.
extension SyncRequest {
    /// - Parameters:
    ///   - server: The base URL, without a trailing slash.
    /// - Returns: The URL and, for an upload, the JSON body (POST).
    func http(server: String, flavor: SyncSettings.Flavor, user: String, device: String) -> (String, Data?) {
        let user = Self.pathComponent(user)
        switch (flavor, self) {
        case (.gpodder, .registerDevice):
            return (
                "\(server)/api/2/devices/\(user)/\(device).json",
                SyncWire.deviceUpload(caption: "singlecast on \(device)")
            )
        case (.gpodder, .listDevices):
            return ("\(server)/api/2/devices/\(user).json", nil)
        case (.gpodder, .pullSubscriptions(let other, let since)):
            return ("\(server)/api/2/subscriptions/\(user)/\(Self.pathComponent(other)).json?since=\(since)", nil)
        case (.gpodder, .pushSubscriptions(let add, let remove)):
            return (
                "\(server)/api/2/subscriptions/\(user)/\(device).json",
                SyncWire.subscriptionUpload(add: add, remove: remove)
            )
        case (.gpodder, .pullActions(let since)):
            return ("\(server)/api/2/episodes/\(user).json?since=\(since)", nil)
        case (.gpodder, .pushActions(let entries)):
            return ("\(server)/api/2/episodes/\(user).json", SyncWire.actionUpload(entries, device: device))
        // The gpoddersync app: the account comes from the credentials, and there are no devices.
        case (.nextcloud, .registerDevice), (.nextcloud, .listDevices):
            preconditionFailure("the Nextcloud flavour has no devices")
        case (.nextcloud, .pullSubscriptions(_, let since)):
            return ("\(server)/index.php/apps/gpoddersync/subscriptions?since=\(since)", nil)
        case (.nextcloud, .pushSubscriptions(let add, let remove)):
            return (
                "\(server)/index.php/apps/gpoddersync/subscription_change/create",
                SyncWire.subscriptionUpload(add: add, remove: remove)
            )
        case (.nextcloud, .pullActions(let since)):
            return ("\(server)/index.php/apps/gpoddersync/episode_action?since=\(since)", nil)
        case (.nextcloud, .pushActions(let entries)):
            return (
                "\(server)/index.php/apps/gpoddersync/episode_action/create",
                SyncWire.actionUpload(entries, device: device)
            )
        }
    }

    /// A user or device name as one path segment.
    static func pathComponent(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            let character = Character(Unicode.Scalar(byte))
            if byte < 0x80 && (character.isLetter || character.isNumber || "-._~@".contains(character)) {
                result.append(character)
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }
}
