import Testing

@testable import SinglecastSupport

@Suite("DisplayWidth") struct DisplayWidthTests {
    @Test(
        arguments: [
            ("", 0), ("abc", 3), ("Café", 4), ("Cafe\u{301}", 4),  // composed and decomposed accents alike
            ("日本語", 6), ("한국어", 6), ("ｈｉ", 4), ("ﾊﾟ", 2),  // CJK, Hangul and fullwidth are wide; halfwidth kana not
            ("\u{1100}\u{1161}\u{11A8}", 2),  // a Hangul syllable from conjoining jamo
            ("🎧", 2), ("❤️", 2), ("👨‍👩‍👧", 2), ("🇯🇵", 2),  // emoji, VS16, a ZWJ family, a flag
            ("a\u{200B}b", 2), ("Ελληνικά", 8), ("Привет", 6),
        ] as [(String, Int)]
    )
    func columns(_ text: String, _ expected: Int) {
        #expect(DisplayWidth.of(text) == expected)
    }

    @Test(
        arguments: [
            ("short", 10, "short"), ("exactly10!", 10, "exactly10!"), ("eleven char", 10, "eleven ch…"),
            ("日本語のタイトル", 7, "日本語…"),  // 6 columns and the ellipsis; a wide character never half shown
            ("日本語のタイトル", 8, "日本語…"), ("Cafe\u{301} del Mar", 5, "Cafe\u{301}…"),
            ("👨‍👩‍👧👨‍👩‍👧", 3, "👨‍👩‍👧…"), ("abc", 0, ""),
        ] as [(String, Int, String)]
    )
    func truncationNeverCutsACharacter(_ text: String, _ columns: Int, _ expected: String) {
        let cut = DisplayWidth.truncated(text, to: columns)
        #expect(cut == expected)
        #expect(DisplayWidth.of(cut) <= columns)
        #expect(cut.unicodeScalars.elementsEqual(expected.unicodeScalars))
    }
}

@Suite("TitleMatch") struct TitleMatchTests {
    @Test(
        arguments: [
            ("daily", "The Daily", true), ("DAILY", "The Daily", true), ("the daily", "The Daily", true),
            ("cafe", "Café Society", true), ("CAFÉ", "Cafe Society", true), ("strasse", "Die Straße", true),
            ("ss", "Die Straße", true), ("uber", "Über Alles", true), ("zurich", "Zürich Talks", true),
            ("lodz", "Łódź Stories", true), ("aeon", "Æon Flux", true), ("noel", "Noe\u{308}l", true),
            ("an hour", "An Hour a Day", true), ("hour", "An Hour a Day", true), ("a day", "An Hour a Day", true),
            ("thea", "Theatre Talk", true), ("weekly", "The Daily", false), ("", "The Daily", false),
            ("ελληνικα", "Ελληνικά", true), ("ёлка", "Ёлка", true),
            ("the   daily", "The\tDaily", true), ("日本", "日本のニュース", true),
        ] as [(String, String, Bool)]
    )
    func matches(_ query: String, _ title: String, _ expected: Bool) {
        #expect(TitleMatch.matches(query, title: title) == expected)
    }

    @Test func foldingDropsOnlyALeadingArticleAndKeepsAnArticleAlone() {
        #expect(TitleMatch.folded("The The") == "the")
        #expect(TitleMatch.folded("The") == "the")
        #expect(TitleMatch.folded("  A  Very   Good Show ") == "very good show")
        #expect(TitleMatch.folded("Anna") == "anna")
    }
}

@Suite("ListSummary") struct ListSummaryTests {
    @Test(
        arguments: [
            (0, "0"), (999, "999"), (1000, "1,000"), (4990, "4,990"), (1_234_567, "1,234,567"), (-12_000, "-12,000"),
        ] as [(Int, String)]
    )
    func groupsThousands(_ value: Int, _ expected: String) {
        #expect(ListSummary.grouped(value) == expected)
    }

    @Test func aLongListEndsWithHowManyMore() {
        let ids = (1...5000).map(Int64.init)
        #expect(ListSummary.ids(ids) == "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, … and 4,990 more")
        #expect(ListSummary.ids(ids.prefix(10)) == "1, 2, 3, 4, 5, 6, 7, 8, 9, 10")
        #expect(ListSummary.list(["a", "b", "c"], limit: 2) == "a, b, … and 1 more")
    }
}

@Suite("DurationText and counts") struct DurationAndCountTests {
    @Test func countsNameTheirNounWithoutParentheses() {
        #expect(ListSummary.count(0, "download") == "0 downloads")
        #expect(ListSummary.count(1, "download") == "1 download")
        #expect(ListSummary.count(4990, "episode file") == "4,990 episode files")
        #expect(ListSummary.count(2, "entry", "entries") == "2 entries")
    }

    @Test func durationsAreTwoUnitsAtMost() {
        #expect(DurationText.text(seconds: 7200) == "2h")
        #expect(DurationText.text(seconds: 10_920) == "3h 2m")
        #expect(DurationText.text(seconds: 45) == "45s")
        #expect(DurationText.text(seconds: 183_600) == "2d 3h")
        #expect(DurationText.text(seconds: .infinity) == "106751991167300d 15h")
    }
}
