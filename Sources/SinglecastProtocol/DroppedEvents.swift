/// `events.dropped`: sent to a watcher in place of the events it lost because it did not read them in time (the
/// daemon keeps at most 1024 unsent events per watcher), whatever topics it watches.
package enum DroppedEvents {
    package static let method = "events.dropped"

    package struct Params: Codable, Hashable, Sendable {
        /// ISO 8601, UTC.
        package var at: String
        /// Events lost since the previous event the watcher received.
        package var count: Int

        package init(at: String, count: Int) {
            self.at = at
            self.count = count
        }
    }
}
