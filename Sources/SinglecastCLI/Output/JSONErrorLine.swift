import FoundationEssentials
import SinglecastProtocol

/// An error as `--json` prints it on standard error: `{"error":{"code":…,"message":…,"reason":…}}` and a newline.
///
/// It has the shape of a JSON-RPC error object so scripts read the daemon's errors and the client's alike:
/// - an error the daemon answered with keeps its JSON-RPC `code` and its `data.reason` (`null` without one);
/// - an error of the client's own (a usage error, an unreachable daemon, an unreadable file) has the exit status
///   as `code` (64, 69 or 1) and the client's stable reason, such as `unknown_option` or `not_running`.
package struct JSONErrorLine: Encodable {
    package struct Body: Encodable {
        package var code: Int
        package var reason: String?
        package var message: String

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(code, forKey: .code)
            // Always present, `null` when unknown, so scripts need not test for the key.
            try container.encode(reason, forKey: .reason)
            try container.encode(message, forKey: .message)
        }

        enum CodingKeys: String, CodingKey {
            case code
            case reason
            case message
        }
    }

    package var error: Body

    package init(_ error: any Error, exitStatus: ExitCode) {
        if let rpc = (error as? ClientError)?.rpcError {
            self.error = Body(code: rpc.code, reason: rpc.reason, message: rpc.message)
            return
        }
        let reason: String? =
            switch error {
            case let error as ClientError: error.code.rawValue
            case let error as UsageError: error.code.rawValue
            case let error as CommandError: error.code.rawValue
            default: nil
            }
        let message = (error as? UsageError)?.message ?? CLI.describe(error)
        self.error = Body(code: Int(exitStatus.rawValue), reason: reason, message: message)
    }

    /// One line of compact JSON with sorted keys, like the rest of `--json` output.
    package var text: String {
        // Three plain fields always encode; the fallback only keeps the type honest.
        let data = (try? WireCoding.encoder().encode(self)) ?? Data(#"{"error":{"code":1}}"#.utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
