package joinop

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// WindowJoinSpec describes a window join (Flink's WindowJoin): two inputs
// that are window TVFs of the same window, joined on window_start,
// window_end and the equality keys. Each side names its window_start and
// window_end columns; the output row is the left row followed by the
// right row.
type WindowJoinSpec struct {
	// Kind is InnerJoin, LeftJoin, RightJoin, FullJoin, or SemiJoin and
	// AntiJoin, which emit left rows only.
	Kind                  JoinKind
	LeftKeys, RightKeys   []int
	LeftWidth, RightWidth int
	LeftStart, LeftEnd    int
	RightStart, RightEnd  int
	// Residual, if set, is the rest of the ON condition, evaluated on the
	// joined row.
	Residual func(joined row.Row) (bool, error)
	// NullAware: an anti join of NOT IN, whose single key matches any
	// row when either side's key is NULL (SQL's NOT IN).
	NullAware bool
	// Batch: every window fires at the end of input.
	Batch bool
	// EndInstant, when set, is the instant a window's end stands for:
	// windows over a TIMESTAMP_LTZ in a session zone other than UTC end
	// on its wall clock (row.AtZoneLater). Nil: the end is one.
	EndInstant func(end int64) int64
}

// wjWindow identifies one window: rows of both sides meet only in the
// window of the same start and end.
type wjWindow struct{ start, end int64 }

// wjKey is one join key's rows of a window, per side, in arrival order.
type wjKey struct {
	null bool // a NULL in the key: its rows never match
	Rows [2][]row.Row
}

// wjBucket is one window's keys, in first-seen order (so the output of a
// window has a stable order across a restore).
type wjBucket struct {
	Keys  map[string]*wjKey
	order []string
}

// WindowJoin is a window join: each input row waits in its window (keyed
// by the join key) until the watermark (the minimum of both inputs', which
// the node gives) reaches the window's last millisecond (Flink's timer at
// windowEnd - 1); then the window's rows are joined, matches emitted as
// +I, an outer side's unmatched rows emitted padded with NULLs, and the
// window's state freed, as Flink's WindowJoinOperator does. Output is
// insert-only. A row whose window has already fired is late: dropped,
// counted and reported (late_rows). Rows whose key holds a NULL
// never match (outer sides emit them padded). A semi (anti) window join
// emits, when the window fires, the window's left rows that have a match
// (none) in it.
type WindowJoin struct {
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	operator.Late     // reports the rows dropped as late (late_rows)
	spec              WindowJoinSpec
	outer             [2]bool
	// Windows are the open windows' rows, exported for the tests of what
	// an operator keeps of its input.
	Windows map[wjWindow]*wjBucket
	wm      int64
	rows    int64
	dropped int64
	kbuf    []byte
}

var (
	_ operator.TwoInput     = (*WindowJoin)(nil)
	_ operator.Snapshotter  = (*WindowJoin)(nil)
	_ operator.StateSizer   = (*WindowJoin)(nil)
	_ operator.Counters     = (*WindowJoin)(nil)
	_ operator.LateReporter = (*WindowJoin)(nil)
)

// windowDue is the watermark at which a window ending at end fires, and
// from which a row for it is late: its last millisecond.
func windowDue(end int64) int64 { return end - 1000 }

// NewWindowJoin returns a window join with empty state.
func NewWindowJoin(spec WindowJoinSpec) *WindowJoin {
	j := &WindowJoin{spec: spec, Windows: map[wjWindow]*wjBucket{}, wm: operator.NoWatermark}
	switch spec.Kind {
	case LeftJoin:
		j.outer[0] = true
	case RightJoin:
		j.outer[1] = true
	case FullJoin:
		j.outer = [2]bool{true, true}
	}
	return j
}

// Dropped implements Counters: late rows.
func (j *WindowJoin) Dropped() (int64, string) { return j.dropped, "late" }

// StateEntries implements StateSizer: the rows held in open windows.
func (j *WindowJoin) StateEntries() int64 { return j.rows }

