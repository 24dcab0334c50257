import FoundationEssentials
import SinglecastCLI

#if canImport(Glibc)
import Glibc
#endif

/// `singlecastctl`: everything lives in ``SinglecastCLI``; this only connects it to the process.
@main
struct Entrypoint {
    static func main() async {
        exit(
            await CLI.main(
                arguments: CommandLine.arguments.dropFirst(),
                environment: ProcessInfo.processInfo.environment,
                stdout: .standardOutput,
                stderr: .standardError
            )
        )
    }
}
