import CQRencode

#if canImport(Glibc)
import Glibc
#endif

/// A QR code as an SVG image, drawn by libqrencode: what a phone's camera scans to subscribe to a personal feed.
package enum QRCodeSVG {
    /// Modules of light margin around the symbol, as ISO/IEC 18004 asks for.
    private static let quietZone = 4

    /// The symbol for `text` at error correction level M, or `nil` when the text does not fit in a QR code
    /// (libqrencode's largest symbol holds 2,331 bytes at level M).
    package static func render(_ text: String) -> [UInt8]? {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let modules = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
        return Array(svg(width: width, isDark: { row, column in modules[row * width + column] & 1 == 1 }).utf8)
    }

    /// The image for a `width`×`width` symbol: one path, each row's dark runs as rectangles, so a version 10 code
    /// stays a few kilobytes.
    static func svg(width: Int, isDark: (_ row: Int, _ column: Int) -> Bool) -> String {
        let size = width + 2 * quietZone
        var path = ""
        for row in 0..<width {
            var column = 0
            while column < width {
                guard isDark(row, column) else {
                    column += 1
                    continue
                }
                let start = column
                while column < width, isDark(row, column) { column += 1 }
                path += "M\(start + quietZone) \(row + quietZone)h\(column - start)v1h-\(column - start)z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(size) \(size)" shape-rendering="crispEdges">\
            <rect width="\(size)" height="\(size)" fill="#fff"/><path d="\(path)" fill="#000"/></svg>

            """
    }
}
