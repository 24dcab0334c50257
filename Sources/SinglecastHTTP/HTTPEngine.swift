import CCurl
import FoundationEssentials
import SinglecastSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `curl_global_init` must run once per process before any other libcurl call; a global is initialised exactly once,
/// thread-safely, on first use.
private let curlGlobalInit = CURLResult(curl_global_init(Int(CURL_GLOBAL_DEFAULT)))

/// A `CURLcode` that may cross threads.
private struct CURLResult: Sendable {
    let rawValue: UInt32
    init(_ code: CURLcode) { rawValue = code.rawValue }
    var code: CURLcode { CURLcode(rawValue: rawValue) }
}

/// Downloads files over HTTP(S) with one libcurl multi handle driven by one dedicated thread.
///
/// Every transfer streams its body straight into a file descriptor with `pwrite`, following the rules of
/// ``ResponseBodyPolicy``: a resumed transfer appends only a `206` that starts exactly at the resume offset, a `200`
/// rewrites the file from zero, and error pages are never written. Connections are reused across transfers (one
/// connection cache, HTTP/2 multiplexing when the server offers it).
///
/// The thread sleeps in `curl_multi_poll`; ``transfer(_:progress:)``, cancellation, ``setSpeedLimit(_:)`` and
/// ``stop()`` queue a command and wake it with `curl_multi_wakeup`, which libcurl documents as callable from any
/// thread. The multi handle and every easy handle are otherwise touched only by that thread.
///
/// - Important: Call ``start()`` once and ``stop()`` before dropping the engine: the running thread keeps it alive.
package final class HTTPEngine: Sendable {
    private enum Command: Sendable {
        case add(Submission)
        case cancel(Int)
        case speedLimit(Int64?)
    }

    /// A transfer on its way to the engine thread; only `Sendable` values cross.
    private struct Submission: Sendable {
        var id: Int
        var request: TransferRequest
        var progress: @Sendable (TransferProgress) -> Void
        var continuation: CheckedContinuation<TransferOutcome, Never>
    }

    /// Where a transfer is, as far as cancellation is concerned.
    private enum Phase {
        /// `transfer` began but has not queued the transfer yet.
        case created
        /// Cancelled before it was queued; the submission completes it at once.
        case cancelledEarly
        /// Waiting for its ``TransferRequest/admission`` (a fetch slot); kept here, so that a cancellation can take
        /// it out of line and complete it.
        case admitting(Submission)
        /// Queued or running on the engine thread; cancellation must go through a command.
        case submitted
    }

    private struct State {
        var commands: [Command] = []
        var phases: [Int: Phase] = [:]
        var nextID = 0
        var started = false
        var stopping = false
        /// The loop exited and the multi handle is gone: nothing may call libcurl with it any more.
        var finished = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []

        /// Queues `command` for the engine thread and wakes it, unless a command queued before is still there: the
        /// wake-up of the one that found the queue empty is still to come, or the thread is on its way to take the
        /// queue, since it takes all of it at once. One wake-up (a write to libcurl's wake-up pipe, under the lock)
        /// per command made the submitting threads and the engine's wait for the lock: 4 % of a refresh's CPU.
        mutating func enqueue(_ command: Command, waking multi: UnsafeMutableRawPointer) {
            let wasEmpty = commands.isEmpty
            commands.append(command)
            if wasEmpty && !finished { curl_multi_wakeup(multi) }
        }
    }

    /// The `CURLM *`. Used by the loop thread only, except `curl_multi_wakeup`, which is called under the state lock
    /// and only while `finished` is false.
    private nonisolated(unsafe) let multi: UnsafeMutableRawPointer
    private let state = Mutex(State())
    /// Memory files of finished fetches that hold nothing, for the next fetches (``MemoryFile``).
    let spareMemoryFiles = SpareDescriptors(capacity: 16)

    /// Creates the multi handle.
    ///
    /// - Throws: ``TransferError`` with code ``TransferError/Code/engineUnavailable`` when libcurl cannot be set up.
    package init() throws {
        let initResult = curlGlobalInit.code
        guard initResult == CURLE_OK else {
            throw TransferError(
                code: .engineUnavailable,
                message: "libcurl could not be initialised (curl_global_init: "
                    + "\(String(cString: curl_easy_strerror(initResult)))). Reinstall libcurl4 and its TLS library.",
                curlCode: Int32(bitPattern: initResult.rawValue)
            )
        }
        guard let multi = curl_multi_init() else {
            throw TransferError(
                code: .engineUnavailable,
                message: "libcurl could not create a multi handle (curl_multi_init failed); the system is probably "
                    + "out of memory."
            )
        }
        self.multi = multi
    }

    deinit {
        // The loop thread holds the engine while it runs, so here it either never started or has finished.
        if !state.withLock({ $0.finished }) {
            curl_multi_cleanup(multi)
        }
    }

    /// Starts the engine thread. Transfers submitted earlier wait for it; calling it again does nothing.
    package func start() {
        let shouldStart = state.withLock { state in
            guard !state.started, !state.stopping, !state.finished else { return false }
            state.started = true
            return true
        }
        guard shouldStart else { return }
        startThread(name: "singlecast-http") { [self] in run() }
    }

    /// Cancels every transfer (each returns ``TransferOutcome/failed(_:response:bytesInFile:)`` with
    /// ``TransferError/Code/cancelled``), waits for the engine thread to exit and releases libcurl's handles.
    package func stop() async {
        let pending: [Command]? = state.withLock { state in
            guard !state.started, !state.finished else { return nil }
            // Never started: no thread to wait for.
            state.stopping = true
            state.finished = true
            curl_multi_cleanup(multi)
            defer { state.commands = [] }
            return state.commands
        }
        if let pending {
            HTTPEngine.completeUnstarted(pending)
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.finished { return true }
                state.stopping = true
                state.stopWaiters.append(continuation)
                curl_multi_wakeup(multi)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Runs one transfer to its end.
    ///
    /// Cancelling the calling task removes the transfer and returns ``TransferOutcome/failed(_:response:bytesInFile:)``
    /// with ``TransferError/Code/cancelled``; the bytes written so far stay valid.
    ///
    /// - Parameters:
    ///   - request: What to fetch and where to write it.
    ///   - progress: Called on the engine thread at most every ~100 ms while body bytes arrive, and once at the end.
    ///     It must return quickly: every transfer shares that thread.
    /// - Returns: How the transfer ended; it never throws.
    package func transfer(
        _ request: TransferRequest,
        progress: @escaping @Sendable (TransferProgress) -> Void
    ) async -> TransferOutcome {
        // A request that makes its descriptor as it starts (``TransferRequest/prepare``) has none to check yet.
        if let error = HTTPEngine.validate(request) ?? (request.prepare == nil ? Self.descriptorProblem(request) : nil)
        {
            return .failed(error, response: nil, bytesInFile: max(0, request.resumeOffset))
        }
        let id = state.withLock { state in
            state.nextID += 1
            state.phases[state.nextID] = .created
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<TransferOutcome, Never>) in
                let submission = Submission(id: id, request: request, progress: progress, continuation: continuation)
                let next: Next = state.withLock { state in
                    if case .cancelledEarly? = state.phases[id] {
                        state.phases[id] = nil
                        return .refused(Self.cancelled(request, "the transfer was cancelled"))
                    }
                    if state.stopping || state.finished {
                        state.phases[id] = nil
                        return .refused(Self.cancelled(request, Self.stopped))
                    }
                    if let admission = request.admission {
                        state.phases[id] = .admitting(submission)
                        return .admit(admission)
                    }
                    return start(submission, in: &state).map(Next.refused) ?? .started
                }
                switch next {
                case .started:
                    break
                case .refused(let outcome):
                    continuation.resume(returning: outcome)
                case .admit(let admission):
                    // Outside the lock, which starting takes: here when the slot is free now, else on the thread
                    // that frees one.
                    if admission.request(start: { [self] in startAdmitted(id) }) { startAdmitted(id) }
                }
            }
        } onCancel: {
            let waiting: Submission? = state.withLock { state in
                switch state.phases[id] {
                case .created:
                    state.phases[id] = .cancelledEarly
                case .submitted:
                    state.enqueue(.cancel(id), waking: multi)
                case .admitting(let submission):
                    state.phases[id] = nil
                    return submission
                case .cancelledEarly, nil:
                    break
                }
                return nil
            }
            if let waiting {
                // Out of line; were it granted meanwhile, its slot goes back when the fetch ends (``FetchLimiter``).
                waiting.request.admission?.withdraw()
                waiting.continuation.resume(returning: Self.cancelled(waiting.request, FetchLimiter.cancelledInLine))
            }
        }
    }

    /// What `transfer` does once its transfer is registered.
    private enum Next {
        case started
        case refused(TransferOutcome)
        case admit(FetchAdmission)
    }

    /// Why the transfers the engine's stop ended, or that came after it, were cancelled.
    private static let stopped = "the download engine stopped"

    private static func cancelled(_ request: TransferRequest, _ reason: String) -> TransferOutcome {
        .failed(.cancelled(request.url, reason: reason), response: nil, bytesInFile: request.resumeOffset)
    }

    /// Prepares `submission` (``TransferRequest/prepare``) and queues it for the engine thread; the outcome to
    /// complete it with instead when it cannot start.
    private func start(_ submission: Submission, in state: inout State) -> TransferOutcome? {
        var submission = submission
        if let prepare = submission.request.prepare {
            submission.request.prepare = nil
            if let error = prepare(&submission.request) {
                state.phases[submission.id] = nil
                return .failed(error, response: nil, bytesInFile: submission.request.resumeOffset)
            }
        }
        state.phases[submission.id] = .submitted
        state.enqueue(.add(submission), waking: multi)
        return nil
    }

    /// Starts transfer `id`, whose admission was granted: on the thread that freed the slot (the engine's, when a
    /// fetch's last transfer ended), or the caller's when one was free. Nothing when it was cancelled meanwhile.
    private func startAdmitted(_ id: Int) {
        let refused: (Submission, TransferOutcome)? = state.withLock { state in
            guard case .admitting(let submission)? = state.phases[id] else { return nil }
            if state.stopping || state.finished {
                state.phases[id] = nil
                return (submission, Self.cancelled(submission.request, Self.stopped))
            }
            return start(submission, in: &state).map { (submission, $0) }
        }
        if let (submission, outcome) = refused { submission.continuation.resume(returning: outcome) }
    }

    /// Sets the total download speed of all transfers together, in bytes per second (`nil`: unlimited).
    ///
    /// The limit is split evenly between the running transfers and re-split whenever one starts or ends; a change
    /// applies to running transfers at once. Each share is a token bucket (``ReceiveRateLimiter``) that pauses its
    /// transfer while it is empty, so the rate stays even: at most a tenth of a second's worth, or one 16 KiB chunk,
    /// ahead. The low-speed timeout is relaxed for a share below ``TransferOptions/lowSpeedLimit``, so the limit
    /// never makes a transfer fail as stalled.
    package func setSpeedLimit(_ bytesPerSecond: Int64?) {
        let limit = bytesPerSecond.map { max(1, $0) }
        state.withLock { state in state.enqueue(.speedLimit(limit), waking: multi) }
    }

    // MARK: Validation

    private static func validate(_ request: TransferRequest) -> TransferError? {
        // Redacted only for a message: every transfer passes here, and redacting was half of this check's time.
        var url: String { redactedURL(request.url) }
        guard let scheme = URLText.scheme(of: request.url), URLText.containsSchemeSeparator(request.url) else {
            return TransferError(
                code: .invalidURL,
                message: "The URL \"\(url)\" has no scheme; downloads need an absolute http:// or https:// URL."
            )
        }
        guard URLText.isFetched(scheme: scheme) else {
            return TransferError(
                code: .schemeNotAllowed,
                message: "The URL \(url) uses '\(scheme)', but only http and https URLs are downloaded. "
                    + "Ask the publisher for an https link."
            )
        }
        if request.options.requireHTTPS && scheme != "https" {
            return TransferError(
                code: .schemeNotAllowed,
                message: "The URL \(url) is plain http, but HTTPS is required. Use the https:// form of the link "
                    + "or turn off the HTTPS requirement."
            )
        }
        if let bad = request.headers.first(where: { RequestHeader.problem($0) != nil }) {
            return TransferError(
                code: .invalidRequest,
                message: "The request header \"\(bad.prefix(60))\" is not a single \"Name: value\" line; fix the "
                    + "header configuration."
            )
        }
        guard request.resumeOffset >= 0 else {
            return TransferError(
                code: .invalidRequest,
                message: "The resume offset \(request.resumeOffset) for \(url) is negative; resume from the size of "
                    + "the partial file instead."
            )
        }
        // A validator that cannot be sent (a bare CR an older version stored) cannot vouch for the bytes in the file
        // either: refusing the request would fail every attempt the same way, so the resume starts from zero.
        if request.resumeOffset > 0,
            [request.etag, request.lastModified].contains(where: {
                $0 != nil && ResponseBodyPolicy.usableValidator($0) == nil
            })
        {
            return .rangeMismatch(
                request.url,
                "the validator stored with the partial file holds a control character, so nothing can tell whether "
                    + "the server's file is still the one its bytes came from"
            )
        }
        return nil
    }

    /// Whether the request's descriptor is open.
    private static func descriptorProblem(_ request: TransferRequest) -> TransferError? {
        guard fcntl(request.fileDescriptor, F_GETFD) >= 0 else {
            return TransferError(
                code: .invalidRequest,
                message: "The file descriptor \(request.fileDescriptor) for \(redactedURL(request.url)) is not open; "
                    + "open the partial file read-write before starting the transfer.",
                systemErrno: errno
            )
        }
        return nil
    }

    private static func completeUnstarted(_ commands: [Command]) {
        for case .add(let submission) in commands {
            submission.continuation.resume(returning: cancelled(submission.request, stopped))
        }
    }

    // MARK: Engine thread

    private func run() {
        let loop = EngineLoop(multi: multi) { [self] id in
            state.withLock { _ = $0.phases.removeValue(forKey: id) }
        }
        while true {
            let (commands, stopping) = state.withLock { state in
                defer { state.commands.removeAll() }
                return (state.commands, state.stopping)
            }
            for command in commands {
                switch command {
                case .add(let submission):
                    if stopping {
                        HTTPEngine.completeUnstarted([command])
                    } else {
                        loop.add(submission.id, submission.request, submission.progress, submission.continuation)
                    }
                case .cancel(let id):
                    loop.cancel(id, reason: "the transfer was cancelled")
                case .speedLimit(let limit):
                    loop.setSpeedLimit(limit)
                }
            }
            if stopping {
                loop.cancelAll(reason: Self.stopped)
                loop.releaseHandles()
                break
            }
            loop.perform()
            // > curl_multi_poll [...] waits until activity is detected on at least one of the handles or
            // > timeout_ms has passed [...] This function can be woken up by calling curl_multi_wakeup
            if curl_multi_poll(multi, nil, 0, loop.pollTimeoutMilliseconds, nil) != CURLM_OK {
                usleep(10_000)  // e.g. CURLM_UNRECOVERABLE_POLL: never spin
            }
        }
        let (late, waiters) = state.withLock { state in
            state.finished = true
            curl_multi_cleanup(multi)
            defer {
                state.commands.removeAll()
                state.stopWaiters.removeAll()
            }
            return (state.commands, state.stopWaiters)
        }
        HTTPEngine.completeUnstarted(late)
        for waiter in waiters { waiter.resume() }
    }
}

