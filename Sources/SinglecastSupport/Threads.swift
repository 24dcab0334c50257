import CPosix

#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` on a new detached POSIX thread named `name` (the first 15 bytes show in `ps -L` and `top -H`).
///
/// The engine, the reactor and the hook reaper each block in a system call for their whole life, so they
/// get threads of their own rather than a place in Swift's cooperative pool. Stops the process if the
/// thread cannot be created: the daemon cannot work without it.
package func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let context = Unmanaged.passRetained(Start(name, body)).toOpaque()
    var thread = pthread_t()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    let result = pthread_create(
        &thread,
        &attributes,
        { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            _ = cposix_name_current_thread(start.name)
            start.body()
            return nil
        },
        context
    )
    guard result == 0 else {
        Unmanaged<Start>.fromOpaque(context).release()
        fatalError("cannot start thread \(name): \(String(cString: strerror(result)))")
    }
}
