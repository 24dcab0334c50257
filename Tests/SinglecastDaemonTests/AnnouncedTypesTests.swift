import Testing

@testable import SinglecastDaemon

/// What the queue keeps for the media check must not make each enqueue walk the whole queue, and must not keep
/// the entries of downloads that are gone without end.
@Suite struct AnnouncedTypesTests {
    /// 20,000 downloads queued one enqueue at a time, all of them live: the sweeps before the enqueues walk each
    /// entry about twice in all (it was once per enqueue each: 180 million walks here).
    @Test func sweepsBeforeEachEnqueueWalkTheMapRarely() {
        var types = AnnouncedTypes()
        var walked = 0
        for id in Int64(1)...20_000 {
            types.sweep { _ in
                walked += 1
                return true
            }
            types[id] = .some("audio/mpeg")
        }
        #expect(types.count == 20_000)
        #expect(walked <= 3 * 20_000, "\(walked) walks for 20,000 enqueues")
        #expect(walked > 0)
    }

    /// Downloads that finish or are cleared without their completion taking the entry out leave dead entries; the
    /// sweeps keep them at most as many as the live ones (or the smallest sweep's size).
    @Test func deadEntriesDoNotPileUp() {
        var types = AnnouncedTypes()
        var live: Set<Int64> = []
        var generator = SystemRandomNumberGenerator()
        for id in Int64(1)...50_000 {
            types.sweep { live.contains($0) }
            types[id] = .some(nil)
            live.insert(id)
            // Most downloads leave the queue again (cleared, cancelled) without a completion.
            if live.count > 500 { live.remove(live.randomElement(using: &generator)!) }
            #expect(types.count <= max(AnnouncedTypes.smallestSweep, 2 * live.count) + 1)
        }
    }

    @Test func anEntryKeepsWhetherATypeWasAnnounced() {
        var types = AnnouncedTypes()
        types[1] = .some("audio/mpeg")
        types[2] = .some(nil)
        #expect(types[1] == .some("audio/mpeg"))
        #expect(types[2] == .some(nil))
        #expect(types[3] == nil)
        types[1] = nil
        #expect(types[1] == nil)
        #expect(types.count == 1)
    }
}
