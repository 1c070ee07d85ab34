package runtime

import (
	"encoding/binary"
	"errors"
	"slices"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Per-split watermarks (connector.SplitSource). Each split has the
// watermark its own records give; the source's is the minimum over the
// splits that are not idle, so a Kafka partition read ahead of the
// others makes none of their rows late. A split is idle once it had no
// record for the source's IdleTimeout (0: never), until its next record.
// When every split is idle the source's watermark stays where it is, as
// Flink's combined watermark does. The source's watermark never goes
// back: a split assigned later, or one coming back from idle, holds it
// where it is until its own catches up.

// splitWatermarks is a source node's per-split watermarks.
type splitWatermarks struct {
	src    connector.SplitSource
	idle   time.Duration
	splits map[string]*splitState
	// min is the minimum over the active splits (NoWatermark if one has
	// none yet), valid when fresh.
	min   int64
	fresh bool
}

type splitState struct {
	wm     int64
	last   time.Time
	isIdle bool
}

func newSplitWatermarks(src connector.SplitSource, idle time.Duration, restored map[string]int64, now time.Time) *splitWatermarks {
	w := &splitWatermarks{src: src, idle: idle, splits: map[string]*splitState{}}
	for name, wm := range restored {
		w.splits[name] = &splitState{wm: wm, last: now}
	}
	return w
}

// refresh takes the source's current splits: a new one starts without a
// watermark, one no longer read is forgotten.
func (w *splitWatermarks) refresh(now time.Time) {
	names := w.src.Splits()
	if len(names) == 0 {
		return // not assigned yet: nothing to go by
	}
	keep := make(map[string]bool, len(names))
	for _, n := range names {
		keep[n] = true
		if w.splits[n] == nil {
			w.splits[n] = &splitState{wm: operator.NoWatermark, last: now}
			w.fresh = false
		}
	}
	for n := range w.splits {
		if !keep[n] {
			delete(w.splits, n)
			w.fresh = false
		}
	}
}

// add takes a record of split name read at now, with its watermark
// candidate (has: it has one), and returns the source's watermark by
// the splits (NoWatermark while one has none).
func (w *splitWatermarks) add(name string, cand int64, has bool, now time.Time) int64 {
	st := w.splits[name]
	if st == nil {
		st = &splitState{wm: operator.NoWatermark}
		w.splits[name] = st
		w.fresh = false
	}
	st.last = now
	if st.isIdle {
		st.isIdle = false
		w.fresh = false
	}
	if has && cand > st.wm {
		if w.fresh && st.wm <= w.min {
			w.fresh = false // it may have been the minimum
		}
		st.wm = cand
	}
	return w.watermark()
}

// watermark is the minimum over the active splits, NoWatermark when
// none is active.
func (w *splitWatermarks) watermark() int64 {
	if w.fresh {
		return w.min
	}
	m, any := operator.MaxWatermark, false
	for _, st := range w.splits {
		if !st.isIdle {
			m, any = min(m, st.wm), true
		}
	}
	if !any {
		m = operator.NoWatermark
	}
	w.min, w.fresh = m, true
	return m
}

// nextIdle is when the next active split goes idle (maybe already
// past: markIdle has not looked yet); zero when none will, or without a
// timeout.
func (w *splitWatermarks) nextIdle() time.Time {
	var next time.Time
	if w.idle <= 0 {
		return next
	}
	for _, st := range w.splits {
		if at := st.last.Add(w.idle); !st.isIdle && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next
}

// markIdle marks the splits without a record since now - idle as idle,
// and returns the source's watermark by the splits. Splits go idle in
// the order their timeouts ran out, and the watermark is taken after
// each: when the others went idle before the last one active, the
// watermark is that one's, as it would have been had the source looked
// at the time each went idle.
func (w *splitWatermarks) markIdle(now time.Time) int64 {
	var due []*splitState
	if w.idle > 0 {
		for _, st := range w.splits {
			if !st.isIdle && !st.last.Add(w.idle).After(now) {
				due = append(due, st)
			}
		}
	}
	wm := w.watermark()
	slices.SortFunc(due, func(a, b *splitState) int { return a.last.Compare(b.last) })
	for i, st := range due {
		st.isIdle, w.fresh = true, false
		if i+1 < len(due) && due[i+1].last.Equal(st.last) {
			continue // idle at the same instant
		}
		if m := w.watermark(); m > wm {
			wm = m
		}
	}
	return wm
}

// errIdleWake ends a Read that waited until a split went idle.
var errIdleWake = errors.New("a split went idle")

// encodeSourceState is a source node's runtime part of a checkpoint: its
// watermark, then each split's (name, watermark) in name order.
func encodeSourceState(wm int64, w *splitWatermarks) []byte {
	if w == nil || len(w.splits) == 0 {
		return encodeWatermark(wm)
	}
	buf := binary.AppendVarint(nil, wm)
	names := make([]string, 0, len(w.splits))
	for n := range w.splits {
		names = append(names, n)
	}
	slices.Sort(names)
	buf = binary.AppendUvarint(buf, uint64(len(names)))
	for _, n := range names {
		buf = binary.AppendUvarint(buf, uint64(len(n)))
		buf = append(buf, n...)
		buf = binary.AppendVarint(buf, w.splits[n].wm)
	}
	return buf
}

// decodeSourceState reads what encodeSourceState wrote (or
// encodeWatermark, before splits had watermarks of their own).
func decodeSourceState(b []byte) (wm int64, splits map[string]int64, ok bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	wm, n := binary.Varint(b)
	if n <= 0 {
		return 0, nil, false
	}
	b = b[n:]
	if len(b) == 0 {
		return wm, nil, true
	}
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)) {
		return 0, nil, false
	}
	b = b[n:]
	splits = make(map[string]int64, count)
	for range count {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return 0, nil, false
		}
		name := string(b[n : n+int(l)])
		b = b[n+int(l):]
		v, m := binary.Varint(b)
		if m <= 0 {
			return 0, nil, false
		}
		b = b[m:]
		splits[name] = v
	}
	return wm, splits, len(b) == 0
}
