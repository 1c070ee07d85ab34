package rankop

import (
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestTopNConstantRankNumber: a ROW_NUMBER Top-N whose range is one
// number (rn <= 1, rn = 1) emits the changes of the same Top-N without
// its number, with the constant number appended, as Flink's
// RankNumberColumnRemoveRule plans it: a top row replaced by another is
// -D/+I (RetractStrategy), not -U/+U. UpdateFastStrategy keeps the
// numbered algorithm: Flink 2.3 printed -U/+U for it (cmd/etld
// TestTopNMatchesFlink, update_fast_max), so it is not in this table.
func TestTopNConstantRankNumber(t *testing.T) {
	appendInput := []row.Change{optest.Ins("a", "x", 10), optest.Ins("a", "y", 20), optest.Ins("a", "z", 15), optest.Ins("b", "q", 1)}
	updating := []row.Change{optest.Ins("a", "x", 10), optest.Ins("a", "y", 5), optest.UB("a", "y", 5), optest.UA("a", "y", 30),
		optest.UB("a", "y", 30), optest.UA("a", "y", 3), optest.Del("a", "x", 10), optest.Del("a", "y", 3)}
	tests := []struct {
		name     string
		strategy RankStrategy
		in       []row.Change
	}{
		{"append", AppendFast, appendInput},
		{"retract", Retract, updating},
	}
	newOp := func(s RankStrategy, outputRank bool) operator.Operator {
		return NewTopN(topNSpec(s, outputRank, 1, 1))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			numbered, bare := newOp(tc.strategy, true), newOp(tc.strategy, false)
			var nOut, bOut optest.Out
			for i, c := range tc.in {
				if err := numbered.Process(optest.Batch(c), &nOut); err != nil {
					t.Fatalf("change %d: %v", i, err)
				}
				if err := bare.Process(optest.Batch(c), &bOut); err != nil {
					t.Fatalf("change %d: %v", i, err)
				}
				want := bOut.Take()
				for j, w := range want {
					want[j] = strings.TrimSuffix(w, "]") + ", 1]"
				}
				if got := nOut.Take(); !slices.Equal(got, want) {
					t.Errorf("after %s: got %q, want %q", c, got, want)
				}
			}
		})
	}
}
