#if canImport(Glibc)
import Glibc
#endif

/// Where the CLI writes text: standard output and error in the binary, string buffers in tests.
package protocol TextOutput: Sendable {
    /// Writes `text` at once, without buffering, so `watch` lines appear as events arrive.
    func write(_ text: String)
    /// Whether the output is a terminal; colour is used only then.
    var isTerminal: Bool { get }
    /// Columns of the terminal, when known.
    var terminalColumns: Int? { get }
}

extension TextOutput {
    package var isTerminal: Bool { false }
    package var terminalColumns: Int? { nil }
}

/// A file descriptor such as standard output.
package struct FileDescriptorOutput: TextOutput {
    package let fileDescriptor: Int32

    package init(fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

    package func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fileDescriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                // The reader went away (e.g. `| head`); there is nobody left to tell.
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }

    package var isTerminal: Bool { isatty(fileDescriptor) != 0 }

    package var terminalColumns: Int? {
        guard isTerminal else { return nil }
        var size = winsize()
        guard ioctl(fileDescriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}

extension TextOutput where Self == FileDescriptorOutput {
    package static var standardOutput: FileDescriptorOutput { FileDescriptorOutput(fileDescriptor: STDOUT_FILENO) }
    package static var standardError: FileDescriptorOutput { FileDescriptorOutput(fileDescriptor: STDERR_FILENO) }
}

/// Minimal terminal styling: bold, and only where it cannot end up in a file or a pipe.
package struct TextStyle: Hashable, Sendable {
    package var isEnabled: Bool

    package init(isEnabled: Bool) { self.isEnabled = isEnabled }

    /// Enabled when `output` is a terminal, `TERM` is not `dumb` (swift-format's rule) and `NO_COLOR` is unset
    /// or empty (no-color.org).
    package init(output: some TextOutput, environment: [String: String]) {
        isEnabled =
            output.isTerminal && environment["TERM"] != "dumb" && (environment["NO_COLOR"] ?? "").isEmpty
    }

    package static let plain = TextStyle(isEnabled: false)

    package func bold(_ text: String) -> String {
        isEnabled ? "\u{1B}[1m\(text)\u{1B}[0m" : text
    }
}
