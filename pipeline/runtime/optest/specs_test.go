package optest

import (
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/rankop"
)

// The specs of the operators these tests hold to the same contract. The
// families' own tests have theirs; a family cannot share a helper with a
// package its tests import without an import cycle.

func joinSpec2(kind joinop.JoinKind) joinop.JoinSpec {
	return joinop.JoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2}
}

func wjSpec(kind joinop.JoinKind) joinop.WindowJoinSpec {
	return joinop.WindowJoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 4, RightWidth: 4,
		LeftStart: 1, LeftEnd: 2, RightStart: 1, RightEnd: 2}
}

func temporalSpec(left bool) joinop.TemporalJoinSpec {
	return joinop.TemporalJoinSpec{Left: left, LeftKeys: []int{0}, RightKeys: []int{0}, LeftTime: 1, RightTime: 1, LeftWidth: 3, RightWidth: 3}
}

func topNSpec(strategy rankop.RankStrategy, outputRank bool, start, end int64) rankop.RankSpec {
	return rankop.RankSpec{
		Partition: []int{0}, Order: []rankop.SortKey{{Col: 2, Desc: true}},
		Start: start, End: end, Kind: rankop.RowNumber, Strategy: strategy, OutputRank: outputRank,
	}
}

func updateFastSpec(outputRank bool, start, end int64) rankop.RankSpec {
	s := topNSpec(rankop.UpdateFast, outputRank, start, end)
	s.RowKey = []int{0, 1}
	return s
}
