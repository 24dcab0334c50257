import SinglecastStore
import Testing

@testable import SinglecastDaemon

/// A command that leaves a download as it is says why, and what to use instead.
@Suite struct UnchangedDownloadTests {
    typealias Machine = DownloadQueueStateMachine

    @Test func eachNoOpSaysWhyAndWhatToUseInstead() {
        #expect(Machine.whyUnchanged(.resume, id: 1, state: .completed) == "download 1 is completed; use redownload")
        #expect(Machine.whyUnchanged(.resume, id: 2, state: .active) == "download 2 is running already")
        #expect(Machine.whyUnchanged(.resume, id: 3, state: .queued) == "download 3 is queued already")
        #expect(Machine.whyUnchanged(.resume, id: 4, state: .failed) == "download 4 failed; use retry")
        #expect(Machine.whyUnchanged(.pause, id: 5, state: .paused) == "download 5 is paused already; use resume")
        #expect(Machine.whyUnchanged(.pause, id: 6, state: .completed) == "download 6 is completed; nothing to pause")
        #expect(Machine.whyUnchanged(.pause, id: 7, state: .failed) == "download 7 failed; use retry or cancel")
        #expect(Machine.whyUnchanged(.retry, id: 8, state: .paused) == "download 8 is paused; use resume")
        #expect(Machine.whyUnchanged(.retry, id: 9, state: .completed) == "download 9 is completed; use redownload")
        #expect(Machine.whyUnchanged(.retry, id: 10, state: .active) == "download 10 is running already")
    }
}
