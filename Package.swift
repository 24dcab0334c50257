// swift-tools-version: 6.0
import PackageDescription

// The release build's code layout (docs/ARCHITECTURE.md, Memory). The kernel maps up to 64 KiB of the page cache
// around each page of code a thread runs, so where the functions a daemon runs lie decides how much of the executable
// is resident: singlecastd's are listed in link/singlecastd.order (scripts/link-order writes it), and lld puts them
// side by side at the start of .text. Each Swift function is compiled into a section of its own so that it can be
// moved; `pack-relative-relocs` (glibc 2.36, see debian/control) replaces the 1 MB of relocations the loader reads
// at each start with 9 KB.
let codeLayout: [SwiftSetting] = [
    .unsafeFlags(["-Xfrontend", "-function-sections"], .when(platforms: [.linux], configuration: .release))
]
let daemonLinkLayout: [LinkerSetting] = [
    .unsafeFlags(
        [
            "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
            "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/link/singlecastd.order",
            // The list names the functions of one build; those gone since are skipped without a word.
            "-Xlinker", "--no-warn-symbol-ordering",
            // Swift's private helpers have no symbol to list; this script puts them all beside the listed code.
            "-Xlinker", "-T", "-Xlinker", "\(Context.packageDirectory)/link/singlecastd.ld",
            // The static Swift runtime links executables with -export-dynamic, which put 11,750 of our modules'
            // symbols in the dynamic symbol table, searched first for every symbol each library binds: 1 MiB resident.
            // Nothing looks them up (the runtime's own dlsym targets are in its archives, hidden by --exclude-libs).
            "-Xlinker", "--no-export-dynamic",
        ],
        .when(platforms: [.linux], configuration: .release)
    )
]

let package = Package(
    name: "singlecast",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "singlecastd", targets: ["singlecastd"]),
        .executable(name: "singlecastctl", targets: ["singlecastctl"]),
        .executable(name: "singlecast-feed", targets: ["singlecast-feed"]),
    ],
    targets: [
        // C libraries from Debian. Each is imported by exactly one Swift module.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // Title filters written as regular expressions (`/…/`): PCRE2 reports where a pattern is wrong.
        .systemLibrary(name: "CPCRE2", pkgConfig: "libpcre2-8", providers: [.apt(["libpcre2-dev"])]),
        .systemLibrary(name: "CMagic", pkgConfig: "libmagic", providers: [.apt(["libmagic-dev"])]),
        // QR codes of the personal feeds' URLs, for a phone to scan.
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // The optional HTTP listener (personal feeds, the web view): HTTP parsing stays in libmicrohttpd.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // Glibc declarations Swift cannot see without _GNU_SOURCE (struct ucred).
        .target(name: "CPosix", cSettings: [.define("_GNU_SOURCE")]),

        // Text and thread helpers the daemon's modules share in place of Foundation's NSString layer: they
        // import FoundationEssentials only, which keeps ICU and CoreFoundation out of singlecastd.
        .target(name: "SinglecastSupport", dependencies: ["CPosix"], swiftSettings: codeLayout),
        .target(name: "SinglecastProtocol", dependencies: ["SinglecastSupport"], swiftSettings: codeLayout),
        .target(name: "SinglecastStore", dependencies: ["CSQLite", "SinglecastSupport"], swiftSettings: codeLayout),
        .target(
            name: "SinglecastDaemon",
            dependencies: [
                "SinglecastProtocol", "SinglecastStore", "SinglecastHTTP", "SinglecastFeeds", "SinglecastSupport",
                "CSystemd", "CCurl", "CMagic", "CPCRE2", "CPosix", "CMicroHTTPD", "CQRencode",
            ],
            // The web view's page, script and style sheet, compiled in as byte arrays (`PackageResources`).
            resources: [.embedInCode("Web/Page")],
            swiftSettings: codeLayout
        ),
        // FoundationEssentials only, like the daemon: local times come from the C library, not ICU. Support gives it
        // the daemon's text helpers and named threads in place of Foundation's.
        .target(name: "SinglecastCLI", dependencies: ["SinglecastProtocol", "SinglecastSupport"]),
        .target(
            name: "SinglecastHTTP",
            dependencies: ["CCurl", "CPosix", "SinglecastSupport"],
            swiftSettings: codeLayout
        ),
        // Loopback peers (nginx, a python3 fault server) that test targets share.
        .target(name: "SinglecastTestServers", dependencies: ["CPosix"], resources: [.copy("Resources")]),
        .executableTarget(
            name: "singlecastd",
            dependencies: ["SinglecastDaemon"],
            swiftSettings: codeLayout,
            linkerSettings: daemonLinkLayout
        ),
        .executableTarget(name: "singlecastctl", dependencies: ["SinglecastCLI"]),
        // Pure feed and OPML parsing (a byte-level XML reader of its own); FoundationEssentials only.
        .target(name: "SinglecastFeeds", dependencies: ["SinglecastSupport"], swiftSettings: codeLayout),
        // Developer tool: parse a feed file and print JSON (also podcastparser's shape, for scripts/conformance).
        .executableTarget(name: "singlecast-feed", dependencies: ["SinglecastFeeds"]),

        .testTarget(name: "SinglecastSupportTests", dependencies: ["SinglecastSupport"]),
        .testTarget(name: "SinglecastProtocolTests", dependencies: ["SinglecastProtocol"]),
        .testTarget(name: "SinglecastStoreTests", dependencies: ["SinglecastStore"]),
        .testTarget(
            name: "SinglecastDaemonTests",
            dependencies: [
                "SinglecastDaemon", "SinglecastProtocol", "SinglecastStore", "SinglecastHTTP", "SinglecastTestServers",
            ]
        ),
        .testTarget(
            name: "SinglecastCLITests",
            dependencies: ["SinglecastCLI", "SinglecastProtocol", "SinglecastSupport"]
        ),
        .testTarget(name: "SinglecastHTTPTests", dependencies: ["SinglecastHTTP", "SinglecastTestServers"]),
        .testTarget(name: "SinglecastFeedsTests", dependencies: ["SinglecastFeeds"]),
        // Spawns the built singlecastd/singlecastctl binaries; depends on them so `swift test` builds them.
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["singlecastd", "singlecastctl", "SinglecastProtocol", "SinglecastTestServers"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
