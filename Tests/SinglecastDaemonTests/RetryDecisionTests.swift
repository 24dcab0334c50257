import SinglecastDaemon
import SinglecastHTTP
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `RetryPolicy.decide`: the one place that turns a failed attempt into a retry, a failure or a pause.
@Suite struct RetryDecisionTests {
    private let policy = RetryPolicy()
    private let now: Int64 = 1_000_000

    private func decide(_ failure: DownloadFailure, attempts: Int = 1) -> FailureDecision {
        policy.decide(failure, attempts: attempts, now: now, random: 0)
    }

    @Test(arguments: [ENOSPC, EDQUOT])
    func aFullDiskOrQuotaWhenOpeningThePartialFilePauses(code: Int32) {
        let failure = DownloadFailure.file(.open, errno: code, path: "/d/a.mp3.part")
        #expect(decide(failure) == .pause(reason: "disk_full"))
        #expect(failure.info.code == "disk_full")
        // Even with every attempt used up: the user frees space and resumes.
        #expect(decide(failure, attempts: 99) == .pause(reason: "disk_full"))
    }

    @Test func aBodyThatCannotFitPausesAsNoSpace() {
        let failure = DownloadFailure.transfer(TransferError(code: .noSpace, message: "needs 10 bytes, 9 free"))
        #expect(decide(failure) == .pause(reason: "no_space"))
        #expect(decide(failure, attempts: 99) == .pause(reason: "no_space"))
        #expect(failure.info.code == "no_space")
    }

    @Test func aFullDiskWhileWritingPauses() {
        let failure = DownloadFailure.transfer(TransferError(code: .diskFull, message: "full"))
        #expect(decide(failure) == .pause(reason: "disk_full"))
    }

    @Test func otherOpenAndRenameErrorsFailAtOnce() {
        #expect(decide(.file(.open, errno: EACCES, path: "/d/a.part")) == .fail)
        #expect(decide(.file(.rename, errno: EXDEV, path: "/d/a")) == .fail)
        #expect(decide(.file(.remove, errno: EPERM, path: "/d/a.part")) == .fail)
    }

    @Test func aFailedTruncateOrSyncIsRetriedLater() {
        guard case .retry(let at) = decide(.file(.truncate, errno: EIO, path: "/d/a.part")) else {
            Issue.record("not retried")
            return
        }
        #expect(at > now)
        guard case .retry = decide(.file(.sync, errno: EIO, path: "/d/a.part")) else {
            Issue.record("not retried")
            return
        }
    }

    @Test func httpStatusesFollowTheirClass() {
        #expect(decide(.httpStatus(404, url: "http://h/a", retryAfter: nil)) == .fail)
        #expect(decide(.httpStatus(503, url: "http://h/a", retryAfter: "30")) == .retry(at: now + 30_000))
        guard case .retry(let at) = decide(.httpStatus(429, url: "http://h/a", retryAfter: nil)) else {
            Issue.record("429 not retried")
            return
        }
        #expect(at >= now + 1_000)
    }

    @Test func bytesThatCannotBeResumedFromStartOverAtOnce() {
        #expect(decide(.rangeNotSatisfiable(offset: 10)) == .retry(at: now))
        #expect(decide(.transfer(TransferError(code: .rangeMismatch, message: "x"))) == .retry(at: now))
    }

    @Test func refusedRequestsAreNeverRetried() {
        for code: TransferError.Code in [
            .schemeNotAllowed, .insecureRedirect, .tooManyRedirects, .tooLarge, .headersTooLarge, .invalidURL,
        ] {
            #expect(decide(.transfer(TransferError(code: code, message: "x"))) == .fail, "\(code)")
        }
    }

    @Test func textWhereMediaWasAnnouncedFailsAtOnce() {
        let failure = DownloadFailure.notMedia(announced: "audio/mpeg", received: "text/html")
        #expect(decide(failure) == .fail)
        #expect(failure.info.code == "not_media")
        #expect(failure.info.message == "announced audio/mpeg but received an HTML page (text/html)")
        #expect(failure.info.httpStatus == nil)
    }

