package matchop

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestCadenceAndRestoreDoNotChangeMatches: over seeded random sequences
// of three partitions, the matches come out the same, in the same order,
// whether the watermark follows every row (restoring the operator at
// every step) or the rows run at the end of input, rows arriving out of
// order within the watermark's delay.
func TestCadenceAndRestoreDoNotChangeMatches(t *testing.T) {
	specs := map[string]Spec{
		"greedy":    greedySpec(true),
		"reluctant": greedySpec(false),
		"past-last": skipSpec(SkipPastLastRow),
		"next-row":  skipSpec(SkipToNextRow),
	}
	for seed := range uint64(5) {
		r := rand.New(rand.NewPCG(seed, 1))
		base := optest.TS("2018-09-17 10:00:00")
		var rows []row.Change
		for i := range 200 {
			ts := base + int64(i/2)*1_000_000
			rows = append(rows, optest.Ins([]string{"X", "Y", "Z"}[r.IntN(3)], row.TimestampValue(ts), 5+r.IntN(12)))
		}
		// Deliver in an order shuffled within windows of 4 rows, with a
		// watermark 4 seconds behind the newest row.
		for i := 0; i+4 <= len(rows); i += 4 {
			r.Shuffle(4, func(a, b int) { rows[i+a], rows[i+b] = rows[i+b], rows[i+a] })
		}
		for name, s := range specs {
			var steps []any
			for _, c := range rows {
				steps = append(steps, c, c.Row[cTS].Micros()-4_000_000)
			}
			stepped := run(t, s, true, steps...)
			var plain []any
			for _, c := range rows {
				plain = append(plain, c)
			}
			atEnd := run(t, s, false, plain...)
			if len(atEnd) == 0 {
				t.Fatalf("seed %d %s: no match at all", seed, name)
			}
			if !slices.Equal(stepped, atEnd) {
				t.Errorf("seed %d %s: watermark per row:\n%s\nat the end:\n%s", seed, name, strings.Join(stepped, "\n"), strings.Join(atEnd, "\n"))
			}
		}
	}
}
