import Foundation
import SinglecastCLI
import Testing

/// The generated completion scripts, run in the real shells.
///
/// The daemon is played by a stub `singlecastctl` first on `PATH`: it prints canned `--json podcasts` and
/// `--json downloads` answers (or fails like a client without a daemon), so the tests see exactly what the
/// scripts ask at completion time and what they make of the answers.
@Suite(.serialized) struct CompletionShellTests {
    static let bashCompletion = "/usr/share/bash-completion/bash_completion"
    static let hasBash =
        FileManager.default.isExecutableFile(atPath: "/bin/bash")
        && FileManager.default.fileExists(atPath: bashCompletion)
    static let hasFish = FileManager.default.isExecutableFile(atPath: "/usr/bin/fish")
    static let hasZsh = FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh")

    /// Compact JSON as the daemon sends it; the description holds a `"title":"…"` look-alike to be ignored.
    static let podcastsJSON = #"""
        {"podcasts":[{"auto_download":{"mode":"off"},"description":"not a \"title\":\"Decoy\"","episodes":3,"id":3,"title":"Harbour Lights & Tides"},{"episodes":1,"id":5,"title":"Tides — Daily \"Ocean\" News"},{"episodes":2,"id":8,"title":"Twice"},{"episodes":2,"id":9,"title":"twice"}]}
        """#
    /// `inbox`: new episodes, then the podcasts they belong to, whose ids are not episode ids.
    static let inboxJSON = #"""
        {"episodes":[{"id":815,"podcast_id":3,"title":"Friday"},{"id":812,"podcast_id":5,"title":"Monday"}],"podcasts":[{"id":3,"title":"Harbour Lights & Tides"},{"id":5,"title":"Tides"}]}
        """#
    /// `trash`: ids are hexadecimal strings; the episode and podcast ids beside them are not offered.
    static let trashJSON = #"""
        {"files":[{"episode":{"id":812,"title":"Monday"},"id":"0badf00d","original":"/d/a.mp3"},{"id":"c0ffee42","original":"/d/b.mp3","podcast":{"id":3}}],"total_bytes":10,"use_trash":true}
        """#
    static let downloadsJSON = #"""
        {"downloads":[{"episode_id":812,"id":7,"state":"queued"},{"id":12,"podcast_id":3,"state":"paused"}]}
        """#

    /// Runs `shell arguments…` with the stub first on PATH; `daemon: false` makes the stub fail like
    /// `singlecastctl` without a daemon (exit 69, a message on stderr).
    func run(_ shell: String, _ arguments: [String], daemon: Bool = true) throws -> (stdout: String, stderr: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sc-completion-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("calls").path
        let stub = """
            #!/bin/sh
            echo "$*" >>'\(log)'
            \(daemon ? "" : "echo 'Error: singlecastd is not running' >&2; exit 69")
            case "$*" in
            *"--json podcasts") cat <<'JSON'
            \(Self.podcastsJSON)
            JSON
            ;;
            *"--json downloads") cat <<'JSON'
            \(Self.downloadsJSON)
            JSON
            ;;
            *"--json inbox") cat <<'JSON'
            \(Self.inboxJSON)
            JSON
            ;;
            *"--json trash") cat <<'JSON'
            \(Self.trashJSON)
            JSON
            ;;
            *) exit 64 ;;
            esac

            """
        let stubPath = directory.appendingPathComponent("singlecastctl").path
        try stub.write(toFile: stubPath, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stubPath)
        for shellName in CompletionCommand.Shell.allCases {
            try CompletionCommand.script(for: shellName).write(
                toFile: directory.appendingPathComponent("completion.\(shellName.rawValue)").path,
                atomically: true,
                encoding: .utf8
            )
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: shell)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = [
            "PATH": directory.path + ":/usr/bin:/bin", "HOME": directory.path, "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": directory.path, "XDG_DATA_HOME": directory.path,
        ]
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    // MARK: bash

    /// What bash offers for `line` (completed at its end) through bash-completion's `_init_completion`.
    func bash(_ line: String, daemon: Bool = true) throws -> (replies: [String], stderr: String) {
        let script = """
            source \(Self.bashCompletion)
            source ./completion.bash
            COMP_LINE=\(shellQuoted(line))
            COMP_POINT=${#COMP_LINE}
            read -ra COMP_WORDS <<<"$COMP_LINE"
            [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
            COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            _singlecastctl
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try run("/bin/bash", ["--norc", "--noprofile", "-c", script], daemon: daemon)
        return (result.stdout.split(separator: "\n").map(String.init), result.stderr)
    }

    @Test(.enabled(if: hasBash)) func bashCompletesSubcommands() throws {
        #expect(try bash("singlecastctl pa").replies == ["pause"])
        #expect(try bash("singlecastctl re").replies.sorted() == ["redownload", "refresh", "resume", "retry"])
        #expect(try bash("singlecastctl --socket /tmp/x.sock st").replies == ["status"])
    }

    @Test(.enabled(if: hasBash)) func bashCompletesOptionsAndTheirValues() throws {
        let options = try bash("singlecastctl enqueue --").replies
        for option in ["--to", "--name", "--priority", "--socket", "--json", "--help"] {
            #expect(options.contains(option), "enqueue options lack \(option): \(options)")
        }
        #expect(try bash("singlecastctl downloads --state pa").replies == ["paused"])
        #expect(try bash("singlecastctl completion ").replies.sorted() == ["bash", "fish", "zsh"])
        #expect(try bash("singlecastctl set 3 --auto al").replies == ["all-new"])
        #expect(try bash("singlecastctl subscribe https://x --auto ").replies.contains("latest:3"))
    }

    @Test(.enabled(if: hasBash)) func bashAsksTheDaemonForPodcastsAndDownloads() throws {
        #expect(try bash("singlecastctl unsubscribe Har").replies == [#"Harbour\ Lights\ \&\ Tides"#])
        #expect(
            try bash("singlecastctl episodes ").replies.sorted()
                == ["3", "5", "8", "9", #"Harbour\ Lights\ \&\ Tides"#, #"Tides\ —\ Daily\ \"Ocean\"\ News"#].sorted()
        )
        #expect(try bash("singlecastctl show ").replies.sorted() == ["12", "7"])
        #expect(try bash("singlecastctl move 7 --before 1").replies == ["12"])
    }

    /// Each command is offered the ids it takes: episodes for episode commands, not downloads or podcasts; podcasts
    /// with equal titles by their ids only.
    @Test(.enabled(if: hasBash)) func bashOffersTheIdsACommandTakes() throws {
        #expect(try bash("singlecastctl show-episode ").replies.sorted() == ["812", "815"])
        #expect(try bash("singlecastctl played 8").replies.sorted() == ["812", "815"])
        #expect(try bash("singlecastctl unsubscribe Tw").replies.isEmpty, "two podcasts are called Twice, in any case")
        #expect(try bash("singlecastctl unsubscribe 9").replies == ["9"])
        #expect(try bash("singlecastctl trash restore ").replies.sorted() == ["0badf00d", "c0ffee42"])
        #expect(try bash("singlecastctl trash restore c").replies == ["c0ffee42"])
    }

    @Test(.enabled(if: hasBash)) func bashOffersNothingAndStaysQuietWithoutADaemon() throws {
        let result = try bash("singlecastctl pause ", daemon: false)
        #expect(result.replies.isEmpty)
        #expect(result.stderr.isEmpty)
    }

    // MARK: fish

    /// What `complete -C line` lists in fish: one candidate per line, tab, description.
    func fish(_ line: String, daemon: Bool = true) throws -> (candidates: [String], stderr: String) {
        let result = try run(
            "/usr/bin/fish",
            ["--no-config", "-c", "source ./completion.fish; complete -C \(shellQuoted(line))"],
            daemon: daemon
        )
        return (
            result.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") },
            result.stderr
        )
    }

    @Test(.enabled(if: hasFish)) func fishCompletesSubcommandsOptionsAndDaemonValues() throws {
        #expect(try fish("singlecastctl pa").candidates == ["pause"])
        #expect(try fish("singlecastctl --socket /tmp/x.sock pi").candidates == ["pin", "ping"])
        #expect(try fish("singlecastctl downloads --state co").candidates == ["completed"])
        let options = try fish("singlecastctl enqueue --").candidates
        #expect(options.contains("--priority") && options.contains("--socket"), "\(options)")
        #expect(try fish("singlecastctl unsubscribe Har").candidates == ["Harbour Lights & Tides"])
        #expect(try fish("singlecastctl show ").candidates.sorted() == ["12", "7"])
        #expect(try fish("singlecastctl show-episode ").candidates.sorted() == ["812", "815"])
        // fish offers a command's positionals at every position: the actions come along with the ids.
        let trashed = try fish("singlecastctl trash restore ").candidates
        #expect(trashed.contains("0badf00d") && trashed.contains("c0ffee42") && !trashed.contains("812"), "\(trashed)")
        #expect(
            try fish("singlecastctl unsubscribe ").candidates.sorted()
                == ["3", "5", "8", "9", "Harbour Lights & Tides", #"Tides — Daily "Ocean" News"#].sorted()
        )
        #expect(try fish("singlecastctl set 3 --auto ").candidates.contains("latest:3"))
    }

    @Test(.enabled(if: hasFish)) func fishStaysQuietWithoutADaemon() throws {
        let result = try fish("singlecastctl resume ", daemon: false)
        #expect(result.candidates.filter { !$0.isEmpty }.isEmpty)
        #expect(result.stderr.isEmpty)
    }

    // MARK: zsh

    /// What the zsh function hands to compsys for `line`: `compadd`, `_describe` and `_files` are stand-ins
    /// that print what they were given, since compsys needs an interactive line editor.
    func zsh(_ line: String, daemon: Bool = true) throws -> (offered: [String], stderr: String) {
        let script = """
            compdef() { : }
            compadd() { while [[ $1 == -* && $1 != -- ]]; do shift; done; [[ $1 == -- ]] && shift; print -rl -- "$@" }
            _describe() { print -rl -- ${(P)4} }
            _files() { print -r -- "_files $*" }
            source ./completion.zsh
            words=(${(z)1})
            [[ $1 == *" " ]] && words+=("")
            CURRENT=${#words}
            _singlecastctl
            """
        let result = try run("/usr/bin/zsh", ["-f", "-c", script, "zsh", line], daemon: daemon)
        return (result.stdout.split(separator: "\n").map(String.init), result.stderr)
    }

    @Test(.enabled(if: hasZsh)) func zshCompletesSubcommandsOptionsAndDaemonValues() throws {
        #expect(try zsh("singlecastctl ").offered.contains("pause:Pause downloads."))
        #expect(try zsh("singlecastctl enqueue --to ").offered == ["_files -/"])
        #expect(try zsh("singlecastctl enqueue --p").offered.contains(#"--priority:Higher runs first."#))
        #expect(try zsh("singlecastctl downloads --state ").offered.contains("failed"))
        #expect(
            try zsh("singlecastctl set ").offered == [
                "3", "5", "8", "9", "Harbour Lights & Tides", #"Tides — Daily "Ocean" News"#,
            ]
        )
        #expect(try zsh("singlecastctl show-episode ").offered.sorted() == ["812", "815"])
        #expect(try zsh("singlecastctl trash restore ").offered.sorted() == ["0badf00d", "c0ffee42"])
        #expect(try zsh("singlecastctl set 3 --auto ").offered.contains("all-new"))
        #expect(try zsh("singlecastctl --socket /tmp/x.sock retry ").offered.sorted() == ["12", "7"])
    }

    @Test(.enabled(if: hasZsh)) func zshStaysQuietWithoutADaemon() throws {
        let result = try zsh("singlecastctl cancel ", daemon: false)
        #expect(result.offered.isEmpty)
        #expect(result.stderr.isEmpty)
    }

    // MARK: the command

    @Test func completionCommandPrintsEachScriptAndRefusesOtherShells() async throws {
        for shell in CompletionCommand.Shell.allCases {
            let run = await runCLI(["completion", shell.rawValue])
            #expect(run.status == 0)
            #expect(run.stdout == CompletionCommand.script(for: shell))
        }
        let wrong = await runCLI(["completion", "tcsh"])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.contains("The value 'tcsh' is invalid for '<shell>'"))
    }
}

/// `'text'` for a POSIX shell or fish (neither treats anything inside as special, quotes aside).
private func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
}
