import SinglecastProtocol
import Testing

@testable import SinglecastDaemon

/// The marks' request as the domain's choice of episodes, at the router's edge.
@Suite struct EpisodeChoiceTests {
    @Test func idsOrAWholePodcastWithAll() throws {
        #expect(try EpisodeChoice(EpisodeMarkParams(episodes: [3, 4])) == .episodes([3, 4]))
        #expect(try EpisodeChoice(EpisodeMarkParams(podcast: "Show", all: true)) == .wholePodcast("Show"))
    }

    @Test(arguments: [
        (EpisodeMarkParams(podcast: "Show"), "all"),
        (EpisodeMarkParams(podcast: "Show", all: false), "all"),
        (EpisodeMarkParams(episodes: [1], podcast: "Show", all: true), "episodes"),
        (EpisodeMarkParams(), "episodes"),
    ])
    func aWholePodcastNeedsAllAndExactlyOneChoiceIsGiven(params: EpisodeMarkParams, parameter: String) {
        let error = #expect(throws: PodcastError.self) { try EpisodeChoice(params) }
        #expect(error?.code == .invalid(parameter: parameter))
    }
}
