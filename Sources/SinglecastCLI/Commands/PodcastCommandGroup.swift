extension Singlecastctl {
    /// The subscription commands, listed under `PODCASTS SUBCOMMANDS:` in the root help.
    static let podcastCommands = CommandGroup(
        name: "Podcasts",
        subcommands: [
            SubscribeCommand.self, UnsubscribeCommand.self, PodcastsCommand.self, ShowPodcastCommand.self,
            EpisodesCommand.self,
            ShowEpisodeCommand.self,
            InboxCommand.self, RefreshCommand.self, SetCommand.self, DownloadLatestCommand.self, DeleteCommand.self,
            RedownloadCommand.self, TrashCommand.self, PlayedCommand.self, UnplayedCommand.self, PinCommand.self,
            UnpinCommand.self,
            RulesCommand.self, ImportCommand.self, ExportCommand.self,
        ]
    )
}
