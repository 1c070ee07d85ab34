package joinop

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// TemporalJoinSpec describes an event-time temporal join of a probe
// input (left, side 0) with a versioned table (right, side 1):
// `l JOIN r FOR SYSTEM_TIME AS OF l.t ON l.k = r.k`. The output row is the
// left row followed by the right row.
type TemporalJoinSpec struct {
	// Left: LEFT JOIN (a probe row without a version gets NULLs);
	// otherwise INNER.
	Left                bool
	LeftKeys, RightKeys []int
	// LeftTime and RightTime are the event-time columns (TIMESTAMP or
	// TIMESTAMP_LTZ) of each side: a left row joins the right version
	// with the greatest time at or before its own.
	LeftTime, RightTime   int
	LeftWidth, RightWidth int
	// Residual, if set, is the rest of the ON condition, evaluated on
	// the joined row; a left row whose version fails it is unmatched.
	Residual func(joined row.Row) (bool, error)
}

// temporalLeft is a probe change waiting for the watermark: a changelog
// probe input's -U and -D wait too, and are emitted with their kind,
// joined with the version valid at their own time, as Flink's
// TemporalRowTimeJoinOperator gives the output row the left row's kind.
type temporalLeft struct {
	seq  uint64
	time int64
	kind row.Kind
	Row  row.Row
}

// temporalVersion is a change of the versioned table at its time: an
// insert or update-after is a version valid from time on, a -D ends the
// previous one (Flink keeps the change itself, one per time).
type temporalVersion struct {
	time int64
	kind row.Kind
	Row  row.Row
}

// temporalKey is the state of one join key.
type temporalKey struct {
	Left     []temporalLeft    // in arrival order
	Versions []temporalVersion // by time
}

// TemporalJoin is Flink's TemporalRowTimeJoinOperator: left rows are held
// until the watermark (the minimum of both inputs') reaches their time;
// then each joins the version of its key valid at that time, in arrival
// order. Versions older than the one valid at the watermark are dropped.
// Each output row has its left change's kind: insert-only for an
// insert-only probe input.
type TemporalJoin struct {
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	spec              TemporalJoinSpec
	// Keys is the state by join key (row.KeyOf's encoding), exported for
	// the tests of what an operator keeps of its input.
	Keys map[string]*temporalKey
	// dirty are the keys with held left rows or versions to clean up.
	dirty   map[string]*temporalKey
	wm      int64
	seq     uint64
	entries int64
	lbuf    []byte
	rbuf    []byte
}

var (
	_ operator.TwoInput    = (*TemporalJoin)(nil)
	_ operator.Snapshotter = (*TemporalJoin)(nil)
	_ operator.StateSizer  = (*TemporalJoin)(nil)
)

// NewTemporalJoin returns a temporal join with empty state.
func NewTemporalJoin(spec TemporalJoinSpec) *TemporalJoin {
	return &TemporalJoin{spec: spec, Keys: map[string]*temporalKey{}, dirty: map[string]*temporalKey{}, wm: operator.NoWatermark}
}

// key encodes side's join key of r; null reports a NULL in it (never
// matches).
func (j *TemporalJoin) key(side int, r row.Row) (string, bool) {
	keys, buf := j.spec.LeftKeys, &j.lbuf
	if side == 1 {
		keys, buf = j.spec.RightKeys, &j.rbuf
	}
	for _, k := range keys {
		if r[k].IsNull() {
			return "", true
		}
	}
	*buf = row.KeyOf((*buf)[:0], r, keys)
	return string(*buf), false
}

func (j *TemporalJoin) state(key string) *temporalKey {
	s := j.Keys[key]
	if s == nil {
		s = &temporalKey{}
		j.Keys[key] = s
	}
	return s
}

// ProcessInput implements TwoInput: a left row is held, a right change
// stored as a version of its key.
func (j *TemporalJoin) ProcessInput(input int, in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("temporal join", in, out, func(_ int, c *row.Change) error {
		if input == 0 {
			return j.left(*c, out)
		}
		j.right(*c)
		return nil
	})
}

