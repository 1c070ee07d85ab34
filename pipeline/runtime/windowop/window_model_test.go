package windowop

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// windowModel is the window aggregate by its definition: every row goes
// to each window that contains it and has not fired; a watermark fires
// the windows that end at or before it.
type windowModel struct {
	spec    WindowSpec
	wm      int64
	windows map[int64]map[int64][]int64 // end → key → values (-1 = NULL)
	dropped int64
	// names, when set, makes the group key (name(key), key): a STRING
	// before the BIGINT, short or long.
	names bool
}

// modelName is the STRING key column of key k when the keys are
// composite: short names and names past the inline limit of a key table.
func modelName(k int64) row.Value {
	if k%2 == 0 {
		return row.StringValue(fmt.Sprintf("n%d", k))
	}
	return row.StringValue(fmt.Sprintf("a name long enough to leave the inline bytes %d", k))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// ends lists the ends of the windows that contain ts.
func (m *windowModel) ends(ts int64) []int64 {
	s := m.spec
	var ends []int64
	switch s.Kind {
	case Tumble:
		ends = append(ends, floorDiv(ts-s.Offset, s.Size)*s.Size+s.Offset+s.Size)
	case Hop:
		for start := floorDiv(ts-s.Offset, s.Slide)*s.Slide + s.Offset; start > ts-s.Size; start -= s.Slide {
			ends = append(ends, start+s.Size)
		}
	case Cumulate:
		cycle := floorDiv(ts-s.Offset, s.Size)*s.Size + s.Offset
		for e := cycle + s.Step; e <= cycle+s.Size; e += s.Step {
			if e > ts {
				ends = append(ends, e)
			}
		}
	}
	return ends
}

func (m *windowModel) add(ts, key, v int64) {
	n := 0
	for _, e := range m.ends(ts) {
		if e <= m.wm {
			continue
		}
		if m.windows[e] == nil {
			m.windows[e] = map[int64][]int64{}
		}
		m.windows[e][key] = append(m.windows[e][key], v)
		n++
	}
	if n == 0 {
		m.dropped++
	}
}

func (m *windowModel) watermark(wm int64) []string {
	if wm <= m.wm {
		return nil
	}
	m.wm = wm
	var out []string
	for e, keys := range m.windows {
		if e > wm {
			continue
		}
		start := e - m.spec.Size
		if m.spec.Kind == Cumulate {
			start = floorDiv(e-1-m.spec.Offset, m.spec.Size)*m.spec.Size + m.spec.Offset
		}
		for k, vals := range keys {
			var n, sum int64
			hi := row.NullValue
			distinct := map[int64]bool{}
			for _, v := range vals {
				if v < 0 {
					continue
				}
				distinct[v] = true
				n, sum = n+1, sum+v
				if hi.IsNull() || v > hi.Int64() {
					hi = row.BigIntValue(v)
				}
			}
			s := row.NullValue
			if n > 0 {
				s = row.BigIntValue(sum)
			}
			r := row.Row{row.BigIntValue(k), row.TimestampValue(start), row.TimestampValue(e), row.TimestampValue(e - 1000),
				row.BigIntValue(int64(len(vals))), s, hi, row.BigIntValue(int64(len(distinct)))}
			if m.names {
				r = append(row.Row{modelName(k)}, r...)
			}
			out = append(out, row.Change{Kind: row.Insert, Row: r}.String())
		}
		delete(m.windows, e)
	}
	slices.Sort(out)
	return out
}

// checkWindowModel drives a WindowAgg and the model with rows and
// watermarks decoded from data and compares what each watermark fires.
// Now and then the operator is snapshotted and a new one restored from
// it goes on in its place (a restart from a checkpoint). In batch mode
// only the end of input fires, and no row is late.
func checkWindowModel(t *testing.T, spec WindowSpec, data []byte, names, batch bool) {
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}, {Func: aggop.Max, Arg: 2, ArgType: optest.TBigInt},
		{Func: aggop.Count, Arg: 2, ArgType: optest.TBigInt, Distinct: true}}
	keys := []int{1}
	if names {
		keys = []int{3, 1}
	}
	g := optest.Must(NewWindowAgg(spec, keys, aggs, WindowOptions{Batch: batch}))
	m := &windowModel{spec: spec, wm: operator.NoWatermark, windows: map[int64]map[int64][]int64{}, names: names}
	out := &optest.Out{}
	const half = optest.Minute / 2
	fire := func(wm int64) {
		if err := g.Watermark(wm, out); err != nil {
			t.Fatal(err)
		}
		got := out.Take()
		// Windows fire in end order; keys within one may come in any order.
		var prevEnd string
		for _, l := range got {
			end := strings.Split(l, ", ")[2+len(keys)-1]
			if end < prevEnd {
				t.Fatalf("window ending %s fired after one ending %s", end, prevEnd)
			}
			prevEnd = end
		}
		slices.Sort(got)
		if batch && wm != operator.MaxWatermark {
			if len(got) > 0 {
				t.Fatalf("batch: watermark %s fired %q", row.TimestampValue(wm), got)
			}
			return
		}
		if want := m.watermark(wm); !slices.Equal(got, want) {
			t.Fatalf("%s watermark %s:\ngot  %q\nwant %q", spec.Kind, row.TimestampValue(wm), got, want)
		}
	}
	for i := 0; i+1 < len(data); i += 2 {
		op, b := data[i], data[i+1]
		ts := int64(b%64)*half - 8*optest.Minute // around the epoch, negative times included
		if op%4 == 0 {
			fire(ts)
			continue
		}
		v := int64(op % 7)
		val := row.BigIntValue(v)
		if op%11 == 0 {
			v, val = -1, row.NullValue
		}
		key := int64(op % 3)
		if b >= 192 {
			key = int64(op % 13) // keys that come and go
		}
		if op%29 == 1 {
			snap, err := g.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			g = optest.Must(NewWindowAgg(spec, keys, aggs, WindowOptions{Batch: batch}))
			if err := g.Restore(snap); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Process(optest.Batch(row.Change{Kind: row.Insert, Row: row.Row{row.TimestampValue(ts), row.BigIntValue(key), val, modelName(key)}}), out); err != nil {
			t.Fatal(err)
		}
		m.add(ts, key, v)
		checkKeyAt(t, g)
	}
	fire(operator.MaxWatermark)
	if n, _ := g.Dropped(); n != m.dropped {
		t.Fatalf("%s: dropped %d, want %d", spec.Kind, n, m.dropped)
	}
	if len(g.st.Free) != int(g.st.Slots) {
		t.Fatalf("%s: %d slots still in use", spec.Kind, int(g.st.Slots)-len(g.st.Free))
	}
	if n := g.kids.len(); n != 0 {
		t.Fatalf("%s: %d key ids still in use", spec.Kind, n)
	}
}

