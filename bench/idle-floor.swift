// The floor under an idle Swift daemon on Linux, for bench/daemon's idle CPU figures.
//
// A program that has run one task on the global executor and then only waits. From the first task on, libdispatch's
// worker-pool monitor (a timer on its manager queue, src/event/workqueue.c in swift-corelibs-libdispatch) wakes once
// a second for as long as the process lives, so no Swift program that uses concurrency idles below this one.
// singlecastd's idle CPU is measured beside it, the same way, in the same window.

#if canImport(Glibc)
import Glibc
#endif

@main
struct IdleFloor {
    static func main() async {
        await Task.detached {}.value
        print("ready")
        fflush(stdout)
        await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
    }
}
