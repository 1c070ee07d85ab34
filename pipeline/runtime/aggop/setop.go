package aggop

import (
	"fmt"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// SetOpKind is the set operation a SetOp computes.
type SetOpKind uint8

// The set operations. The zero SetOpKind is invalid.
const (
	Intersect    SetOpKind = iota + 1 // a row once when both sides have it
	IntersectAll                      // min(left copies, right copies) times
	Except                            // a row once when the left has it and the right not
	ExceptAll                         // left copies - right copies times, when positive
)

func (k SetOpKind) String() string {
	return [...]string{"?", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"}[min(int(k), 4)]
}

// times is how often a row is in the result when the left input has l
// copies of it and the right r.
func (k SetOpKind) times(l, r int64) int64 {
	switch k {
	case Intersect:
		if l > 0 && r > 0 {
			return 1
		}
	case IntersectAll:
		return max(min(l, r), 0)
	case Except:
		if l > 0 && r <= 0 {
			return 1
		}
	case ExceptAll:
		return max(l-r, 0)
	}
	return 0
}

// SetOp computes INTERSECT [ALL] or EXCEPT [ALL] over the union of its
// two inputs, each row carrying a last column that says its side (0
// left, 1 right): it counts each distinct row's copies per side, as
// Flink's rewrite of the ALL forms counts them in a group aggregate
// (RewriteIntersectAllRule, RewriteMinusAllRule), and emits the change
// of the row's multiplicity in the result: +I for each copy gained, -D
// for each lost. A copy is emitted when it is certain, so INTERSECT
// over insert-only inputs is insert-only, as Flink's semi join does;
// EXCEPT retracts a row when the right side gains it, as Flink's anti
// join does. In batch mode the final multiplicities are emitted at the
// end.
type SetOp struct {
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	kind              SetOpKind
	width             int // columns of a row, without the side
	batch             bool
	ids               *state.KeyIDs
	rows              []row.Row  // per id: the row
	counts            [][2]int64 // per id: left and right copies
	cols              []int
	kbuf              []byte
	// With a state TTL a row not changed for that long is forgotten
	// (its counts start again from 0, and a retraction of it is
	// dropped), as Flink's group aggregate forgets a key.
	ttl state.TTLList
	operator.Expiry
}

// NewSetOp builds the operator over rows of width columns plus the side.
func NewSetOp(kind SetOpKind, width int, batch bool) (*SetOp, error) {
	if kind < Intersect || kind > ExceptAll {
		return nil, fmt.Errorf("set operation: unknown kind %d", kind)
	}
	s := &SetOp{kind: kind, width: width, batch: batch, ids: state.NewKeyIDs(), cols: make([]int, width)}
	for i := range s.cols {
		s.cols[i] = i
	}
	s.InitExpiry(s.ttl.Set, s.ttl.Tick, s.sweep)
	return s, nil
}

// Process counts each change and emits the result's change.
func (s *SetOp) Process(in *row.Batch, out operator.Emitter) error {
	defer s.Begin(len(in.Changes))()
	return operator.EachChange(s.kind.String(), in, out, func(_ int, c *row.Change) error {
		if len(c.Row) != s.width+1 {
			return fmt.Errorf("row of %d columns, want %d and the side", len(c.Row), s.width)
		}
		side := c.Row[s.width].Int64()
		if side != 0 && side != 1 {
			return fmt.Errorf("side %d, want 0 or 1", side)
		}
		delta := int64(1)
		if c.Kind == row.UpdateBefore || c.Kind == row.Delete {
			delta = -1
		}
		s.kbuf = row.KeyOf(s.kbuf[:0], c.Row, s.cols)
		id, ok := s.ids.Find(s.kbuf)
		if ok && s.ttl.Expired(id) {
			s.drop(id)
			ok = false
		}
		if !ok && delta < 0 {
			return nil // a retraction of a row forgotten by the TTL
		}
		if !ok {
			var fresh bool
			id, fresh = s.ids.Add(s.kbuf)
			if fresh {
				s.rows, s.counts = append(s.rows, nil), append(s.counts, [2]int64{})
			}
			s.rows[id], s.counts[id] = c.Row[:s.width:s.width], [2]int64{}
		}
		cnt := &s.counts[id]
		before := s.kind.times(cnt[0], cnt[1])
		cnt[side] += delta
		r := s.rows[id]
		if cnt[0] == 0 && cnt[1] == 0 {
			s.drop(id)
		} else {
			s.ttl.Touch(id)
		}
		if !s.batch {
			emitCopies(out, r, s.kind.times(cnt[0], cnt[1])-before)
		}
		return nil
	})
}

// drop forgets row id.
func (s *SetOp) drop(id int32) {
	s.ids.Drop(row.KeyOf(nil, s.rows[id], s.cols))
	s.ttl.Drop(id)
	s.rows[id] = nil
}

func (s *SetOp) sweep(budget int) {
	s.ttl.Sweep(budget, func(id int32) bool {
		s.ids.Drop(row.KeyOf(nil, s.rows[id], s.cols))
		s.rows[id] = nil
		return true
	})
}

// emitCopies emits n copies of r: +I when n is positive, -D when not.
func emitCopies(out operator.Emitter, r row.Row, n int64) {
	kind := row.Insert
	if n < 0 {
		kind, n = row.Delete, -n
	}
	for range n {
		out.Emit(kind, r)
	}
}

func (s *SetOp) Watermark(int64, operator.Emitter) error { return nil }

// Finish emits the result in batch mode, in the order rows first came.
func (s *SetOp) Finish(out operator.Emitter) error {
	if !s.batch {
		return nil
	}
	for id, r := range s.rows {
		if r != nil {
			emitCopies(out, r, s.kind.times(s.counts[id][0], s.counts[id][1]))
		}
	}
	return nil
}

// StateEntries implements StateSizer: the distinct rows counted.
func (s *SetOp) StateEntries() int64 { return int64(s.ids.Len()) }

const setOpStateVersion = 1

// Snapshot encodes a version byte, the number of rows, then each row
// (row.AppendRow) with its left and right counts and its last change in
// milliseconds (0 without a TTL): in id order, or the oldest first with
// a TTL.
func (s *SetOp) Snapshot() ([]byte, error) {
	buf := []byte{setOpStateVersion}
	buf = row.AppendValue(buf, row.BigIntValue(int64(s.ids.Len())))
	add := func(id int32, at int64) {
		buf = row.AppendRow(buf, s.rows[id])
		buf = row.AppendValue(buf, row.BigIntValue(s.counts[id][0]))
		buf = row.AppendValue(buf, row.BigIntValue(s.counts[id][1]))
		buf = row.AppendValue(buf, row.BigIntValue(at))
	}
	if s.ttl.On() {
		s.ttl.Each(add)
		return buf, nil
	}
	for id, r := range s.rows {
		if r != nil {
			add(int32(id), 0)
		}
	}
	return buf, nil
}

// Restore replaces the counts with a snapshot's.
func (s *SetOp) Restore(snap []byte) error {
	dec := s.Decoder(snap)
	if v := dec.Byte(); v != setOpStateVersion {
		return fmt.Errorf("%s: state version %d, want %d", s.kind, v, setOpStateVersion)
	}
	n := dec.Value().Int64()
	ids := state.NewKeyIDs()
	var rows []row.Row
	var counts [][2]int64
	var ats []int64
	var kbuf []byte
	for i := int64(0); i < n && dec.Err() == nil; i++ {
		r := dec.Row()
		l, rc, at := dec.Value().Int64(), dec.Value().Int64(), dec.Value().Int64()
		if dec.Err() != nil {
			break
		}
		if len(r) != s.width {
			dec.Fail("row %d has %d columns, want %d", i, len(r), s.width)
			break
		}
		kbuf = row.KeyOf(kbuf[:0], r, s.cols)
		if _, dup := ids.Find(kbuf); dup {
			dec.Fail("row %d repeats a row", i)
			break
		}
		ids.Add(kbuf)
		rows, counts, ats = append(rows, r), append(counts, [2]int64{l, rc}), append(ats, at)
	}
	if err := dec.End(); err != nil {
		return fmt.Errorf("%s: restore: %w", s.kind, err)
	}
	s.ids, s.rows, s.counts = ids, rows, counts
	if s.ttl.On() {
		c := operator.StateTTL{TTL: time.Duration(s.ttl.TTL) * time.Millisecond, Now: s.ttl.Now}
		clock := s.ttl.Clock
		s.ttl = state.TTLList{}
		s.ttl.Set(c)
		s.ttl.Clock = clock
		s.ttl.Tick()
		for id, at := range ats {
			if at == 0 {
				at = s.ttl.Clock // a snapshot taken without a TTL
			}
			s.ttl.TouchAt(int32(id), at)
		}
	}
	return nil
}

var (
	_ operator.Operator    = (*SetOp)(nil)
	_ operator.Snapshotter = (*SetOp)(nil)
	_ operator.StateSizer  = (*SetOp)(nil)
	_ operator.TTLSetter   = (*SetOp)(nil)
	_ operator.Sweeper     = (*SetOp)(nil)
)
