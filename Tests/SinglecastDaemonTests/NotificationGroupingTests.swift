import SinglecastDaemon
import Testing

/// Notifications that arrive close together become one per kind (issue: 30 failures made 30 popups).
@Suite struct NotificationGroupingTests {
    typealias Name = NotificationGrouping.DownloadName
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func downloadsCompletedTogetherAreOneNotification() {
        var grouping = NotificationGrouping()
        for index in 1...12 {
            grouping.receive(.completed(Name(podcast: "Harbour", episode: "Tide \(index).mp3")), at: at(index * 100))
        }
        // Nothing shows while events keep coming.
        #expect(grouping.due(at: at(1300)) == [])
        #expect(grouping.deadline == at(1200) + NotificationGrouping.quiet)
        let shown = grouping.due(at: at(3200))
        #expect(
            shown == [
                DesktopNotification(
                    summary: "12 downloads completed",
                    body:
                        "Harbour: Tide 1.mp3\nHarbour: Tide 2.mp3\nHarbour: Tide 3.mp3\nHarbour: Tide 4.mp3\nand 8 more",
                    icon: "document-save"
                )
            ]
        )
        #expect(grouping.deadline == nil)
        #expect(grouping.due(at: at(60_000)) == [])
    }

    @Test func failuresNameTheEpisodeAndSayWhyInWords() {
        var grouping = NotificationGrouping()
        let reason = "the server answered HTTP 404 for https://feeds.example.com/7.mp3"
        grouping.receive(.failed(Name(podcast: "Harbour", episode: "Low tide.mp3"), reason: reason), at: at(0))
        grouping.receive(.failed(Name(podcast: nil, episode: "talk.ogg"), reason: nil), at: at(500))
        grouping.receive(.failed(Name(podcast: "Dune", episode: "Sand.mp3"), reason: "the disk is full"), at: at(900))
        let shown = grouping.due(at: at(2900))
        #expect(
            shown == [
                DesktopNotification(
                    summary: "3 downloads failed",
                    body: "Harbour: Low tide.mp3: \(reason)\ntalk.ogg\nDune: Sand.mp3: the disk is full",
                    icon: "dialog-error"
                )
            ]
        )
    }

    @Test func eventsAQuietGapApartAreSeparateNotifications() {
        var grouping = NotificationGrouping()
        grouping.receive(.completed(Name(podcast: nil, episode: "a.mp3")), at: at(0))
        #expect(grouping.due(at: at(1999)) == [])
        #expect(grouping.due(at: at(2000)).map(\.summary) == ["Download complete"])
        grouping.receive(.completed(Name(podcast: nil, episode: "b.mp3")), at: at(5000))
        #expect(grouping.due(at: at(7000)).map(\.body) == ["b.mp3"])
    }

    /// A steady trickle (one event a second) would never leave a quiet gap; it still shows after `longest`.
    @Test func aSteadyStreamStillShowsAfterTheLongestWait() {
        var grouping = NotificationGrouping()
        var shown: [DesktopNotification] = []
        for second in 0..<15 {
            grouping.receive(.completed(Name(podcast: nil, episode: "\(second).mp3")), at: at(second * 1000))
            shown += grouping.due(at: at(second * 1000))
        }
        #expect(shown.map(\.summary) == ["11 downloads completed"])
        #expect(grouping.flush().map(\.summary) == ["4 downloads completed"])
    }

    @Test func kindsStaySeparateAndNewEpisodesAddUpPerPodcast() {
        var grouping = NotificationGrouping()
        grouping.receive(.newEpisodes(podcast: "Harbour Lights", count: 2), at: at(0))
        grouping.receive(.failed(Name(podcast: nil, episode: "x.mp3"), reason: "timed out"), at: at(10))
        grouping.receive(.newEpisodes(podcast: "Dune", count: 1), at: at(20))
        grouping.receive(.newEpisodes(podcast: "Harbour Lights", count: 1), at: at(30))
        grouping.receive(.completed(Name(podcast: nil, episode: "y.mp3")), at: at(40))
        #expect(
            grouping.flush() == [
                DesktopNotification(summary: "Download complete", body: "y.mp3", icon: "document-save"),
                DesktopNotification(summary: "Download failed", body: "x.mp3: timed out", icon: "dialog-error"),
                DesktopNotification(
                    summary: "4 new episodes",
                    body: "Harbour Lights: 3 new episodes\nDune: 1 new episode",
                    icon: "audio-x-generic"
                ),
            ]
        )
    }

    @Test func theNameComesFromThePodcastFolderBelowTheDownloadDirectory() {
        let directory = "/home/me/Podcasts"
        #expect(
            Name(file: "/home/me/Podcasts/Harbour/2026-11-29 Low tide.mp3", downloadDirectory: directory)
                == Name(podcast: "Harbour", episode: "2026-11-29 Low tide.mp3")
        )
        #expect(
            Name(file: "/home/me/Podcasts/talk.ogg", downloadDirectory: directory)
                == Name(podcast: nil, episode: "talk.ogg")
        )
        #expect(
            Name(file: "/home/me/PodcastsOld/Harbour/a.mp3", downloadDirectory: directory)
                == Name(podcast: nil, episode: "a.mp3")
        )
        #expect(
            Name(file: "/home/me/Podcasts/Harbour/2026/a.mp3", downloadDirectory: directory)
                == Name(podcast: "Harbour", episode: "a.mp3")
        )
        #expect(Name(file: "/srv/a.mp3", downloadDirectory: nil) == Name(podcast: nil, episode: "a.mp3"))
        // A folder and a name that begin with a combining mark: cut at the slashes' bytes.
        #expect(
            Name(file: "/home/me/Podcasts/\u{301}Harbour/\u{301}a.mp3", downloadDirectory: directory)
                == Name(podcast: "\u{301}Harbour", episode: "\u{301}a.mp3")
        )
    }
}
