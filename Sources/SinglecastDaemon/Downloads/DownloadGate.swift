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

/// What the metered monitor knows of the network.
package enum MeteredNews: Sendable, Hashable {
    /// NetworkManager's answer: metered or not.
    case answered(metered: Bool)
    /// No system bus at start-up, or no NetworkManager on it: nothing can be metered, downloads run.
    case undetectable
    /// NetworkManager cannot say for now (no answer yet, the bus connection lost and being made again): the last
    /// answer holds.
    case unanswered
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
    /// Whether NetworkManager's answer is awaited: from start-up with `metered = pause` until its first answer.
    /// Meanwhile the gate is not settled, so the downloads a metered network paused before a restart stay paused
    /// (and the others may run).
    package var awaitingMeteredAnswer = false

    package init() {}

    /// The metered monitor's news; ``MeteredNews/unanswered`` keeps the last answer, so a metered network's pauses
    /// hold until NetworkManager says otherwise.
    package mutating func meteredAnswer(_ news: MeteredNews) {
        switch news {
        case .answered(let answer): metered = answer
        case .undetectable: metered = false
        case .unanswered: return
        }
        awaitingMeteredAnswer = false
    }

    /// Whether ``closedBecause`` may be handed to the queue's state machine: not while the metered half is awaited,
    /// unless the window closes the gate whatever the network is.
    package var isSettled: Bool { !awaitingMeteredAnswer || outsideWindow }

    /// The window wins over the metered network when both hold: it says when the downloads resume.
    package var closedBecause: GateReason? {
        if outsideWindow { return .outsideWindow }
        return metered ? .metered : nil
    }

    /// When downloads held by the window resume, in Unix milliseconds.
    package var windowOpensAt: Int64? { outsideWindow ? nextWindowChange : nil }
}
