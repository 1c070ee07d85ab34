package windowop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// sessionModel is the SESSION aggregate by its definition: a key's
// windows [ts, ts + gap) that overlap or touch are one session; a new
// window that ends by the watermark, joining none, is late; a watermark
// fires the sessions whose last millisecond it reached.
type sessionModel struct {
	gap, wm int64
	open    map[string][]*modelSession // by key's text
	dropped int64
}

type modelSession struct {
	key        row.Row
	start, end int64
	n, sum     int64
	sums       bool // sum seen a non-NULL value
}

func (m *sessionModel) add(key row.Row, ts int64, v row.Value) {
	k := fmt.Sprint(key)
	start, end := ts, ts+m.gap
	var keep []*modelSession
	merged := &modelSession{key: key, start: start, end: end}
	joined := false
	for _, s := range m.open[k] {
		if s.start <= end && s.end >= start {
			merged.start, merged.end = min(merged.start, s.start), max(merged.end, s.end)
			merged.n, merged.sum, merged.sums = merged.n+s.n, merged.sum+s.sum, merged.sums || s.sums
			joined = true
		} else {
			keep = append(keep, s)
		}
	}
	if !joined && lastMilli(end) <= m.wm {
		m.dropped++
		return
	}
	merged.n++
	if !v.IsNull() {
		merged.sum, merged.sums = merged.sum+v.Int64(), true
	}
	m.open[k] = append(keep, merged)
}

func (m *sessionModel) watermark(wm int64) []string {
	if wm <= m.wm {
		return nil
	}
	m.wm = wm
	var out []string
	for k, list := range m.open {
		var keep []*modelSession
		for _, s := range list {
			if lastMilli(s.end) > wm {
				keep = append(keep, s)
				continue
			}
			sum := row.NullValue
			if s.sums {
				sum = row.BigIntValue(s.sum)
			}
			r := slices.Concat(s.key, row.Row{row.TimestampValue(s.start), row.TimestampValue(s.end), row.TimestampValue(s.end - 1000),
				row.BigIntValue(s.n), sum})
			out = append(out, row.Change{Kind: row.Insert, Row: r}.String())
		}
		if len(keep) == 0 {
			delete(m.open, k)
		} else {
			m.open[k] = keep
		}
	}
	slices.Sort(out)
	return out
}

// TestSessionAggMatchesModel drives SessionAgg and the model with random
// rows of a composite key (a STRING, NULL now and then, and a BIGINT),
// out of order within and behind the watermark, and watermarks, and
// compares what each watermark fires; now and then the operator is
// snapshotted and a fresh one restored from it goes on in its place.
func TestSessionAggMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	names := []string{"a", "bb", "a longer name past fifteen bytes", ""}
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 3, ArgType: optest.TBigInt}}
	for round := range 60 {
		gap := int64(1+rng.IntN(5)) * optest.Minute / 2
		mk := func() *SessionAgg { return optest.Must(NewSessionAgg(0, gap, []int{1, 2}, aggs, WindowOptions{})) }
		g := mk()
		m := &sessionModel{gap: gap, wm: operator.NoWatermark, open: map[string][]*modelSession{}}
		out := &optest.Out{}
		fire := func(wm int64) {
			if err := g.Watermark(wm, out); err != nil {
				t.Fatal(err)
			}
			got := out.Take()
			slices.Sort(got)
			if want := m.watermark(wm); !slices.Equal(got, want) {
				t.Fatalf("round %d, watermark %s:\ngot  %q\nwant %q", round, row.TimestampValue(wm), got, want)
			}
		}
		clock := int64(0)
		for range 400 {
			switch op := rng.IntN(20); {
			case op == 0:
				fire(clock - int64(rng.IntN(3))*optest.Minute)
			case op == 1:
				snap, err := g.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				g = mk()
				if err := g.Restore(snap); err != nil {
					t.Fatal(err)
				}
			default:
				clock += int64(rng.IntN(20)) * optest.Minute / 20
				ts := clock - int64(rng.IntN(8))*optest.Minute/4 // out of order, some behind the watermark
				name := row.StringValue(names[rng.IntN(len(names))])
				if rng.IntN(10) == 0 {
					name = row.NullValue
				}
				key := row.Row{name, row.BigIntValue(int64(rng.IntN(3)))}
				v := row.BigIntValue(int64(rng.IntN(100)))
				if rng.IntN(8) == 0 {
					v = row.NullValue
				}
				r := row.Row{row.TimestampValue(ts), key[0], key[1], v}
				if err := g.Process(optest.Batch(row.Change{Kind: row.Insert, Row: r}), out); err != nil {
					t.Fatal(err)
				}
				m.add(key, ts, v)
			}
		}
		fire(operator.MaxWatermark)
		if n, _ := g.Dropped(); n != m.dropped {
			t.Fatalf("round %d: dropped %d, want %d", round, n, m.dropped)
		}
		if g.set.live != 0 || g.set.keyCount() != 0 || len(g.st.Free) != int(g.st.Slots) {
			t.Fatalf("round %d: state left: %d sessions, %d keys, %d slots", round, g.set.live, g.set.keyCount(), int(g.st.Slots)-len(g.st.Free))
		}
	}
}
