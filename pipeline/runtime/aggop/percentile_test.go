package aggop

import (
	"math"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestPercentile: PERCENTILE after each accumulate (+) or retract (-), as
// Flink's PercentileAggFunction computes it (position p*(n-1)+1,
// interpolated); a snapshot restored after every step gives the same.
func TestPercentile(t *testing.T) {
	type step struct {
		add  bool
		v    float64
		want string
	}
	seq := func(p float64, vs ...float64) []step {
		var out []step
		for _, v := range vs {
			out = append(out, step{true, v, ""})
		}
		return out
	}
	tests := []struct {
		name  string
		pct   float64
		steps []step
		want  string // after the last step, when its want is ""
	}{
		{"median of an even count interpolates", 0.5, seq(0.5, 2, 1, 4, 7, 1, 3), "2.5"},
		{"0 is the smallest", 0, seq(0, 5, -1, 3), "-1.0"},
		{"1 is the largest", 1, seq(1, 5, -1, 3), "5.0"},
		{"duplicates count", 0.5, seq(0.5, 1, 1, 1, 9), "1.0"},
		{"0.1 of 12.5, 40, 3.25: between 3.25 and 12.5", 0.1, seq(0.1, 12.5, 40, 3.25), "5.1"},
		{"-0.0 sorts before 0.0, as Java's Double", 0, seq(0, 0, math.Copysign(0, -1)), "-0.0"},
		{"retractions", 0.5, []step{{true, 1, "1.0"}, {true, 3, "2.0"}, {false, 1, "3.0"}, {false, 3, "null"}, {false, 5, "null"}, {true, 5, "null"}, {true, 8, "8.0"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := AggCall{Func: Percentile, ArgType: optest.TDouble, Pct: tt.pct}
			if err := call.Validate(); err != nil {
				t.Fatal(err)
			}
			st := NewStore([]AggCall{call}, false, false)
			id := st.Alloc("")
			res := make([]row.Value, 1)
			for i, s := range tt.steps {
				st.Update(id, row.Row{row.DoubleValue(s.v)}, s.add)
				want := s.want
				if want == "" && i < len(tt.steps)-1 {
					continue
				}
				if want == "" {
					want = tt.want
				}
				for _, x := range []*Store{st, restoredOf(t, st, call)} {
					if x.Results(id, res); res[0].String() != want {
						t.Fatalf("step %d: %s, want %s", i, res[0], want)
					}
				}
			}
		})
	}
	if err := (AggCall{Func: Percentile, ArgType: optest.TDouble, Pct: 1.5}).Validate(); err == nil {
		t.Error("a percentage of 1.5 validated")
	}
}

func restoredOf(t *testing.T, st *Store, call AggCall) *Store {
	t.Helper()
	r := NewStore([]AggCall{call}, false, false)
	r.RestoreState(row.NewDecoder(st.AppendState(nil, nil)), nil)
	return r
}
