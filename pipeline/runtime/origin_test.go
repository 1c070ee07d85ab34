package runtime

import (
	"fmt"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestOperatorsCarryPositions: the output batches of a filter (split
// across batches by the emitter's size) and of a group aggregate name the
// source record of each change; a window's results, fired by a
// watermark, name none.
func TestOperatorsCarryPositions(t *testing.T) {
	in := row.NewBatch(6, 2)
	pos := row.NewPositions(6, ":")
	in.Origin = pos
	for i := range 6 {
		r := in.NewRow()
		r[0], r[1] = row.StringValue(fmt.Sprint("k", i%2)), row.BigIntValue(int64(i))
		in.Append(row.Insert, r)
		pos.Mark(in.Len(), "in.csv", int64(10+i)) // line 10 + i
	}
	keepOdd := func(r row.Row) (bool, error) { return r[1].Int64()%2 == 1, nil }
	tests := []struct {
		name string
		op   operator.Operator
		// want: the position of each output change, in order.
		want []string
	}{
		{"filter", &Calc{Filter: keepOdd}, []string{"in.csv:11", "in.csv:13", "in.csv:15"}},
		{"group aggregate", optest.Must(aggop.NewGroupAgg([]int{0}, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}, aggop.GroupAggOptions{InsertOnly: true})),
			// +I k0, +I k1, then -U/+U of each key per row.
			[]string{"in.csv:10", "in.csv:11", "in.csv:12", "in.csv:12", "in.csv:13", "in.csv:13", "in.csv:14", "in.csv:14", "in.csv:15", "in.csv:15"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			em := newBatchEmitter(2)
			em.begin(in)
			if err := tt.op.Process(in, em); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range em.take() {
				if b.Origin == nil {
					t.Fatalf("output batch %v has no origin", b)
				}
				for i := range b.Changes {
					got = append(got, b.Origin.Position(i))
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("positions %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("window fired by a watermark", func(t *testing.T) {
		em := newBatchEmitter(2)
		em.begin(nil)
		em.Emit(row.Insert, row.Row{row.BigIntValue(1)})
		for _, b := range em.take() {
			if b.Origin != nil {
				t.Errorf("a result of no input batch has origin %v", b.Origin)
			}
		}
	})
}

// TestUpsertAdmitKeepsRecords: an upsert sink's input loses its -U
// changes, and each change kept still names its record as values, for a
// sink that writes positions (row.RecordOrigin through derivedOrigin).
func TestUpsertAdmitKeepsRecords(t *testing.T) {
	in := row.NewBatch(4, 1)
	pos := row.NewPositions(4, "/")
	in.Origin = pos
	kinds := []row.Kind{row.Insert, row.UpdateBefore, row.UpdateAfter, row.Delete}
	for i, k := range kinds {
		r := in.NewRow()
		r[0] = row.BigIntValue(int64(i))
		in.Append(k, r)
		pos.Mark(in.Len(), "t/0", int64(10+i/2)) // -U and +U of one record
	}
	n := &SinkNode{Mode: connector.Upsert}
	out, err := n.admit(in)
	if err != nil {
		t.Fatal(err)
	}
	ro, ok := out.Origin.(row.RecordOrigin)
	if !ok || out.Len() != 3 {
		t.Fatalf("admit gave %d changes with origin %T; want 3 naming their records", out.Len(), out.Origin)
	}
	for i, want := range []int64{10, 11, 11} {
		input, num, ok := ro.Record(i)
		if !ok || input != "t/0" || num != want {
			t.Errorf("change %d (%s): record %q %d %v; want t/0 %d", i, out.Changes[i].Kind, input, num, ok, want)
		}
	}
}

// TestMiniBatchPositions: a mini-batch's flush names, for each key, the
// record of the key's last change when that change is of the batch the
// flush follows, and no record for a key last changed by an earlier
// batch; a key emptied by a retraction names the retraction's record.
func TestMiniBatchPositions(t *testing.T) {
	batch := func(line int64, changes ...row.Change) *row.Batch {
		pos := row.NewPositions(len(changes), ":")
		b := &row.Batch{Changes: changes, Origin: pos}
		for i := range changes {
			pos.Mark(i+1, "in.csv", line+int64(i))
		}
		return b
	}
	ins := func(k string) row.Change {
		return row.Change{Kind: row.Insert, Row: row.Row{row.StringValue(k), row.BigIntValue(1)}}
	}
	del := func(k string) row.Change {
		return row.Change{Kind: row.Delete, Row: row.Row{row.StringValue(k), row.BigIntValue(1)}}
	}
	type step struct {
		in   *row.Batch
		want []string // "kind key position" of each change the step emits
	}
	for _, tc := range []struct {
		name       string
		insertOnly bool // the passes (foldMiniBatch), or row by row
		steps      []step
	}{
		{"insert-only", true, []step{
			{batch(10, ins("a"), ins("b"), ins("a")), nil},
			{batch(20, ins("b"), ins("c"), ins("b")), []string{"+I a ", "+I b in.csv:22", "+I c in.csv:21"}},
			{batch(30, ins("a"), ins("d"), ins("a"), ins("c"), ins("a"), ins("d")), []string{
				"-U a in.csv:34", "+U a in.csv:34", "+I d in.csv:35", "-U c in.csv:33", "+U c in.csv:33"}},
		}},
		{"updating", false, []step{
			{batch(10, ins("a"), ins("b"), ins("a")), nil},
			{batch(20, ins("b"), ins("c"), ins("b")), []string{"+I a ", "+I b in.csv:22", "+I c in.csv:21"}},
			// b emptied at 31, then a new b (maybe in b's old slot).
			{batch(30, del("b"), ins("a"), del("b"), del("b"), ins("b"), ins("a")), []string{
				"-D b in.csv:33", "-U a in.csv:35", "+U a in.csv:35", "+I b in.csv:34"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := optest.Must(aggop.NewGroupAgg([]int{0}, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}, aggop.GroupAggOptions{InsertOnly: tc.insertOnly, MiniBatch: true, MiniBatchSize: 6}))
			if g.Vectorized() != tc.insertOnly {
				t.Fatalf("vectorized %v", g.Vectorized())
			}
			for n, s := range tc.steps {
				em := newBatchEmitter(100)
				em.begin(s.in)
				if err := g.Process(s.in, em); err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, b := range em.take() {
					for i, c := range b.Changes {
						got = append(got, fmt.Sprintf("%s %s %s", c.Kind, c.Row[0].Str(), b.Origin.Position(i)))
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(s.want) {
					t.Errorf("step %d: emitted %q, want %q", n, got, s.want)
				}
			}
		})
	}
}
