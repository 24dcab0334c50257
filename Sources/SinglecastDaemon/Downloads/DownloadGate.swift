/// Why the daemon holds downloads back; the wire's `pause_reason` of the downloads it paused for it.
package enum GateReason: String, Sendable, CaseIterable {
    /// Outside every configured `download_window`.
    case outsideWindow = "outside_window"
    /// NetworkManager says the connection is metered, and `metered = pause`.
    case metered
}

/// What `metered` asks for on a metered connection.
package enum MeteredPolicy: String, Sendable, CaseIterable {
    /// Hold downloads while NetworkManager reports the connection as metered.
    case pause
    /// Download whatever the connection costs.
    case ignore
}

/// The two things that close the gate in front of the download queue, combined into one reason.
///
/// Pure: the window service and the metered monitor set their halves, and the queue hands the state machine only
/// ``closedBecause``.
package struct DownloadGate: Hashable, Sendable {
    package var outsideWindow = false
    /// Unix milliseconds of the next window opening (outside) or closing (inside); `nil` when none comes.
    package var nextWindowChange: Int64?
    /// Whether the connection is metered and `metered = pause`.
    package var metered = false

    package init() {}

    /// The window wins over the metered network when both hold: it says when the downloads resume.
    package var closedBecause: GateReason? {
        if outsideWindow { return .outsideWindow }
        return metered ? .metered : nil
    }

    /// When downloads held by the window resume, in Unix milliseconds.
    package var windowOpensAt: Int64? { outsideWindow ? nextWindowChange : nil }
}
