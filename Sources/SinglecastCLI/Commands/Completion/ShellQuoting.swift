import SinglecastSupport

/// Quoting for the generated completion scripts.
enum ShellQuoting {
    /// `'text'` for bash, zsh and fish: nothing inside is special but the quote itself.
    static func single(_ text: String) -> String {
        "'" + text.replacingEvery("'", with: #"'\''"#) + "'"
    }

    /// fish's single quotes take `\'` and `\\` as escapes, unlike POSIX shells.
    static func fish(_ text: String) -> String {
        "'" + text.replacingEvery("\\", with: #"\\"#).replacingEvery("'", with: #"\'"#) + "'"
    }
}

extension CompletionValue {
    /// The word the scripts' helpers switch on: `text`, `file`, `directory`, `podcast`, `download`, `episode`, `trashed`, or
    /// `choices:a b c`.
    var scriptWord: String {
        switch self {
        case .none: "text"
        case .choices(let words): "choices:" + words.joined(separator: " ")
        case .file: "file"
        case .directory: "directory"
        case .podcast: "podcast"
        case .download: "download"
        case .episode: "episode"
        case .trashed: "trashed"
        }
    }
}

extension CompletionNode {
    /// The path as the scripts key it: `enqueue`, or the empty string for the root.
    var key: String { path.joined(separator: " ") }

    /// Option spellings with the value each takes (`nil` for flags): `--to`, `-h`, `--help`.
    var spellings: [(word: String, value: CompletionValue?)] {
        options.flatMap { option in
            [(word: "--" + option.long, value: option.value)]
                + (option.short.map { [(word: "-" + String($0), value: option.value)] } ?? [])
        }
    }
}
