package joinop

import (
	"context"
	"errors"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// records names change i of a batch "in:<i+1>", as a source's positions.
type records struct{}

func (records) Position(i int) string { return "in:" + string(rune('1'+i)) }

// echoLookuper finds, for each key, one row holding the key.
type echoLookuper struct{ trips int64 }

func (*echoLookuper) Open(context.Context) error  { return nil }
func (*echoLookuper) Close(context.Context) error { return nil }
func (l *echoLookuper) RoundTrips() int64         { return l.trips }
func (l *echoLookuper) Lookup(_ context.Context, keys [][]row.Value) ([][]row.Row, error) {
	l.trips++
	rows := make([][]row.Row, len(keys))
	for i, k := range keys {
		rows[i] = []row.Row{{k[0]}}
	}
	return rows, nil
}

// A join that fails on a change names itself, the record the change
// came from and the change, and wraps the cause.
func TestJoinErrorsNameTheChange(t *testing.T) {
	boom := errors.New("boom")
	// failOn2 is a residual that fails on a joined row whose left key is 2.
	failOn2 := func(r row.Row) (bool, error) {
		if r[0].Int64() == 2 {
			return false, boom
		}
		return true, nil
	}
	tests := []struct {
		name string
		// run gives the operator its right rows (if any), then the left
		// batch, and returns ProcessInput's error for that batch.
		run  func(left *row.Batch, out operator.Emitter) error
		bad  row.Change // change 1 of the left batch
		want string
		is   error
	}{
		{"join", func(left *row.Batch, out operator.Emitter) error {
			spec := joinSpec2(InnerJoin)
			spec.Residual = failOn2
			j := NewJoin(spec)
			right := &row.Batch{Changes: []row.Change{
				{Kind: row.Insert, Row: row.Row{row.BigIntValue(1), row.StringValue("r")}},
				{Kind: row.Insert, Row: row.Row{row.BigIntValue(2), row.StringValue("r")}},
			}}
			if err := j.ProcessInput(1, right, out); err != nil {
				return err
			}
			return j.ProcessInput(0, left, out)
		}, row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(2), row.StringValue("l")}},
			"join: in:2: change 1: boom", boom},
		{"interval join", func(left *row.Batch, out operator.Emitter) error {
			return NewIntervalJoin(ijSpec(InnerJoin)).ProcessInput(0, left, out)
		}, row.Change{Kind: row.Delete, Row: temporalRow(2, 0, "l")},
			"interval join: in:2: change 1: input 0 sent -D: an interval join takes insert-only input", nil},
		{"window join", func(left *row.Batch, out operator.Emitter) error {
			return NewWindowJoin(wjSpec(InnerJoin)).ProcessInput(0, left, out)
		}, row.Change{Kind: row.UpdateAfter, Row: wjRow(2, 0, "l")},
			"window join: in:2: change 1: input 0 planned as insert-only carries a +U change", nil},
		{"lookup join", func(left *row.Batch, out operator.Emitter) error {
			j := NewLookupJoin(LookupJoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightWidth: 1, Residual: failOn2, Lookuper: &echoLookuper{}})
			return j.Process(left, out)
		}, row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(2), row.StringValue("l")}},
			"lookup join: in:2: change 1: boom", boom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			good := tc.bad
			good.Row = append(row.Row{row.BigIntValue(1)}, tc.bad.Row[1:]...)
			good.Kind = row.Insert
			left := &row.Batch{Changes: []row.Change{good, tc.bad}, Origin: records{}}
			err := tc.run(left, &joinCollector{})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("error %v does not wrap %v", err, tc.is)
			}
		})
	}
}

var _ connector.Lookuper = (*echoLookuper)(nil)