/// The engine thread's view: the multi handle and the transfers on it.
private final class EngineLoop {
    private let multi: UnsafeMutableRawPointer
    private var active: [Int: TransferContext] = [:]
    /// No transfer is on the multi handle.
    var isIdle: Bool { active.isEmpty }
    private var speedLimit: Int64?
    private let forget: (Int) -> Void
    /// Easy handles of finished fetches, for the next ones.
    private let handles = EasyHandlePool(capacity: 16)

    init(multi: UnsafeMutableRawPointer, forget: @escaping (Int) -> Void) {
        self.multi = multi
        self.forget = forget
    }

    func add(
        _ id: Int,
        _ request: TransferRequest,
        _ progress: @escaping @Sendable (TransferProgress) -> Void,
        _ continuation: CheckedContinuation<TransferOutcome, Never>
    ) {
        guard
            let context = TransferContext.make(
                id: id,
                request: request,
                handles: handles,
                progress: progress,
                continuation: continuation
            )
        else {
            forget(id)
            return
        }
        let result = curl_multi_add_handle(multi, context.handle)
        guard result == CURLM_OK else {
            context.abandon(
                TransferError(
                    code: .engineUnavailable,
                    message: "libcurl could not start the transfer of \(redactedURL(request.url)) "
                        + "(curl_multi_add_handle: \(String(cString: curl_multi_strerror(result)))). Try again."
                )
            )
            forget(id)
            return
        }
        active[id] = context
        applySpeedLimit()
    }

