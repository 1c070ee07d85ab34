package rankop

import (
	"math/rand/v2"

	"github.com/etld/etld/pipeline/row"
)

// goldenSpecs are the Top-Ns whose snapshots and outputs, written by
// the code before the packed state (commit 8f53447e), are in testdata:
// one integer sort key (the packed state's fast compare) and two keys,
// a string first (compared on decoded rows).
func goldenSpecs() map[string]RankSpec {
	return map[string]RankSpec{
		"int": {Partition: []int{0}, Order: []SortKey{{Col: 1, Desc: true}}, Start: 1, End: 3, Kind: RowNumber, Strategy: AppendFast, OutputRank: true},
		"str": {Partition: []int{0}, Order: []SortKey{{Col: 2, NullsFirst: true}, {Col: 1, Desc: true}}, Start: 2, End: 4, Kind: RowNumber, Strategy: AppendFast, OutputRank: true},
	}
}

// goldenInput is a seeded stream of inserts [key BIGINT, price BIGINT,
// name STRING, d DOUBLE] with many ties and NULLs.
func goldenInput(name string) []row.Change {
	seed, keys := uint64(1), 300
	if name == "str" {
		seed, keys = 2, 20
	}
	rnd := rand.New(rand.NewPCG(seed, 7))
	return randomInserts(rnd, 2000, keys)
}

func randomInserts(rnd *rand.Rand, n, keys int) []row.Change {
	names := []string{"a", "bb", "ccc", "a longer string than the others"}
	in := make([]row.Change, n)
	for i := range in {
		r := row.Row{row.BigIntValue(rnd.Int64N(int64(keys))), row.BigIntValue(rnd.Int64N(8)), row.StringValue(names[rnd.IntN(len(names))]), row.DoubleValue(float64(rnd.IntN(4)) / 2)}
		if rnd.IntN(6) == 0 {
			r[1] = row.Value{}
		}
		if rnd.IntN(6) == 0 {
			r[2] = row.Value{}
		}
		in[i] = row.Change{Kind: row.Insert, Row: r}
	}
	return in
}
