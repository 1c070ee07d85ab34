package runtime

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A join's held-back inputs (a build-first union's held rows) widen with
// the join: the verdict takes the join's retagging, and the held rows
// restore under the wide types, as the rows the join keeps do.
func TestHeldInputsWidenWithTheJoin(t *testing.T) {
	widen := map[row.TypeID]row.TypeID{row.Int: row.BigInt}
	vs := []Verdict{
		{ID: "transform/q/join#1", Action: Migrate, Widen: widen, Change: "INT -> BIGINT on column v"},
		{ID: "transform/q/join#1/inputs", Action: Keep},
	}
	followJoins(vs)
	if v := vs[1]; v.Action != Migrate || v.Widen[row.Int] != row.BigInt || v.Change != vs[0].Change {
		t.Fatalf("held inputs: %+v", v)
	}

	g := newBuildGate(0, 2)
	g.held = []heldMsg{{input: 1, m: message{kind: msgBatch, batch: &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: row.Row{row.IntValue(7), row.StringValue("x")}}}}}}}
	saved := g.encodeHeld()
	for _, w := range []map[row.TypeID]row.TypeID{nil, widen} {
		r := newBuildGate(0, 2)
		if err := r.restoreHeld(saved, 2, w); err != nil {
			t.Fatal(err)
		}
		want := row.Int
		if w != nil {
			want = row.BigInt
		}
		if got := r.held[0].m.batch.Changes[0].Row[0]; got.Type() != want || got.Int64() != 7 {
			t.Errorf("widen %v: held value %v of %s, want 7 of %s", w, got, got.Type(), want)
		}
	}
}

type discard struct{}

func (discard) Emit(row.Kind, row.Row) {}

// BenchmarkKeyedRestoreWiden: what a widening costs a restore of a
// GROUP BY of 200k INT keys on two workers: plain, the workers restore
// their key groups; widened, one instance restores them all retagged and
// its state is cut in key groups again before the workers restore.
func BenchmarkKeyedRestoreWiden(b *testing.B) {
	build := func() (operator.KeyGrouped, error) {
		return aggop.NewGroupAgg([]int{0}, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}, aggop.GroupAggOptions{})
	}
	k, err := NewKeyed([]int{0}, 2, build)
	if err != nil {
		b.Fatal(err)
	}
	const keys = 200_000
	batch := &row.Batch{}
	for i := range keys {
		batch.Changes = append(batch.Changes, row.Change{Kind: row.Insert, Row: row.Row{row.IntValue(int32(i))}})
	}
	if err := k.Process(batch, discard{}); err != nil {
		b.Fatal(err)
	}
	snap, err := k.Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	for _, widen := range []map[row.TypeID]row.TypeID{nil, {row.Int: row.BigInt}} {
		name := "plain"
		if widen != nil {
			name = "widened"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				r, err := NewKeyed([]int{0}, 2, build)
				if err != nil {
					b.Fatal(err)
				}
				r.WidenRestore(widen)
				if err := r.Restore(snap); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/keys, "ns/key")
		})
	}
}

// A join's held-back inputs widen with the join when its retag is by
// type, and are refused when it is by column (a column of the narrow
// type stays): those rows are retagged by type only.
func TestHeldBackInputsFollowTheJoinsWidening(t *testing.T) {
	byType := map[row.TypeID]row.TypeID{row.Int: row.BigInt}
	for _, c := range []struct {
		name string
		cols []row.TypeID
		want Action
	}{
		{"by type", nil, Migrate},
		{"by column", []row.TypeID{row.BigInt, row.Null}, Refuse},
	} {
		vs := []Verdict{
			{ID: "transform/q/join#1", Action: Migrate, Widen: byType, WidenCols: c.cols, Change: "INT -> BIGINT on column v"},
			{ID: "transform/q/join#1/inputs", Action: Keep},
		}
		followJoins(vs)
		if vs[1].Action != c.want {
			t.Errorf("%s: the held-back inputs %s (%s), want %s", c.name, vs[1].Action, vs[1].Why, c.want)
		}
	}
}