    @Test func networkTroubleIsRetriedUntilTheAttemptsRunOut() {
        let failure = DownloadFailure.transfer(TransferError(code: .network, message: "reset"))
        guard case .retry = decide(failure, attempts: policy.maximumAttempts - 1) else {
            Issue.record("not retried")
            return
        }
        #expect(decide(failure, attempts: policy.maximumAttempts) == .fail)
        #expect(decide(.rangeNotSatisfiable(offset: 1), attempts: policy.maximumAttempts) == .fail)
    }

    @Test func failuresNameTheirStableCodes() {
        #expect(DownloadFailure.lengthMismatch(received: 1, announced: 2).info.code == "length_mismatch")
        #expect(DownloadFailure.rangeNotSatisfiable(offset: 1).info.httpStatus == 416)
        #expect(DownloadFailure.httpStatus(500, url: "u", retryAfter: nil).info.code == "http_status")
        #expect(DownloadFailure.file(.sync, errno: EIO, path: "/p").info.code == "io")
        #expect(DownloadFailure.file(.sync, errno: EIO, path: "/p").info.message.hasPrefix("cannot sync /p: "))
    }

    /// An HTTP-date of year 300000000 was converted to milliseconds before the clamp: the queue trapped, and
    /// again on the retry after every restart.
    @Test func aRetryAfterDateBeyondYear9999IsIgnoredAndALaterOneHeldToADay() {
        let header = "Mon, 01 Jan 300000000 00:00:00 GMT"
        #expect(RetryPolicy.retryAfter(header, nowMilliseconds: now) == nil)
        #expect(RetryPolicy.retryAfter("Fri, 31 Dec 9999 23:59:59 GMT", nowMilliseconds: now) == now + 86_400_000)
        #expect(RetryPolicy.retryAfter("99999999999999999999999", nowMilliseconds: now) == now + 86_400_000)
        #expect(RetryPolicy.retryAfter("10", nowMilliseconds: Int64.max - 5) == Int64.max)
        guard case .retry(let at) = decide(.httpStatus(503, url: "http://h/a", retryAfter: header)) else {
            Issue.record("503 not retried")
            return
        }
        #expect(at >= now + 1_000 && at <= now + 2_000)
    }

    /// `Retry-After: 0` or a date in the past gave ten attempts in 70 ms, then a permanent failure.
    @Test(arguments: ["0", "Thu, 01 Jan 1970 00:00:00 GMT"])
    func aRetryAfterOfNowStillBacksOff(header: String) {
        var total: Int64 = 0
        for attempts in 1..<policy.maximumAttempts {
            guard
                case .retry(let at) = policy.decide(
                    .httpStatus(503, url: "http://h/a", retryAfter: header),
                    attempts: attempts,
                    now: now,
                    random: 0
                )
            else {
                Issue.record("503 not retried")
                return
            }
            #expect(at - now >= 1_000, "attempt \(attempts)")
            total += at - now
        }
        // 1 s, 2 s, 4 s … 256 s with the least jitter: the attempts spread over minutes, as without the header.
        #expect(total == 511_000)
    }

    /// A server that answers every resume with an unusable `Content-Range` retried ten times in 40 ms.
    @Test func startingOverAtOnceHappensOnceThenBacksOff() {
        let mismatch = DownloadFailure.transfer(TransferError(code: .rangeMismatch, message: "x"))
        #expect(decide(mismatch, attempts: 1) == .retry(at: now))
        #expect(decide(.rangeNotSatisfiable(offset: 10), attempts: 1) == .retry(at: now))
        #expect(decide(mismatch, attempts: 2) == .retry(at: now + 1_000))
        #expect(decide(.rangeNotSatisfiable(offset: 10), attempts: 3) == .retry(at: now + 2_000))
    }

    @Test func backoffNeverOverflows() {
        var policy = RetryPolicy()
        policy.maximumDelay = .seconds(Int64.max)
        policy.baseDelay = .seconds(Int64.max / 4)
        #expect(policy.backoff(afterAttempts: 40, random: 1) > .zero)
        let failure = DownloadFailure.transfer(TransferError(code: .network, message: "reset"))
        #expect(policy.decide(failure, attempts: 3, now: Int64.max - 10, random: 1) == .retry(at: Int64.max))
    }
}
