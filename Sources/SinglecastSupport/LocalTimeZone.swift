#if canImport(Glibc)
import Glibc
#endif

/// A time zone as singlecast uses one: how far the wall clock is from UTC at each instant.
///
/// The client shows times and the daemon keeps its download windows in the user's zone through the C library rather
/// than Foundation's `TimeZone`, which needs ICU for anything but UTC and fixed offsets (without it
/// `TimeZone.current` is always GMT); ICU and its data made up most of the client's size.
package struct LocalTimeZone: Sendable {
    private let offset: @Sendable (_ unixSeconds: Int64) -> Int

    /// A zone whose offset at an instant (in seconds since 1970) comes from `offset`, in seconds east of UTC.
    package init(secondsFromUTC offset: @escaping @Sendable (_ unixSeconds: Int64) -> Int) {
        self.offset = offset
    }

    /// A zone always `seconds` east of UTC.
    package static func fixed(secondsFromUTC seconds: Int) -> LocalTimeZone {
        LocalTimeZone { _ in seconds }
    }

    package static let utc = fixed(secondsFromUTC: 0)

    /// The zone of the process: `TZ`, else `/etc/localtime`, as `date(1)` reads them.
    ///
    /// > POSIX: "Local timezone information is used as though localtime() calls tzset()." `localtime_r` need
    /// > not, so `tzset` runs once first.
    package static let system: LocalTimeZone = {
        tzset()
        return LocalTimeZone { unixSeconds in
            var time = time_t(unixSeconds)
            var parts = tm()
            guard localtime_r(&time, &parts) != nil else { return 0 }
            return parts.tm_gmtoff
        }
    }()

    /// Seconds east of UTC at `unixSeconds`, daylight saving time included.
    package func secondsFromUTC(at unixSeconds: Int64) -> Int {
        offset(unixSeconds)
    }
}