// ProcessInput implements TwoInput.
func (j *WindowJoin) ProcessInput(input int, in *row.Batch, out operator.Emitter) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("window join: input %d: a join has inputs 0 and 1", input)
	}
	startCol, endCol, keys, width := j.spec.LeftStart, j.spec.LeftEnd, j.spec.LeftKeys, j.spec.LeftWidth
	if input == 1 {
		startCol, endCol, keys, width = j.spec.RightStart, j.spec.RightEnd, j.spec.RightKeys, j.spec.RightWidth
	}
	return operator.EachChange("window join", in, out, func(i int, c *row.Change) error {
		if c.Kind != row.Insert {
			return fmt.Errorf("input %d planned as insert-only carries a %s change", input, c.Kind)
		}
		if len(c.Row) != width {
			return fmt.Errorf("input %d: row of %d columns, want %d", input, len(c.Row), width)
		}
		sv, ev := c.Row[startCol], c.Row[endCol]
		if sv.IsNull() || ev.IsNull() {
			// A window TVF never gives one; a row without a window
			// belongs to none and cannot fire.
			j.dropped++
			return nil
		}
		w := wjWindow{start: sv.Micros(), end: ev.Micros()}
		if !j.spec.Batch && windowDue(j.instant(w.end)) <= j.wm {
			j.dropped++
			j.At(i)
			j.Drop()
			return nil
		}
		j.add(w, input, keys, c.Row)
		return nil
	})
}

func (j *WindowJoin) add(w wjWindow, side int, keys []int, r row.Row) {
	b := j.Windows[w]
	if b == nil {
		b = &wjBucket{Keys: map[string]*wjKey{}}
		j.Windows[w] = b
	}
	j.kbuf = row.KeyOf(j.kbuf[:0], r, keys)
	k := b.Keys[string(j.kbuf)]
	if k == nil {
		k = &wjKey{}
		for _, i := range keys {
			k.null = k.null || r[i].IsNull()
		}
		b.Keys[string(j.kbuf)] = k
		b.order = append(b.order, string(j.kbuf))
	}
	k.Rows[side] = append(k.Rows[side], row.Detach(r)) // kept: must not pin its batch
	j.rows++
}

// Watermark fires the windows whose end it reached, in end order (then
// start order: CUMULATE windows of a cycle share their start).
func (j *WindowJoin) Watermark(wm int64, out operator.Emitter) error {
	if wm <= j.wm || j.spec.Batch && wm != operator.MaxWatermark {
		return nil
	}
	j.wm = wm
	var due []wjWindow
	for w := range j.Windows {
		if windowDue(j.instant(w.end)) <= wm {
			due = append(due, w)
		}
	}
	slices.SortFunc(due, compareWindows)
	for _, w := range due {
		if err := j.fire(j.Windows[w], out); err != nil {
			return err
		}
		delete(j.Windows, w)
	}
	return nil
}

// instant is the instant a window's end stands for (EndInstant).
func (j *WindowJoin) instant(end int64) int64 {
	if j.spec.EndInstant == nil {
		return end
	}
	return j.spec.EndInstant(end)
}

func compareWindows(a, b wjWindow) int {
	return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(a.start, b.start))
}

// fire joins a window's rows key by key: each left row with every right
// row of its key (Flink's order), then the unmatched rows of the outer
// sides padded with NULLs.
func (j *WindowJoin) fire(b *wjBucket, out operator.Emitter) error {
	if j.spec.Kind == SemiJoin || j.spec.Kind == AntiJoin {
		return j.fireSemi(b, out)
	}
	for _, ks := range b.order {
		k := b.Keys[ks]
		lefts, rights := k.Rows[0], k.Rows[1]
		j.rows -= int64(len(lefts) + len(rights))
		rightMatched := make([]bool, len(rights))
		for _, l := range lefts {
			matched := false
			if !k.null {
				for ri, r := range rights {
					jr := make(row.Row, 0, len(l)+len(r))
					jr = append(append(jr, l...), r...)
					if j.spec.Residual != nil {
						ok, err := j.spec.Residual(jr)
						if err != nil {
							return fmt.Errorf("window join: %w", err)
						}
						if !ok {
							continue
						}
					}
					matched, rightMatched[ri] = true, true
					out.Emit(row.Insert, jr)
				}
			}
			if !matched && j.outer[0] {
				out.Emit(row.Insert, j.padded(0, l))
			}
		}
		if j.outer[1] {
			for ri, r := range rights {
				if !rightMatched[ri] {
					out.Emit(row.Insert, j.padded(1, r))
				}
			}
		}
	}
	return nil
}

