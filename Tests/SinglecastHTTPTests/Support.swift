import Foundation
import SinglecastHTTP
import SinglecastTestServers
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` with a started engine and stops it afterwards, also when `body` throws.
func withEngine<T>(_ body: (HTTPEngine) async throws -> T) async throws -> T {
    let engine = try HTTPEngine()
    engine.start()
    do {
        let result = try await body(engine)
        await engine.stop()
        return result
    } catch {
        await engine.stop()
        throw error
    }
}

/// A file opened `O_RDWR | O_CREAT` in a fresh temporary directory, closed and removed on release.
final class TestFile: Sendable {
    let directory: TemporaryDirectory
    let path: String
    let descriptor: Int32

    init(_ name: String = "episode.mp3.part", in directory: TemporaryDirectory? = nil) throws {
        self.directory = try directory ?? TemporaryDirectory(prefix: "singlecast-http-test")
        path = self.directory.file(name)
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw TestServerError("open \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(descriptor) }

    /// Replaces the contents with `data`.
    func write(_ data: Data) throws {
        try data.write(to: URL(fileURLWithPath: path))
    }

    var contents: Data { FileManager.default.contents(atPath: path) ?? Data() }

    var size: Int64 {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : -1
    }

    func request(
        _ url: String,
        resumeOffset: Int64 = 0,
        etag: String? = nil,
        lastModified: String? = nil,
        expectedTotal: Int64? = nil,
        options: TransferOptions = TransferOptions(userAgent: "singlecast-tests")
    ) -> TransferRequest {
        TransferRequest(
            url: url,
            resumeOffset: resumeOffset,
            etag: etag,
            lastModified: lastModified,
            expectedTotal: expectedTotal,
            fileDescriptor: descriptor,
            options: options
        )
    }
}

/// Collects progress reports from the engine thread.
final class ProgressLog: Sendable {
    private let reports = Mutex<[TransferProgress]>([])

    var callback: @Sendable (TransferProgress) -> Void {
        { [self] progress in reports.withLock { $0.append(progress) } }
    }

    var all: [TransferProgress] { reports.withLock { $0 } }
}

/// The parts of an outcome the tests compare.
enum Ending: Equatable, CustomStringConvertible {
    case completed(status: Int, resumed: Bool, bytesInFile: Int64)
    case rangeNotSatisfiable
    case httpError(Int)
    case failed(TransferError.Code, bytesInFile: Int64)

    init(_ outcome: TransferOutcome) {
        switch outcome {
        case .completed(let response, let bytes):
            self = .completed(status: response.status, resumed: response.resumed, bytesInFile: bytes)
        case .rangeNotSatisfiable: self = .rangeNotSatisfiable
        case .httpError(let response): self = .httpError(response.status)
        case .failed(let error, _, let bytes): self = .failed(error.code, bytesInFile: bytes)
        }
    }

    var description: String {
        switch self {
        case .completed(let status, let resumed, let bytes): "completed(\(status), resumed: \(resumed), \(bytes) bytes)"
        case .rangeNotSatisfiable: "rangeNotSatisfiable"
        case .httpError(let status): "httpError(\(status))"
        case .failed(let code, let bytes): "failed(\(code.rawValue), \(bytes) bytes)"
        }
    }
}

extension TransferOutcome {
    var response: TransferResponse? {
        switch self {
        case .completed(let response, _), .rangeNotSatisfiable(let response), .httpError(let response): response
        case .failed(_, let response, _): response
        }
    }

    var error: TransferError? {
        if case .failed(let error, _, _) = self { return error }
        return nil
    }
}

/// Seconds since `start`, for lower-bound checks and log lines.
func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// A flag one task sets and another reads.
final class Flag: Sendable {
    private let value = Atomic(false)

    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// A task executor that runs its jobs on a queue of its own, except while held: then it keeps them until
/// ``goOn()``. A task that prefers it cannot run again while it is held, whatever it waits for.
final class HeldExecutor: TaskExecutor, Sendable {
    private let queue = DispatchQueue(label: "held-executor")
    private let state = Mutex((held: false, kept: [UnownedJob]()))

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let run = state.withLock { state in
            if state.held { state.kept.append(job) }
            return !state.held
        }
        if run { queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) } }
    }

    func hold() { state.withLock { $0.held = true } }

    func goOn() {
        let kept = state.withLock { state in
            state.held = false
            defer { state.kept = [] }
            return state.kept
        }
        for job in kept { queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) } }
    }
}