var modelSpecs = []WindowSpec{
	{Kind: Tumble, Size: 4 * optest.Minute, Offset: optest.Minute},
	{Kind: Tumble, Size: 3 * optest.Minute, Offset: -2 * optest.Minute},
	{Kind: Hop, Size: 6 * optest.Minute, Slide: 2 * optest.Minute, Offset: optest.Minute},
	{Kind: Hop, Size: 2 * optest.Minute, Slide: 2 * optest.Minute},
	{Kind: Hop, Size: 10 * optest.Minute / 2, Slide: optest.Minute / 2}, // a row in 10 windows
	{Kind: Cumulate, Size: 8 * optest.Minute, Step: 2 * optest.Minute, Offset: optest.Minute},
	{Kind: Cumulate, Size: 3 * optest.Minute, Step: 3 * optest.Minute},
}

func TestWindowAggMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 40 {
		data := make([]byte, 300)
		for i := range data {
			data[i] = byte(rng.IntN(256))
		}
		for _, spec := range modelSpecs {
			checkWindowModel(t, spec, data, false, false)
			checkWindowModel(t, spec, data, true, false)
			checkWindowModel(t, spec, data, true, true)
		}
	}
}

func FuzzWindowAgg(f *testing.F) {
	f.Add([]byte{1, 10, 2, 12, 0, 20, 5, 3, 0, 63})
	f.Add([]byte{3, 0, 7, 63, 4, 30, 9, 1, 11, 29, 0, 40, 13, 31})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			data = data[:4096]
		}
		for _, spec := range modelSpecs {
			checkWindowModel(t, spec, data, len(data)%2 == 1, len(data)%3 == 0)
		}
	})
}

// checkKeyAt checks what a window aggregate knows of its keys' slots:
// each key id's newest slice (keyIDs.at), when known, is the newest
// open slice holding the key, with the key's slot there; every slot's
// key id (slotKid) is its slice's.
func checkKeyAt(t *testing.T, g *WindowAgg) {
	t.Helper()
	type held struct {
		seq  uint32
		slot int32
	}
	newest := map[int32]held{}
	all := slices.Collect(maps.Values(g.slices))
	for _, c := range g.cycles {
		all = append(all, &c.shared)
	}
	var indexed int64
	for _, w := range all {
		if w.indexed {
			indexed += int64(len(w.index))
			if len(w.index) != len(w.order) {
				t.Fatalf("slice %d: %d groups, %d in its index", w.seq, len(w.order), len(w.index))
			}
		}
		for j, id := range w.order {
			kid := w.kids[j]
			if g.slotKid[id] != kid {
				t.Fatalf("slot %d: key id %d, its slice says %d", id, g.slotKid[id], kid)
			}
			if h, ok := newest[kid]; !ok || newer(w.seq, h.seq) {
				newest[kid] = held{w.seq, id}
			}
		}
	}
	if indexed != g.indexed {
		t.Fatalf("the slices' indexes hold %d entries, counted %d", indexed, g.indexed)
	}
	for kid, h := range newest {
		if at := g.kids.at[kid]; at.seq != 0 && (at.seq != h.seq || at.slot != h.slot) {
			t.Fatalf("key id %d: newest slice %d slot %d, at says %d slot %d", kid, h.seq, h.slot, at.seq, at.slot)
		}
	}
}
