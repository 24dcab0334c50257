import Foundation
import SinglecastStore
import Testing

/// The speed limit set with `limit`, kept so that a restart does not lose it.
@Suite struct SpeedLimitStoreTests {
    @Test func aLimitSetAtRuntimeIsKeptUntilForgotten() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/s.db")
            #expect(try await store.speedLimitOverride() == nil, "none set: the configured one applies")
            try await store.setSpeedLimitOverride(.some(1 << 20))
            #expect(try await store.speedLimitOverride() == .some(1 << 20))
            try await store.setSpeedLimitOverride(.some(nil))
            #expect(try await store.speedLimitOverride() == .some(nil), "unlimited is a setting, not its absence")
            try await store.setSpeedLimitOverride(.some(512))
            try await store.close()
            let reopened = try Store(path: directory + "/s.db")
            #expect(try await reopened.speedLimitOverride() == .some(512))
            try await reopened.setSpeedLimitOverride(nil)
            #expect(try await reopened.speedLimitOverride() == nil)
        }
    }
}