func (j *TemporalJoin) left(c row.Change, out operator.Emitter) error {
	t := c.Row[j.spec.LeftTime]
	key, null := j.key(0, c.Row)
	if null || t.IsNull() {
		// Never matches: a LEFT JOIN emits it padded at once.
		if j.spec.Left {
			out.Emit(c.Kind, j.joined(c.Row, nil))
		}
		return nil
	}
	s := j.state(key)
	j.seq++
	s.Left = append(s.Left, temporalLeft{seq: j.seq, time: t.Micros(), kind: c.Kind, Row: row.Detach(c.Row)}) // kept: must not pin its batch
	j.entries++
	j.dirty[key] = s
	return nil
}

func (j *TemporalJoin) right(c row.Change) {
	if c.Kind == row.UpdateBefore {
		// Flink asks the versioned table for its upsert changes only (I,
		// UA, D: the planner drops -U, as ChangelogMode's ONLY_UPDATE_AFTER):
		// a -U carries the old row, whose time is the version it ends, and
		// would wrongly replace that version.
		return
	}
	t := c.Row[j.spec.RightTime]
	key, null := j.key(1, c.Row)
	if null || t.IsNull() {
		return
	}
	s := j.state(key)
	v := temporalVersion{time: t.Micros(), kind: c.Kind, Row: row.Detach(c.Row)} // kept: must not pin its batch
	i, found := slices.BinarySearchFunc(s.Versions, v.time, func(x temporalVersion, t int64) int {
		switch {
		case x.time < t:
			return -1
		case x.time > t:
			return 1
		}
		return 0
	})
	if found {
		s.Versions[i] = v // one change per time: the newest wins
	} else {
		s.Versions = slices.Insert(s.Versions, i, v)
		j.entries++
	}
	j.dirty[key] = s
}

// joined returns l followed by r, or by NULLs when r is nil.
func (j *TemporalJoin) joined(l, r row.Row) row.Row {
	out := make(row.Row, 0, j.spec.LeftWidth+j.spec.RightWidth)
	out = append(out, l...)
	if r != nil {
		return append(out, r...)
	}
	for range j.spec.RightWidth {
		out = append(out, row.NullValue)
	}
	return out
}

// validAt returns the version valid at t: the latest change at or before
// t when it is an insert or update-after, else nil.
func (s *temporalKey) validAt(t int64) row.Row {
	i := sort.Search(len(s.Versions), func(i int) bool { return s.Versions[i].time > t }) - 1
	if i < 0 || !s.Versions[i].kind.IsAdd() {
		return nil
	}
	return s.Versions[i].Row
}

type temporalReady struct {
	temporalLeft
	key *temporalKey
}