    func cancel(_ id: Int, reason: String) {
        guard let context = active[id] else { return }  // already finished
        finish(context, CURLE_ABORTED_BY_CALLBACK, cancellation: .cancelled(context.request.url, reason: reason))
    }

    func cancelAll(reason: String) {
        for id in active.keys.sorted() { cancel(id, reason: reason) }
    }

    /// Cleans up the kept easy handles; called once every transfer ended, before the multi handle goes.
    func releaseHandles() { handles.drain() }

    func setSpeedLimit(_ limit: Int64?) {
        speedLimit = limit
        applySpeedLimit()
    }

    /// How long the engine thread may sleep in `curl_multi_poll`: until the first transfer paused by the speed limit
    /// may go on, else a second (a safety net: libcurl shortens the wait to its own timeouts and every command wakes
    /// the thread), or, with nothing to transfer, until a command wakes it: an idle daemon does not wake for it.
    var pollTimeoutMilliseconds: Int32 {
        guard let wait = active.values.compactMap(\.nanosecondsUntilResuming).min() else {
            return isIdle ? .max : 1000
        }
        return Int32(min(1000, max(1, (wait + 999_999) / 1_000_000)))
    }

    /// Drives every transfer as far as it can go without blocking and finishes the ones libcurl reports done.
    func perform() {
        resumeTransfers()
        var running: Int32 = 0
        curl_multi_perform(multi, &running)
        for context in active.values { context.reportPendingProgress() }
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            // > The data the returned pointer points to does not survive calling curl_multi_cleanup,
            // > curl_multi_remove_handle or curl_easy_cleanup.
            let result = ccurl_message_result(message)
            var pointer: UnsafeMutableRawPointer?
            guard ccurl_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else { continue }
            finish(Unmanaged<TransferContext>.fromOpaque(pointer).takeUnretainedValue(), result)
        }
    }

    private func finish(_ context: TransferContext, _ result: CURLcode, cancellation: TransferError? = nil) {
        curl_multi_remove_handle(multi, context.handle)
        active[context.id] = nil
        if let retry = context.finish(result, cancellation: cancellation) {
            // Same id: a cancellation on its way still finds the transfer.
            add(context.id, retry.request, retry.progress, retry.continuation)
            return
        }
        forget(context.id)
        applySpeedLimit()
    }

    private func applySpeedLimit() {
        let share = speedLimit.map { max(1, $0 / Int64(max(1, active.count))) } ?? 0
        let now = monotonicNanoseconds()
        for context in Array(active.values) {
            finishIfFailed(context, context.setReceiveSpeedLimit(share, now: now))
        }
    }

    /// Resumes the transfers the speed limit paused whose share allows more bytes by now.
    private func resumeTransfers() {
        let now = monotonicNanoseconds()
        for context in Array(active.values) where context.isPaused {
            finishIfFailed(context, context.resumeIfAllowed(now: now))
        }
    }

    private func finishIfFailed(_ context: TransferContext, _ result: CURLcode) {
        if result != CURLE_OK, active[context.id] === context { finish(context, result) }
    }
}

@available(*, unavailable)
extension EngineLoop: Sendable {}
