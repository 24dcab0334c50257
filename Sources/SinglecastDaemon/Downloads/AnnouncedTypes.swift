/// The enclosure type the media check holds a download's body against (`nil` inside: no episode, or no type), for
/// downloads this run queued: the check then asks the store only after a restart, or once another episode was linked
/// to the download. A completion cost one more trip to the store's thread without it.
///
/// Completions take their entry out; those of downloads cancelled or cleared are swept out by ``sweep(keeping:)``,
/// which walks the map only once it has doubled since the last sweep. It used to walk it at every enqueue once it
/// held 1,024 entries, copying each download's record to see that it was still there: beside a queue of 20,000, an
/// enqueue of one URL took 15 ms, 86 % of it that walk.
struct AnnouncedTypes {
    private var types: [Int64: String?] = [:]
    /// The size above which the next sweep walks the map.
    private var sweepAbove = Self.smallestSweep

    static let smallestSweep = 1024

    /// The type announced for `id`: `nil` when none is kept, `.some(nil)` when the download was queued without one.
    subscript(id: Int64) -> String?? {
        get { types[id] }
        set { types[id] = newValue }
    }

    var count: Int { types.count }

    /// Drops the entries whose download `isLive` no longer knows, when the map has grown to twice what the last
    /// sweep kept (at least ``smallestSweep``): each entry is walked a bounded number of times on average, and the
    /// dead ones never outnumber the live ones by more than that.
    mutating func sweep(keeping isLive: (Int64) -> Bool) {
        guard types.count > sweepAbove else { return }
        types = types.filter { isLive($0.key) }
        sweepAbove = max(Self.smallestSweep, 2 * types.count)
    }
}