// Watermark emits the held left rows whose time is at or below wm (every
// one at the final watermark), in arrival order, as Flink's timer does
// (leftTime <= currentWatermark), and drops the versions no row after wm
// can join. A late left row (at or behind the watermark when it came) is
// not dropped: it is emitted at the next watermark with the versions
// still kept, as Flink 2.3's TemporalRowTimeJoinOperator does.
func (j *TemporalJoin) Watermark(wm int64, out operator.Emitter) error {
	if wm <= j.wm {
		return nil
	}
	j.wm = wm
	var ready []temporalReady
	for _, s := range j.dirty {
		kept := s.Left[:0]
		for _, l := range s.Left {
			if l.time <= wm {
				ready = append(ready, temporalReady{l, s})
			} else {
				kept = append(kept, l)
			}
		}
		if len(kept) == 0 {
			kept = nil
		}
		j.entries -= int64(len(s.Left) - len(kept))
		s.Left = kept
	}
	slices.SortFunc(ready, func(a, b temporalReady) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	for _, l := range ready {
		r := l.key.validAt(l.time)
		if r != nil && j.spec.Residual != nil {
			ok, err := j.spec.Residual(j.joined(l.Row, r))
			if err != nil {
				return err
			}
			if !ok {
				r = nil
			}
		}
		if r != nil || j.spec.Left {
			out.Emit(l.kind, j.joined(l.Row, r))
		}
	}
	for key, s := range j.dirty {
		j.cleanup(s, wm)
		if len(s.Left) == 0 && len(s.Versions) <= 1 {
			delete(j.dirty, key)
			if len(s.Versions) == 0 {
				delete(j.Keys, key)
			}
		}
	}
	return nil
}

// cleanup drops the versions before the one valid at wm (Flink's
// cleanupExpiredVersionInState), or before the time of a held late row
// that may still need an older one; and the valid one too when it is a -U
// or -D with nothing after it: no version is the same as none.
func (j *TemporalJoin) cleanup(s *temporalKey, wm int64) {
	limit := wm
	for _, l := range s.Left {
		limit = min(limit, l.time)
	}
	keep := sort.Search(len(s.Versions), func(i int) bool { return s.Versions[i].time > limit }) - 1
	if keep < 0 {
		return
	}
	n := keep
	if keep == len(s.Versions)-1 && !s.Versions[keep].kind.IsAdd() {
		n++
	}
	if n > 0 {
		s.Versions = slices.Delete(s.Versions, 0, n)
		j.entries -= int64(n)
	}
}

// Finish has nothing to do: the final watermark emitted every held row.
func (j *TemporalJoin) Finish(operator.Emitter) error { return nil }

// StateEntries implements StateSizer: held left rows plus versions.
func (j *TemporalJoin) StateEntries() int64 { return j.entries }

// temporalStateVersion 2 keeps each held left change's kind; a state of
// version 1 (an insert-only probe input's) holds inserts only.
const (
	temporalStateVersion   = 2
	temporalStateVersionV1 = 1
)

// Snapshot implements Snapshotter: the watermark and sequence, then per
// key its held left changes (sequence, kind, row) and versions (kind,
// row).
func (j *TemporalJoin) Snapshot() ([]byte, error) {
	buf := []byte{temporalStateVersion}
	buf = binary.AppendVarint(buf, j.wm)
	buf = binary.AppendUvarint(buf, j.seq)
	buf = binary.AppendUvarint(buf, uint64(len(j.Keys)))
	for _, s := range j.Keys {
		buf = binary.AppendUvarint(buf, uint64(len(s.Left)))
		for _, l := range s.Left {
			buf = binary.AppendUvarint(buf, l.seq)
			buf = append(buf, byte(l.kind))
			buf = row.AppendRow(buf, l.Row)
		}
		buf = binary.AppendUvarint(buf, uint64(len(s.Versions)))
		for _, v := range s.Versions {
			buf = append(buf, byte(v.kind))
			buf = row.AppendRow(buf, v.Row)
		}
	}
	return buf, nil
}

// Restore implements Snapshotter.
func (j *TemporalJoin) Restore(state []byte) error {
	d := j.Decoder(state)
	v := d.Byte()
	if v != temporalStateVersion && v != temporalStateVersionV1 {
		return fmt.Errorf("temporal join: state version %d, want %d or %d", v, temporalStateVersion, temporalStateVersionV1)
	}
	fresh := NewTemporalJoin(j.spec)
	fresh.wm = d.Varint()
	fresh.seq = d.Uvarint()
	nkeys := d.Count(2)
	for range nkeys {
		nl := d.Count(2)
		for range nl {
			seq := d.Uvarint()
			kind := row.Insert
			if v != temporalStateVersionV1 {
				kind = row.Kind(d.Byte())
				if kind > row.Delete {
					d.Fail("held left change of kind %d", kind)
				}
			}
			r := d.Row()
			if d.Err() != nil {
				break
			}
			if len(r) != j.spec.LeftWidth {
				d.Fail("left row of %d columns, want %d", len(r), j.spec.LeftWidth)
				break
			}
			key, null := fresh.key(0, r)
			if null || r[j.spec.LeftTime].IsNull() {
				d.Fail("held left row with a NULL key or time")
				break
			}
			s := fresh.state(key)
			s.Left = append(s.Left, temporalLeft{seq: seq, time: r[j.spec.LeftTime].Micros(), kind: kind, Row: r})
			fresh.entries++
			fresh.dirty[key] = s
		}
		nv := d.Count(2)
		for range nv {
			k := row.Kind(d.Byte())
			r := d.Row()
			if d.Err() != nil {
				break
			}
			if len(r) != j.spec.RightWidth {
				d.Fail("version of %d columns, want %d", len(r), j.spec.RightWidth)
				break
			}
			if _, null := fresh.key(1, r); null || r[j.spec.RightTime].IsNull() {
				d.Fail("version with a NULL key or time")
				break
			}
			fresh.right(row.Change{Kind: k, Row: r})
		}
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("temporal join: %w", err)
	}
	for _, s := range fresh.Keys {
		slices.SortFunc(s.Left, func(a, b temporalLeft) int {
			if a.seq < b.seq {
				return -1
			}
			if a.seq > b.seq {
				return 1
			}
			return 0
		})
	}
	fresh.Widening = j.Widening
	*j = *fresh
	return nil
}
