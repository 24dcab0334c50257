import SinglecastStore

extension DownloadQueueStateMachine {
    /// A download's state in the machine, carrying what exists only in that state: a pace only while bytes arrive,
    /// the names a rename found taken only while finishing. Its record's stored state is ``stored``.
    package enum Live: Equatable, Sendable {
        /// No attempt of it exists; it is stored as this (never `active`).
        case idle(Settled)
        /// Active: holds a transfer slot while its partial file is opened.
        case opening
        /// Active: holds a slot; bytes arrive at this pace.
        case transferring(Pace)
        /// Active: gave its slot back and is syncing, naming, renaming or committing. Holds the paths a rename found
        /// taken meanwhile, so that a second try never picks one again.
        case finishing(collisions: Set<String>)
        /// A command or an outcome settled it while its attempt still winds down (`holdsSlot` while the transfer is
        /// still stopping). It must not start again until the attempt ends: a pause and a resume meanwhile would run
        /// a second transfer that renames the same partial file.
        case windingDown(Settled, holdsSlot: Bool)

        /// How the record stores it.
        package var stored: DownloadRecord.State {
            switch self {
            case .idle(let state), .windingDown(let state, _): state.stored
            case .opening, .transferring, .finishing: .active
            }
        }

        /// Whether it holds a transfer slot (opening or transferring, or its stopped transfer still winding down).
        package var holdsSlot: Bool {
            switch self {
            case .opening, .transferring, .windingDown(_, holdsSlot: true): true
            case .idle, .finishing, .windingDown(_, holdsSlot: false): false
            }
        }

        /// Whether it is `active`: an attempt of it runs and no command or outcome settled it.
        package var isActive: Bool { stored == .active }
    }

    /// Every stored state but `active`, which only an attempt is.
    package enum Settled: Equatable, Sendable {
        case queued, paused, failed, completed, cancelled

        init?(_ state: DownloadRecord.State) {
            switch state {
            case .queued: self = .queued
            case .paused: self = .paused
            case .failed: self = .failed
            case .completed: self = .completed
            case .cancelled: self = .cancelled
            case .active: return nil
            }
        }

        var stored: DownloadRecord.State {
            switch self {
            case .queued: .queued
            case .paused: .paused
            case .failed: .failed
            case .completed: .completed
            case .cancelled: .cancelled
            }
        }
    }
}
