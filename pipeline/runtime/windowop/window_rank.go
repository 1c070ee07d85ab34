package windowop

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/rankop"
)

// WindowRankSpec is a window Top-N or window deduplication: a RankSpec
// (ROW_NUMBER; Partition includes window_start and window_end) over rows
// that carry their window's end at EndCol.
type WindowRankSpec struct {
	Rank   rankop.RankSpec
	EndCol int
	// LastWins: of rows with equal sort keys the later one ranks first
	// (window deduplication keeping the last row).
	LastWins bool
	// Zone, when set, is the session zone of windows over a
	// TIMESTAMP_LTZ: their ends are its wall clock, and a window fires
	// when the watermark passes the instant its end stands for.
	Zone *time.Location
}

// windowBucket is one window's partitions, in first-seen order.
type windowBucket struct {
	parts map[string]*rankop.Partition
	order []string
}

// WindowRank is Flink's WindowRank / WindowDeduplicate: rows wait in
// their window until the watermark reaches the window's end; then each
// partition's ranks Start..End are emitted as +I (insert-only, rank number
// appended when OutputRank) and the window's state is freed. Only the top
// End rows of a partition are kept. A row whose window has already fired
// is late: dropped and counted. In batch execution every window fires at
// the end of input.
type WindowRank struct {
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	operator.Late     // reports the rows dropped as late (late_rows)
	spec              WindowRankSpec
	windows           map[int64]*windowBucket
	wm                int64
	rows              int64
	dropped           int64
	kbuf              []byte
}

// NewWindowRank builds the operator; a spec other than ROW_NUMBER is an
// error.
func NewWindowRank(spec WindowRankSpec) (*WindowRank, error) {
	if spec.Rank.Kind != rankop.RowNumber || spec.Rank.End < 1 {
		return nil, fmt.Errorf("window rank: %s with rank end %d is not supported", spec.Rank.Kind, spec.Rank.End)
	}
	return &WindowRank{spec: spec, windows: map[int64]*windowBucket{}, wm: operator.NoWatermark}, nil
}

// Dropped counts late rows.
func (w *WindowRank) Dropped() (int64, string) { return w.dropped, "late" }

// StateEntries implements StateSizer: the rows held in open windows.
func (w *WindowRank) StateEntries() int64 { return w.rows }

func (w *WindowRank) Process(in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("window rank", in, out, func(i int, c *row.Change) error {
		if c.Kind != row.Insert {
			return fmt.Errorf("input planned as insert-only carries a %s change", c.Kind)
		}
		end := c.Row[w.spec.EndCol].Micros()
		if w.spec.Zone != nil {
			end = row.AtZoneLater(w.spec.Zone, end)
		}
		if !w.spec.Rank.Batch && lastMilli(end) <= w.wm {
			w.dropped++
			w.At(i)
			w.Drop()
			return nil
		}
		w.add(end, c.Row)
		return nil
	})
}

// add puts r in its window's partition, keeping the top End rows.
func (w *WindowRank) add(end int64, r row.Row) {
	b := w.windows[end]
	if b == nil {
		b = &windowBucket{parts: map[string]*rankop.Partition{}}
		w.windows[end] = b
	}
	w.kbuf = row.KeyOf(w.kbuf[:0], r, w.spec.Rank.Partition)
	p := b.parts[string(w.kbuf)]
	if p == nil {
		p = &rankop.Partition{}
		b.parts[string(w.kbuf)] = p
		b.order = append(b.order, string(w.kbuf))
	}
	order := w.spec.Rank.Order
	limit := int(w.spec.Rank.End)
	if p.N >= limit {
		last := p.Groups[len(p.Groups)-1]
		c := rankop.CompareRows(order, r, last[0])
		if c > 0 || c == 0 && !w.spec.LastWins {
			return
		}
	}
	gi := p.Add(order, r)
	if w.spec.LastWins {
		g := p.Groups[gi]
		copy(g[1:], g[:len(g)-1])
		g[0] = r
	}
	w.rows++
	if p.N > limit {
		lg := len(p.Groups) - 1
		p.RemoveAt(lg, len(p.Groups[lg])-1)
		w.rows--
	}
}

