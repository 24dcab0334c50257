import SinglecastProtocol
import Testing

/// `watch`'s and `GET /events`' reading of topic and event names.
@Suite struct EventSelectionTests {
    @Test func everyEventNameBelongsToOneTopic() {
        var seen: Set<String> = []
        for topic in EventTopic.allCases {
            #expect(!topic.eventNames.isEmpty, "\(topic) has no events")
            for name in topic.eventNames {
                #expect(EventTopic(eventName: name) == topic)
                #expect(seen.insert(name).inserted, "\(name) in two topics")
            }
        }
        #expect(EventTopic(eventName: "downloads") == nil)
        #expect(EventTopic(eventName: "events.dropped") == nil)
    }

    @Test func absentOrEmptyListsMeanEverything() throws {
        let everything = EventSelection(topics: Set(EventTopic.allCases))
        #expect(try EventSelection(topicNames: nil, eventNames: nil) == everything)
        #expect(try EventSelection(topicNames: [], eventNames: []) == everything)
        for topic in EventTopic.allCases {
            for name in topic.eventNames { #expect(everything.admits(topic, event: name)) }
        }
        let downloads = try EventSelection(topicNames: ["downloads"], eventNames: nil)
        #expect(downloads.admits(.downloads, event: "download.progress"))
        #expect(!downloads.admits(.daemon, event: "daemon.reloaded"))
        #expect(downloads.events == nil)
    }

    /// The connection closes after `daemon.stopping`: every watcher is told why, whatever it chose, and a
    /// connection that watches nothing is no watcher.
    @Test func everyWatcherHearsThatTheDaemonStops() throws {
        let stopping = DaemonEvent.stopping.rawValue
        #expect(try EventSelection(topicNames: ["downloads"], eventNames: nil).admits(.daemon, event: stopping))
        #expect(try EventSelection(topicNames: nil, eventNames: ["podcast.refreshed"]).admits(.daemon, event: stopping))
        let reloads = try EventSelection(topicNames: ["daemon"], eventNames: ["daemon.reloaded"])
        #expect(reloads.admits(.daemon, event: stopping))
        #expect(!reloads.admits(.daemon, event: "daemon.reload_failed"))
        #expect(!EventSelection.none.admits(.daemon, event: stopping))
    }

    @Test func eventsNarrowTheirTopics() throws {
        let alone = try EventSelection(topicNames: nil, eventNames: ["download.completed", "podcast.refreshed"])
        #expect(alone.topics == [.downloads, .podcasts])
        #expect(alone.admits(.downloads, event: "download.completed"))
        #expect(!alone.admits(.downloads, event: "download.progress"))
        #expect(alone.admits(.podcasts, event: "podcast.refreshed"))
        #expect(!alone.admits(.podcasts, event: "podcast.subscribed"))
        let both = try EventSelection(topicNames: ["downloads", "daemon"], eventNames: ["download.failed"])
        #expect(both == EventSelection(events: ["download.failed"]))
        #expect(!EventSelection.none.admits(.downloads, event: "download.completed"))
    }

    @Test func unknownNamesAreRefusedWithWhatIsKnown() {
        func refusal(_ topics: [String]?, _ events: [String]?) -> EventSelection.Invalid? {
            do {
                _ = try EventSelection(topicNames: topics, eventNames: events)
                return nil
            } catch {
                return error
            }
        }
        let topic = refusal(["download"], nil)
        #expect(topic?.parameter == "topics")
        #expect(topic?.message == "unknown topic 'download'; known topics: daemon, downloads, podcasts, episodes, sync")
        let misspelt = refusal(nil, ["download.complete"])
        #expect(misspelt?.parameter == "events")
        #expect(
            misspelt?.message.hasPrefix("unknown event 'download.complete'; events of 'downloads': download.added,")
                == true
        )
        let topicAsEvent = refusal(nil, ["sync"])
        #expect(
            topicAsEvent?.message == "unknown event 'sync': that is a topic; its events: sync.completed, sync.failed"
        )
        let stranger = refusal(nil, ["file:///etc/passwd"])
        #expect(
            stranger?.message.hasPrefix("unknown event 'file:///etc/passwd'; events are named <topic>.<event>") == true
        )
        let outside = refusal(["daemon"], ["download.completed"])
        #expect(outside?.message == "event 'download.completed' is of topic 'downloads', which is not among 'topics'")
    }
}
