extension Singlecastctl {
    /// The subscription commands, listed under `PODCASTS SUBCOMMANDS:` in the root help.
    static let podcastCommands = CommandGroup(
        name: "Podcasts",
        subcommands: [
            SubscribeCommand.self, UnsubscribeCommand.self, PodcastsCommand.self, EpisodesCommand.self,
            RefreshCommand.self, SetCommand.self, DownloadLatestCommand.self, ImportCommand.self, ExportCommand.self,
        ]
    )
}
