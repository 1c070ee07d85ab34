package joinop

import (
	"testing"

	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestJoinOuterUpdateKinds: an outer join emits its joined rows as +I
// and -D, as Flink's StreamingJoinOperator does: an accumulating change
// is +I when either side is outer, a retracting one -D when its own side
// is outer; only a change of an inner side joined with an inner side (or
// retracted against an outer one) keeps its input kind. The padded rows
// are always +I and -D. With and without unique keys, the same kinds.
func TestJoinOuterUpdateKinds(t *testing.T) {
	left := []joinStep{
		{0, optest.Ins(1, "a"), []string{"+I[1, a, null, null]"}},
		{0, optest.UB(1, "a"), []string{"-D[1, a, null, null]"}},
		{0, optest.UA(1, "b"), []string{"+I[1, b, null, null]"}},
		{1, optest.Ins(1, "x"), []string{"-D[1, b, null, null]", "+I[1, b, 1, x]"}},
		{1, optest.UB(1, "x"), []string{"-U[1, b, 1, x]", "+I[1, b, null, null]"}},
		{1, optest.UA(1, "y"), []string{"-D[1, b, null, null]", "+I[1, b, 1, y]"}},
		{0, optest.UB(1, "b"), []string{"-D[1, b, 1, y]"}},
		{0, optest.UA(1, "c"), []string{"+I[1, c, 1, y]"}},
	}
	right := []joinStep{
		{1, optest.Ins(1, "x"), []string{"+I[null, null, 1, x]"}},
		{1, optest.UB(1, "x"), []string{"-D[null, null, 1, x]"}},
		{1, optest.UA(1, "y"), []string{"+I[null, null, 1, y]"}},
		{0, optest.Ins(1, "a"), []string{"-D[null, null, 1, y]", "+I[1, a, 1, y]"}},
		{0, optest.UB(1, "a"), []string{"-U[1, a, 1, y]", "+I[null, null, 1, y]"}},
		{0, optest.UA(1, "b"), []string{"-D[null, null, 1, y]", "+I[1, b, 1, y]"}},
		{1, optest.UB(1, "y"), []string{"-D[1, b, 1, y]"}},
		{1, optest.UA(1, "z"), []string{"+I[1, b, 1, z]"}},
	}
	full := []joinStep{
		{0, optest.Ins(1, "a"), []string{"+I[1, a, null, null]"}},
		{0, optest.UB(1, "a"), []string{"-D[1, a, null, null]"}},
		{0, optest.UA(1, "b"), []string{"+I[1, b, null, null]"}},
		{1, optest.Ins(1, "x"), []string{"-D[1, b, null, null]", "+I[1, b, 1, x]"}},
		{1, optest.UB(1, "x"), []string{"-D[1, b, 1, x]", "+I[1, b, null, null]"}},
		{1, optest.UA(1, "y"), []string{"-D[1, b, null, null]", "+I[1, b, 1, y]"}},
		{0, optest.UB(1, "b"), []string{"-D[1, b, 1, y]", "+I[null, null, 1, y]"}},
		{0, optest.UA(1, "c"), []string{"-D[null, null, 1, y]", "+I[1, c, 1, y]"}},
	}
	inner := []joinStep{
		{0, optest.Ins(1, "a"), nil},
		{1, optest.Ins(1, "x"), []string{"+I[1, a, 1, x]"}},
		{1, optest.UB(1, "x"), []string{"-U[1, a, 1, x]"}},
		{1, optest.UA(1, "y"), []string{"+U[1, a, 1, y]"}},
		{0, optest.UB(1, "a"), []string{"-U[1, a, 1, y]"}},
		{0, optest.UA(1, "b"), []string{"+U[1, b, 1, y]"}},
	}
	tests := []struct {
		name  string
		kind  JoinKind
		steps []joinStep
	}{
		{"left", LeftJoin, left},
		{"right", RightJoin, right},
		{"full", FullJoin, full},
		{"inner", InnerJoin, inner},
	}
	for _, tt := range tests {
		for _, unique := range []bool{false, true} {
			spec := joinSpec2(tt.kind)
			name := tt.name
			if unique {
				spec.LeftUnique, spec.RightUnique = []int{0}, []int{0}
				name += ", unique keys"
			}
			t.Run(name, func(t *testing.T) { runJoinSteps(t, NewJoin(spec), tt.steps) })
		}
	}
}