// Watermark fires the windows whose end it reached, in end order.
func (w *WindowRank) Watermark(wm int64, out operator.Emitter) error {
	if wm <= w.wm || w.spec.Rank.Batch && wm != operator.MaxWatermark {
		return nil
	}
	w.wm = wm
	var ends []int64
	for end := range w.windows {
		if lastMilli(end) <= wm {
			ends = append(ends, end)
		}
	}
	slices.Sort(ends)
	for _, end := range ends {
		w.fire(w.windows[end], out)
		delete(w.windows, end)
	}
	return nil
}

func (w *WindowRank) fire(b *windowBucket, out operator.Emitter) {
	for _, k := range b.order {
		p := b.parts[k]
		var rank int64
		for _, g := range p.Groups {
			for _, r := range g {
				rank++
				w.rows--
				if rank < w.spec.Rank.Start || rank > w.spec.Rank.End {
					continue
				}
				if w.spec.Rank.OutputRank {
					o := make(row.Row, len(r)+1)
					copy(o, r)
					o[len(r)] = row.BigIntValue(rank)
					r = o
				}
				out.Emit(row.Insert, r)
			}
		}
	}
}

// Finish fires what is left (a batch run's windows; a streaming run's
// final watermark has fired them already).
func (w *WindowRank) Finish(out operator.Emitter) error {
	return w.Watermark(operator.MaxWatermark, out)
}

const windowRankStateVersion = 1

// Snapshot encodes the open windows: a version byte, the watermark, the
// late count, then per window its end and partitions (groups of rows).
func (w *WindowRank) Snapshot() ([]byte, error) {
	buf := []byte{windowRankStateVersion}
	buf = binary.AppendVarint(buf, w.wm)
	buf = binary.AppendVarint(buf, w.dropped)
	ends := make([]int64, 0, len(w.windows))
	for end := range w.windows {
		ends = append(ends, end)
	}
	slices.Sort(ends)
	buf = binary.AppendUvarint(buf, uint64(len(ends)))
	for _, end := range ends {
		b := w.windows[end]
		buf = binary.AppendVarint(buf, end)
		buf = binary.AppendUvarint(buf, uint64(len(b.order)))
		for _, k := range b.order {
			p := b.parts[k]
			buf = binary.AppendUvarint(buf, uint64(len(p.Groups)))
			for _, g := range p.Groups {
				buf = binary.AppendUvarint(buf, uint64(len(g)))
				for _, r := range g {
					buf = row.AppendRow(buf, r)
				}
			}
		}
	}
	return buf, nil
}

// Restore replaces the open windows with a snapshot's.
func (w *WindowRank) Restore(state []byte) error {
	d := w.Decoder(state)
	if v := d.Byte(); v != windowRankStateVersion {
		return fmt.Errorf("window rank: state version %d, want %d", v, windowRankStateVersion)
	}
	wm, dropped := d.Varint(), d.Varint()
	windows := map[int64]*windowBucket{}
	var rows int64
	nw := d.Count(1)
	for range nw {
		end := d.Varint()
		b := &windowBucket{parts: map[string]*rankop.Partition{}}
		np := d.Count(1)
		for range np {
			p := &rankop.Partition{}
			ng := d.Count(1)
			for range ng {
				nr := d.Count(1)
				g := make([]row.Row, 0, nr)
				for range nr {
					g = append(g, d.Row())
				}
				if d.Err() == nil && len(g) == 0 {
					d.Fail("empty rank group")
				}
				if d.Err() != nil {
					break
				}
				p.Groups = append(p.Groups, g)
				p.N += len(g)
			}
			if d.Err() != nil || len(p.Groups) == 0 {
				break
			}
			w.kbuf = row.KeyOf(w.kbuf[:0], p.Groups[0][0], w.spec.Rank.Partition)
			b.parts[string(w.kbuf)] = p
			b.order = append(b.order, string(w.kbuf))
			rows += int64(p.N)
		}
		if d.Err() != nil {
			break
		}
		windows[end] = b
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("window rank: restore: %w", err)
	}
	w.windows, w.wm, w.dropped, w.rows = windows, wm, dropped, rows
	return nil
}

var (
	_ operator.Operator    = (*WindowRank)(nil)
	_ operator.Counters    = (*WindowRank)(nil)
	_ operator.Snapshotter = (*WindowRank)(nil)
	_ operator.StateSizer  = (*WindowRank)(nil)
)
