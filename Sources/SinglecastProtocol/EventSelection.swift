extension EventTopic {
    /// The names of this topic's events, as watchers receive them.
    package var eventNames: [String] {
        switch self {
        case .daemon: DaemonEvent.allCases.map(\.rawValue)
        case .downloads: DownloadEvent.allCases.map(\.rawValue)
        case .podcasts: PodcastEvent.allCases.map(\.rawValue)
        case .episodes: EpisodeEvent.allCases.map(\.rawValue)
        case .sync: SyncEvent.allCases.map(\.rawValue)
        }
    }

    /// The topic of the event named `eventName`, or `nil` for no event the daemon sends.
    package init?(eventName: String) {
        guard let topic = Self.byEventName[eventName] else { return nil }
        self = topic
    }

    private static let byEventName: [String: EventTopic] = Dictionary(
        uniqueKeysWithValues: allCases.flatMap { topic in topic.eventNames.map { ($0, topic) } }
    )
}

/// What one watcher receives: the events of some topics, or only some events of them. `events.dropped` and
/// `daemon.stopping` reach every watcher whatever it chose.
///
/// The one reading of the names a client sends, for `watch` on the control socket and `GET /events`.
package struct EventSelection: Hashable, Sendable {
    /// Watched topics; empty for none (`unwatch`).
    package private(set) var topics: Set<EventTopic>
    /// The events wanted of those topics; `nil` for all of them.
    package private(set) var events: Set<String>?

    /// No events at all.
    package static let none = EventSelection(topics: [])

    /// Every event of `topics`.
    package init(topics: Set<EventTopic>) {
        self.topics = topics
        events = nil
    }

    /// Only `events`, each of which is a known event name.
    package init(events: Set<String>) {
        precondition(events.allSatisfy { EventTopic(eventName: $0) != nil }, "unknown events in \(events)")
        topics = Set(events.compactMap(EventTopic.init(eventName:)))
        self.events = events
    }

    /// What a client asked for: topic and event names, each list absent or empty for all.
    ///
    /// Events narrow topics: with both, each event must be of a topic asked for; with events alone, their topics
    /// are watched.
    package init(topicNames: [String]?, eventNames: [String]?) throws(Invalid) {
        var topics = Set<EventTopic>()
        for name in topicNames ?? [] {
            guard let topic = EventTopic(rawValue: name) else {
                throw Invalid(parameter: "topics", message: "unknown topic '\(name)'; known topics: \(Self.topicList)")
            }
            topics.insert(topic)
        }
        guard let eventNames, !eventNames.isEmpty else {
            self.init(topics: topics.isEmpty ? Set(EventTopic.allCases) : topics)
            return
        }
        for name in eventNames {
            guard let topic = EventTopic(eventName: name) else {
                throw Invalid(parameter: "events", message: Self.unknownEvent(name))
            }
            guard topics.isEmpty || topics.contains(topic) else {
                throw Invalid(
                    parameter: "events",
                    message: "event '\(name)' is of topic '\(topic.rawValue)', which is not among 'topics'"
                )
            }
        }
        self.init(events: Set(eventNames))
    }

    /// Whether the watcher receives the event `name` of `topic`. `daemon.stopping` reaches every watcher, whatever
    /// it chose: its connection closes after it, and without it a stop would look like a lost connection.
    package func admits(_ topic: EventTopic, event name: String) -> Bool {
        guard !topics.isEmpty else { return false }
        if name == DaemonEvent.stopping.rawValue { return true }
        return topics.contains(topic) && (events?.contains(name) ?? true)
    }

    /// Names a client sent that are no event or topic of theirs.
    package struct Invalid: Error, Hashable, Sendable {
        /// `topics` or `events`.
        package var parameter: String
        package var message: String
    }

    private static func unknownEvent(_ name: String) -> String {
        // A topic's name where an event's was meant is the likeliest slip: say which events it has.
        if let topic = EventTopic(rawValue: name) {
            return "unknown event '\(name)': that is a topic; its events: "
                + topic.eventNames.joined(separator: ", ")
        }
        let prefix = name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? name
        if let topic = EventTopic.allCases.first(where: { $0.eventNames.first?.hasPrefix(prefix + ".") == true }) {
            return "unknown event '\(name)'; events of '\(topic.rawValue)': "
                + topic.eventNames.joined(separator: ", ")
        }
        return "unknown event '\(name)'; events are named <topic>.<event>, of the topics \(topicList)"
    }

    /// The topics' names, for error messages.
    private static let topicList = EventTopic.allCases.map(\.rawValue).joined(separator: ", ")
}
