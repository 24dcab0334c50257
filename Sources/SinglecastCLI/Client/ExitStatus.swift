import SinglecastProtocol

/// The one table of how `singlecastctl` ends after an error, so that a mistake ends the same way whichever side
/// finds it: the client before it connects, or the daemon.
extension ExitCode {
    /// - 64 (`EX_USAGE`): a usage error, or the daemon's `invalid_params` (a wrong value, which the client's own
    ///   checks would call a usage error too);
    /// - 69 (`EX_UNAVAILABLE`): the daemon cannot be reached;
    /// - an ``ExitCode`` thrown as it is; an error's own ``CLIExitStatusProviding/exitStatus``; else 1.
    package static func of(_ error: any Error) -> ExitCode {
        switch error {
        case let exit as ExitCode: return exit
        case is UsageError: return .usage
        case let error as ClientError:
            switch error.code {
            case .notRunning, .notListening, .connectFailed, .socketPathTooLong: return .unavailable
            case .daemonError where error.rpcError.map(isWrongValue) == true: return .usage
            default: return .failure
            }
        case let error as any CLIExitStatusProviding: return error.exitStatus
        default: return .failure
        }
    }

    /// The daemon's `invalid_params` proper: a value given is wrong (a scheme, a range, a rule). Naming something
    /// that does not exist (`unknown_podcast`, `unknown_episode`, …) shares its JSON-RPC code but is no usage
    /// error: only the daemon can know it.
    static func isWrongValue(_ error: RPCError) -> Bool {
        error.code == RPCError.invalidParamsCode && wrongValueReasons.contains(error.reason ?? "invalid_params")
    }

    /// The `invalid_params` reasons that mean a value given is wrong; `term_too_short` has its own reason only for
    /// its `details.minimum`.
    static let wrongValueReasons: Set<String> = ["invalid_params", "term_too_short"]
}