// fireSemi emits a window's left rows that have a match (semi) or none
// (anti) among its right rows. Null-aware, a left row with a NULL key is
// matched by every right row, and any row by a right row with a NULL key.
func (j *WindowJoin) fireSemi(b *wjBucket, out operator.Emitter) error {
	anti := j.spec.Kind == AntiJoin
	var nullRights, allRights []row.Row
	if j.spec.NullAware {
		for _, ks := range b.order {
			k := b.Keys[ks]
			if k.null {
				nullRights = append(nullRights, k.Rows[1]...)
			}
			allRights = append(allRights, k.Rows[1]...)
		}
	}
	for _, ks := range b.order {
		k := b.Keys[ks]
		j.rows -= int64(len(k.Rows[0]) + len(k.Rows[1]))
		var cands [2][]row.Row
		switch {
		case j.spec.NullAware && k.null:
			cands[0] = allRights
		case j.spec.NullAware:
			cands = [2][]row.Row{k.Rows[1], nullRights}
		case !k.null:
			cands[0] = k.Rows[1]
		}
		for _, l := range k.Rows[0] {
			found, err := j.anyMatch(l, cands)
			if err != nil {
				return err
			}
			if found != anti {
				out.Emit(row.Insert, l)
			}
		}
	}
	return nil
}

func (j *WindowJoin) anyMatch(l row.Row, cands [2][]row.Row) (bool, error) {
	for _, rows := range cands {
		for _, r := range rows {
			if j.spec.Residual == nil {
				return true, nil
			}
			jr := make(row.Row, 0, len(l)+len(r))
			ok, err := j.spec.Residual(append(append(jr, l...), r...))
			if err != nil {
				return false, fmt.Errorf("window join: %w", err)
			}
			if ok {
				return true, nil
			}
		}
	}
	return false, nil
}

func (j *WindowJoin) padded(side int, r row.Row) row.Row {
	return padRow(side, r, j.spec.LeftWidth, j.spec.RightWidth)
}

// Finish fires what is left (a batch run's windows; a streaming run's
// final watermark has fired them already).
func (j *WindowJoin) Finish(out operator.Emitter) error {
	return j.Watermark(operator.MaxWatermark, out)
}

const windowJoinStateVersion = 1

// Snapshot encodes the open windows: a version byte, the watermark, the
// late count, then per window (in end order) its start, end and keys (in
// first-seen order), each with its NULL flag and rows per side.
func (j *WindowJoin) Snapshot() ([]byte, error) {
	buf := []byte{windowJoinStateVersion}
	buf = binary.AppendVarint(buf, j.wm)
	buf = binary.AppendVarint(buf, j.dropped)
	ws := make([]wjWindow, 0, len(j.Windows))
	for w := range j.Windows {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, compareWindows)
	buf = binary.AppendUvarint(buf, uint64(len(ws)))
	for _, w := range ws {
		b := j.Windows[w]
		buf = binary.AppendVarint(buf, w.start)
		buf = binary.AppendVarint(buf, w.end)
		buf = binary.AppendUvarint(buf, uint64(len(b.order)))
		for _, ks := range b.order {
			k := b.Keys[ks]
			buf = row.AppendString(buf, ks)
			buf = append(buf, b2byte(k.null))
			for side := range 2 {
				buf = binary.AppendUvarint(buf, uint64(len(k.Rows[side])))
				for _, r := range k.Rows[side] {
					buf = row.AppendRow(buf, r)
				}
			}
		}
	}
	return buf, nil
}

// Restore replaces the open windows with a snapshot's.
func (j *WindowJoin) Restore(state []byte) error {
	d := j.Decoder(state)
	if v := d.Byte(); v != windowJoinStateVersion {
		return fmt.Errorf("window join: state version %d, want %d", v, windowJoinStateVersion)
	}
	wm, dropped := d.Varint(), d.Varint()
	windows := map[wjWindow]*wjBucket{}
	var rows int64
	widths := [2]int{j.spec.LeftWidth, j.spec.RightWidth}
	nw := d.Count(3)
	for range nw {
		w := wjWindow{start: d.Varint(), end: d.Varint()}
		b := &wjBucket{Keys: map[string]*wjKey{}}
		nk := d.Count(4)
		for range nk {
			ks := d.KeyStr()
			k := &wjKey{null: d.Byte() == 1}
			for side := range 2 {
				nr := d.Count(1)
				for range nr {
					r := d.Row()
					if d.Err() == nil && len(r) != widths[side] {
						d.Fail("row of %d columns on side %d, want %d", len(r), side, widths[side])
					}
					if d.Err() != nil {
						break
					}
					k.Rows[side] = append(k.Rows[side], r)
				}
				rows += int64(len(k.Rows[side]))
			}
			if d.Err() != nil {
				break
			}
			b.Keys[ks] = k
			b.order = append(b.order, ks)
		}
		if d.Err() != nil {
			break
		}
		windows[w] = b
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("window join: restore: %w", err)
	}
	j.Windows, j.wm, j.dropped, j.rows = windows, wm, dropped, rows
	return nil
}
