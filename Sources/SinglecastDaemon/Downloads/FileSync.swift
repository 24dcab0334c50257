import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `fsync` and `fdatasync` off the caller's thread.
///
/// A sync can block for milliseconds, longer on a busy disk. On the queue actor that would stall every other
/// download and command; on the cooperative pool (one thread per core) it would stall the whole daemon. Dispatch
/// adds threads when its workers block, and the kernel merges syncs that run at the same time into one journal
/// commit, so many files finishing together cost little more than one.
enum FileSync {
    /// `fsync(fd)`: data and metadata. Returns 0 or the `errno`.
    static func file(_ fd: Int32) async -> Int32 {
        await offload { fsync(fd) == 0 ? 0 : errno }
    }

    /// `fdatasync(fd)`: data, and metadata only as far as reading the data back needs. Returns 0 or the `errno`.
    static func data(_ fd: Int32) async -> Int32 {
        await offload { fdatasync(fd) == 0 ? 0 : errno }
    }

    /// Makes renames into each directory durable. Failures are ignored: the rename already happened, and a
    /// directory that cannot be opened cannot be synced any other way.
    static func directories(_ paths: Set<String>) async {
        await withTaskGroup(of: Void.self) { group in
            for path in paths {
                group.addTask {
                    _ = await offload {
                        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                        if fd >= 0 {
                            _ = fsync(fd)
                            close(fd)
                        }
                        return Int32(0)
                    }
                }
            }
        }
    }

    /// Serial queues taken in turn. Dispatch's global queues on Linux run about one thread per core and do not
    /// notice a thread blocked in `fsync`, so a few syncs would hold up every other offloaded call; each serial
    /// queue gets a thread of its own when it has work.
    private static let lanes = (0..<8).map { DispatchQueue(label: "singlecast.file-sync.\($0)") }
    private static let nextLane = Atomic<Int>(0)

    private static func offload<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
        let lane = lanes[nextLane.add(1, ordering: .relaxed).oldValue % lanes.count]
        return await withCheckedContinuation { continuation in
            lane.async { continuation.resume(returning: work()) }
        }
    }
}
