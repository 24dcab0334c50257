import CPosix
import Testing

@testable import SinglecastHTTP

/// libcurl allocates a download's receive buffer for each transfer, one byte bigger than asked, and glibc maps a block
/// at or above its mmap threshold on its own: an `mmap`, page faults and a `munmap` for every download.
@Suite struct DownloadBufferTests {
    @Test func aDownloadsReceiveBufferStaysUnderTheMmapThreshold() {
        // malloc adds its 8-byte header and rounds up to 16 bytes.
        let block = (TransferContext.downloadBufferSize + 1 + 8 + 15) / 16 * 16
        #expect(block < Int(CPOSIX_MMAP_THRESHOLD))
        // Still far bigger than libcurl's default 16 KiB, which is what it is for.
        #expect(TransferContext.downloadBufferSize >= 64 * 1024)
    }
}
