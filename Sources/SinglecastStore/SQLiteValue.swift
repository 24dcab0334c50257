/// One SQLite value, as bound to a parameter or read from a column.
///
/// SQLite has five storage classes; this enum mirrors them exactly so nothing is lost in either direction.
/// Dates are stored project-wide as ``integer(_:)`` Unix seconds and booleans as 0/1.
package enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The value as an integer, or `nil` unless it is stored as an integer.
    package var int64: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The value as a double, or `nil` unless it is stored as a real.
    package var double: Double? {
        if case .real(let value) = self { return value }
        return nil
    }

    /// The value as a string, or `nil` unless it is stored as text.
    package var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The value as bytes, or `nil` unless it is stored as a blob.
    package var bytes: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }

    /// Whether the value is SQL `NULL`.
    package var isNull: Bool { self == .null }

    /// Wraps an optional integer, mapping `nil` to ``null``.
    package init(_ value: Int64?) {
        self = value.map { .integer($0) } ?? .null
    }

    /// Wraps an optional string, mapping `nil` to ``null``.
    package init(_ value: String?) {
        self = value.map { .text($0) } ?? .null
    }
}

extension SQLiteValue: ExpressibleByNilLiteral {
    package init(nilLiteral: ()) { self = .null }
}

extension SQLiteValue: ExpressibleByIntegerLiteral {
    package init(integerLiteral value: Int64) { self = .integer(value) }
}

extension SQLiteValue: ExpressibleByFloatLiteral {
    package init(floatLiteral value: Double) { self = .real(value) }
}

extension SQLiteValue: ExpressibleByStringLiteral {
    package init(stringLiteral value: String) { self = .text(value) }
}

/// One result row, copied out of SQLite so it stays valid after the statement moves on.
///
/// Rows are plain values: they may leave the ``Store`` actor, unlike ``Statement``.
package struct Row: Sendable, Hashable {
    /// Column names in result order, as SQLite reports them (the `AS` alias when there is one).
    package var columns: [String]
    /// Column values in result order.
    package var values: [SQLiteValue]

    package init(columns: [String], values: [SQLiteValue]) {
        precondition(columns.count == values.count, "a row needs one name per value")
        self.columns = columns
        self.values = values
    }

    /// The value at a zero-based column index.
    package subscript(index: Int) -> SQLiteValue { values[index] }

    /// The value of the first column with this name, or `nil` when the row has no such column.
    package subscript(name: String) -> SQLiteValue? {
        columns.firstIndex(of: name).map { values[$0] }
    }
}

/// A result row's columns by index: a copied ``Row``, or a ``Statement`` on its current row, so that one decoder
/// reads both and a long listing need not copy every value into a ``Row`` first.
package protocol ResultColumns {
    func int64(_ column: Int) -> Int64?
    func string(_ column: Int) -> String?
}

extension Row: ResultColumns {
    package func int64(_ column: Int) -> Int64? { values[column].int64 }
    package func string(_ column: Int) -> String? { values[column].string }
}

extension Statement: ResultColumns {}
