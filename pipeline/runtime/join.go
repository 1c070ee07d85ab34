package runtime

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// JoinKind is the kind of a regular (unwindowed) join.
type JoinKind uint8

const (
	InnerJoin JoinKind = iota
	LeftJoin
	RightJoin
	FullJoin
	// SemiJoin emits the left rows that have a match (IN, EXISTS),
	// AntiJoin those that have none (NOT IN, NOT EXISTS). Both emit
	// left rows only.
	SemiJoin
	AntiJoin
)

// String is Flink's name of the join type, as explain shows it.
func (k JoinKind) String() string {
	return [...]string{"InnerJoin", "LeftOuterJoin", "RightOuterJoin", "FullOuterJoin", "LeftSemiJoin", "LeftAntiJoin"}[k]
}

// JoinSpec describes a join of a left input (side 0) and a right input
// (side 1). The output row is the left row followed by the right row
// (the left row alone for semi and anti joins).
type JoinSpec struct {
	Kind                JoinKind
	LeftKeys, RightKeys []int
	// LeftUnique and RightUnique are an input's unique (upsert) key, nil
	// when it has none: a row is then identified by that key in the
	// side's state and replaced by the next one of the same key, instead
	// of being counted by its whole value (Flink's JoinInputSideSpec).
	LeftUnique, RightUnique []int
	// LeftAppendOnly and RightAppendOnly say an input is insert-only:
	// its rows are never retracted, so the side stores each row as it
	// comes, without the identity (the whole row's encoding) that finds
	// a row again to retract it (Flink's JoinInputSideSpec without a
	// unique key still keys them by the row; the output is the same).
	LeftAppendOnly, RightAppendOnly bool
	LeftWidth, RightWidth           int
	// Residual, if set, is the non-equality part of the ON condition,
	// evaluated on the joined row (left followed by right).
	Residual func(joined row.Row) (bool, error)
	// NullAware, for an anti join, is NOT IN's NULL rule: a left row
	// passes only when the right side is empty, or when its key is not
	// NULL, no right key is NULL and no right row matches it.
	NullAware bool
	// Batch: the inputs are bounded and the result final. Right rows are
	// kept, left rows held until both inputs ended; Finish then emits
	// insert-only results.
	Batch bool
}

// joinEntry is one distinct row of a side's state: how many times it is
// there and, for the outer side of an outer join (the left side of a
// semi or anti join), with how many rows of the other side it matches
// (Flink's OuterJoinRecordStateView).
type joinEntry struct {
	row   row.Row
	count int
	assoc int
}

// joinSide is one input's state: rows by join key, then by identity (the
// unique key's value, or the whole row).
type joinSide struct {
	keys   []int
	unique []int
	all    []int
	// appendOnly: rows are stored without an identity (JoinSpec's
	// LeftAppendOnly); never with a unique key or a TTL, which need one.
	appendOnly bool
	rows       *joinKeys
	size       int64
	kbuf       []byte
	ibuf       []byte
	// ttl is the state TTL per stored row (join_ttl.go); onExpire, if
	// set, is told of each row it drops.
	ttl      ttlKeys[joinRef]
	onExpire func(*joinEntry)
}

func newJoinSide(keys, unique []int, width int) *joinSide {
	all := make([]int, width)
	for i := range all {
		all[i] = i
	}
	return &joinSide{keys: keys, unique: unique, all: all, rows: newJoinKeys()}
}

// key encodes r's join key; null reports a NULL in it: such a row never
// matches (SQL's = is never true on NULL).
func (s *joinSide) key(r row.Row) (key string, null bool) {
	for _, k := range s.keys {
		if r[k].IsNull() {
			return "", true
		}
	}
	s.kbuf = row.KeyOf(s.kbuf[:0], r, s.keys)
	return string(s.kbuf), false
}

func (s *joinSide) ident(r row.Row) string {
	if s.unique != nil {
		s.ibuf = row.KeyOf(s.ibuf[:0], r, s.unique)
	} else {
		s.ibuf = row.KeyOf(s.ibuf[:0], r, s.all)
	}
	return string(s.ibuf)
}

// add stores r under key with assoc matches and returns its entry.
func (s *joinSide) add(key string, r row.Row, assoc int) {
	m := s.rows.get(key)
	if m == nil {
		m = s.rows.add(key)
	}
	if s.appendOnly {
		m.put("", &joinEntry{row: r, count: 1, assoc: assoc})
		s.size++
		return
	}
	id := s.ident(r)
	if s.ttl.on() {
		s.expireRow(key, id)
		if m = s.rows.get(key); m == nil {
			m = s.rows.add(key)
		}
		defer s.ttl.touch(joinRef{key, id})
	}
	if e := m.get(id); e != nil {
		if s.unique != nil {
			e.row, e.count, e.assoc = r, 1, assoc
		} else {
			e.count++
		}
		return
	}
	m.put(id, &joinEntry{row: r, count: 1, assoc: assoc})
	s.size++
}

// remove takes one r out of key's rows; a row that is not there (never
// seen, or restored from before) is ignored, as Flink does.
func (s *joinSide) remove(key string, r row.Row) {
	m := s.rows.get(key)
	id := s.ident(r)
	if s.expireRow(key, id) {
		return
	}
	if m == nil {
		return
	}
	e := m.get(id)
	if e == nil {
		return
	}
	if e.count--; e.count <= 0 || s.unique != nil {
		m.del(id)
		s.size--
		if m.len() == 0 {
			s.rows.remove(key)
		}
		s.ttl.drop(joinRef{key, id})
		return
	}
	s.ttl.touch(joinRef{key, id})
}

// Join is a regular join of two inputs (Flink's StreamingJoinOperator and
// StreamingSemiAntiJoinOperator): each side keeps its rows by join key; a
// change on one side is joined with the other side's rows of its key. An
// outer side's row without a match is emitted padded with NULLs; when its
// first match arrives the padded row is retracted (-D) and the joined one
// inserted, and when its last match leaves, the reverse.
type Join struct {
	spec  JoinSpec
	sides [2]*joinSide
	outer [2]bool
	// held are the left changes of a batch join, joined at Finish.
	held []row.Change
	// nullRight are a batch outer join's right changes with a NULL key.
	nullRight []row.Change
	settled   bool // Finish ran: a batch join emits nothing more
	// A null-aware anti join (NOT IN) also keeps the left rows whose
	// key is NULL and counts the right rows, and those with a NULL key.
	leftNulls             *joinSide
	rightRows, rightNulls int64
	ttl                   StateTTL // join_ttl.go
}

var (
	_ Operator    = (*Join)(nil)
	_ TwoInput    = (*Join)(nil)
	_ Snapshotter = (*Join)(nil)
	_ StateSizer  = (*Join)(nil)
)

// TwoInput is an operator of two inputs. The node gives it each batch
// with the number of the input it came from (0 left, 1 right); Process is
// not called.
type TwoInput interface {
	ProcessInput(input int, in *row.Batch, out Emitter) error
}

// NewJoin returns a join with empty state.
func NewJoin(spec JoinSpec) *Join {
	j := &Join{spec: spec}
	j.sides[0] = newJoinSide(spec.LeftKeys, spec.LeftUnique, spec.LeftWidth)
	j.sides[1] = newJoinSide(spec.RightKeys, spec.RightUnique, spec.RightWidth)
	j.sides[0].appendOnly = spec.LeftAppendOnly && spec.LeftUnique == nil
	j.sides[1].appendOnly = spec.RightAppendOnly && spec.RightUnique == nil
	j.leftNulls = newJoinSide(nil, spec.LeftUnique, spec.LeftWidth)
	switch spec.Kind {
	case LeftJoin, SemiJoin, AntiJoin:
		j.outer[0] = true
	case RightJoin:
		j.outer[1] = true
	case FullJoin:
		j.outer = [2]bool{true, true}
	}
	return j
}

func (j *Join) semi() bool { return j.spec.Kind == SemiJoin || j.spec.Kind == AntiJoin }

// Process is not used: a join has two inputs (ProcessInput).
func (j *Join) Process(in *row.Batch, out Emitter) error {
	return fmt.Errorf("join: a batch without its input number")
}

// ProcessInput implements TwoInput.
func (j *Join) ProcessInput(input int, in *row.Batch, out Emitter) error {
	if j.ttl.TTL > 0 {
		j.tick()
		defer j.sweep(sweepBudget(len(in.Changes)))
	}
	tr := trackerOf(in, out)
	for i, c := range in.Changes {
		if tr != nil {
			tr.at(i)
		}
		if j.spec.Batch && input == 0 {
			j.held = append(j.held, c)
			continue
		}
		if err := j.change(input, c.Kind, c.Row, out); err != nil {
			return err
		}
	}
	return nil
}

func (j *Join) Watermark(int64, Emitter) error { return nil }

// Finish joins a batch join's held left rows with the complete right
// side and emits the right rows that found no match.
func (j *Join) Finish(out Emitter) error {
	if !j.spec.Batch || j.settled {
		return nil
	}
	j.settled = true
	for _, c := range j.held {
		if err := j.change(0, c.Kind, c.Row, out); err != nil {
			return err
		}
	}
	j.held = nil
	if j.outer[1] {
		for _, c := range j.nullRight {
			if c.Kind.IsAdd() {
				out.Emit(row.Insert, j.padded(1, c.Row))
			}
		}
		j.nullRight = nil
		for _, m := range j.sides[1].rows.all {
			for _, e := range m.all {
				if e.assoc == 0 {
					for range e.count {
						out.Emit(row.Insert, j.padded(1, e.row))
					}
				}
			}
		}
	}
	return nil
}

// joined returns the output row of a left and a right row.
func (j *Join) joined(side int, this, other row.Row) row.Row {
	l, r := this, other
	if side == 1 {
		l, r = other, this
	}
	out := make(row.Row, 0, len(l)+len(r))
	return append(append(out, l...), r...)
}

// padded returns side's row with NULLs for the other side's columns.
func (j *Join) padded(side int, r row.Row) row.Row {
	return padRow(side, r, j.spec.LeftWidth, j.spec.RightWidth)
}

// padRow returns side's row r (0 left, 1 right) as a joined row of
// leftWidth+rightWidth columns, NULL in the other side's.
func padRow(side int, r row.Row, leftWidth, rightWidth int) row.Row {
	out := make(row.Row, leftWidth+rightWidth) // zero Values are NULL
	if side == 0 {
		copy(out, r)
	} else {
		copy(out[leftWidth:], r)
	}
	return out
}

// matchOf reports whether this (of side) and other satisfy the residual.
func (j *Join) matchOf(side int, this, other row.Row) (bool, error) {
	if j.spec.Residual == nil {
		return true, nil
	}
	return j.spec.Residual(j.joined(side, this, other))
}

// emitting reports whether the right side's padded rows were emitted: a
// batch join emits them only at the end.
func (j *Join) emitting(side int) bool { return !j.spec.Batch || side == 0 }

func (j *Join) change(side int, k row.Kind, r row.Row, out Emitter) error {
	if j.spec.NullAware {
		return j.notInChange(side, k, r, out)
	}
	if j.semi() {
		return j.semiChange(side, k, r, out)
	}
	this, other := j.sides[side], j.sides[1-side]
	thisOuter, otherOuter := j.outer[side], j.outer[1-side]
	add := k.IsAdd()
	key, null := this.key(r)
	if null {
		switch {
		case thisOuter && j.emitting(side):
			out.Emit(padKind(add), j.padded(side, r))
		case thisOuter:
			// A batch join's right row that can never match: emitted
			// padded at the end with the other unmatched ones.
			j.nullRight = append(j.nullRight, row.Change{Kind: k, Row: r})
		}
		return nil
	}
	matched := 0
	for id, e := range other.live(key).all {
		ok, err := j.matchOf(side, r, e.row)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		matched += e.count
		if otherOuter {
			if add {
				if e.assoc == 0 && j.emitting(1-side) {
					for range e.count {
						out.Emit(row.Delete, j.padded(1-side, e.row))
					}
				}
				e.assoc++
			} else if e.assoc > 0 {
				e.assoc--
			}
			other.touch(key, id)
		}
		for range e.count {
			out.Emit(k, j.joined(side, r, e.row))
		}
		if otherOuter && !add && e.assoc == 0 && j.emitting(1-side) {
			for range e.count {
				out.Emit(row.Insert, j.padded(1-side, e.row))
			}
		}
	}
	if thisOuter && matched == 0 && j.emitting(side) {
		out.Emit(padKind(add), j.padded(side, r))
	}
	if add {
		this.add(key, r, matched)
	} else {
		this.remove(key, r)
	}
	return nil
}

// semiChange is a change of a semi or anti join: the left rows carry how
// many right rows match them, and are emitted (semi) or retracted (anti)
// when that goes from 0 to 1, and the reverse when it goes back to 0.
func (j *Join) semiChange(side int, k row.Kind, r row.Row, out Emitter) error {
	this, other := j.sides[side], j.sides[1-side]
	anti := j.spec.Kind == AntiJoin
	add := k.IsAdd()
	key, null := this.key(r)
	if side == 0 {
		matched := 0
		if !null {
			for _, e := range other.live(key).all {
				ok, err := j.matchOf(0, r, e.row)
				if err != nil {
					return err
				}
				if ok {
					matched += e.count
				}
			}
		}
		if (matched > 0) != anti {
			out.Emit(k, r)
		}
		if !null {
			if add {
				this.add(key, r, matched)
			} else {
				this.remove(key, r)
			}
		}
		return nil
	}
	if null {
		return nil
	}
	for id, e := range other.live(key).all {
		ok, err := j.matchOf(1, r, e.row)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		var emit bool
		if add {
			e.assoc++
			emit = e.assoc == 1
		} else if e.assoc > 0 {
			e.assoc--
			emit = e.assoc == 0
		}
		other.touch(key, id)
		if emit && !j.spec.Batch {
			kind := row.Insert
			if add == anti {
				kind = row.Delete
			}
			for range e.count {
				out.Emit(kind, e.row)
			}
		}
	}
	if add {
		this.add(key, r, 0)
	} else {
		this.remove(key, r)
	}
	return nil
}

// notInVisible reports whether a left row of a null-aware anti join
// passes, given its matches and whether its key is NULL.
func (j *Join) notInVisible(assoc int, nullKey bool, rows, nulls int64) bool {
	if rows == 0 {
		return true
	}
	return !nullKey && nulls == 0 && assoc == 0
}

// notInChange is a change of a null-aware anti join (NOT IN). A right
// change that empties the right side or adds its first NULL key (or the
// reverse) changes the answer for every left row: they are all looked
// at then; otherwise only the left rows of the right row's key are.
func (j *Join) notInChange(side int, k row.Kind, r row.Row, out Emitter) error {
	add := k.IsAdd()
	this, other := j.sides[side], j.sides[1-side]
	key, null := this.key(r)
	if side == 0 {
		matched := 0
		if !null {
			for _, e := range other.live(key).all {
				ok, err := j.matchOf(0, r, e.row)
				if err != nil {
					return err
				}
				if ok {
					matched += e.count
				}
			}
		}
		if j.notInVisible(matched, null, j.rightRows, j.rightNulls) {
			out.Emit(k, r)
		}
		store, skey := this, key
		if null {
			store, skey = j.leftNulls, ""
		}
		if add {
			store.add(skey, r, matched)
		} else {
			store.remove(skey, r)
		}
		return nil
	}
	d := int64(1)
	if !add {
		d = -1
	}
	rows, nulls := j.rightRows+d, j.rightNulls
	if null {
		nulls += d
	}
	type seen struct {
		e      *joinEntry
		null   bool
		before bool
	}
	var affected []seen
	note := func(e *joinEntry, null bool) {
		affected = append(affected, seen{e, null, j.notInVisible(e.assoc, null, j.rightRows, j.rightNulls)})
	}
	if (rows == 0) != (j.rightRows == 0) || (nulls == 0) != (j.rightNulls == 0) {
		for k, m := range j.sides[0].rows.all {
			for id, e := range m.all {
				if !j.sides[0].ttl.expired(joinRef{k, id}) {
					note(e, false)
				}
			}
		}
		for k, m := range j.leftNulls.rows.all {
			for id, e := range m.all {
				if !j.leftNulls.ttl.expired(joinRef{k, id}) {
					note(e, true)
				}
			}
		}
	} else if !null {
		for _, e := range j.sides[0].live(key).all {
			note(e, false)
		}
	}
	j.rightRows, j.rightNulls = rows, nulls
	if !null {
		for id, e := range j.sides[0].live(key).all {
			ok, err := j.matchOf(1, r, e.row)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if add {
				e.assoc++
			} else if e.assoc > 0 {
				e.assoc--
			}
			j.sides[0].touch(key, id)
		}
		if add {
			this.add(key, r, 0)
		} else {
			this.remove(key, r)
		}
	}
	if j.spec.Batch {
		return nil
	}
	for _, a := range affected {
		after := j.notInVisible(a.e.assoc, a.null, rows, nulls)
		if after == a.before {
			continue
		}
		for range a.e.count {
			out.Emit(padKind(after), a.e.row)
		}
	}
	return nil
}

func padKind(add bool) row.Kind {
	if add {
		return row.Insert
	}
	return row.Delete
}

// StateEntries implements StateSizer: the distinct rows kept on both
// sides (and a batch join's held left changes).
func (j *Join) StateEntries() int64 {
	return j.sides[0].size + j.sides[1].size + j.leftNulls.size + int64(len(j.held)+len(j.nullRight))
}

const joinStateVersion = 1

// Snapshot implements Snapshotter: each side's entries (row, count,
// association count), then a batch join's held left changes.
func (j *Join) Snapshot() ([]byte, error) {
	buf := []byte{j.stateVersion()}
	if j.settled {
		buf = append(buf, 1)
	} else {
		buf = append(buf, 0)
	}
	for _, s := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
		buf = binary.AppendUvarint(buf, uint64(s.size))
		for k, m := range s.rows.all {
			for id, e := range m.all {
				buf = row.AppendRow(buf, e.row)
				buf = binary.AppendUvarint(buf, uint64(e.count))
				buf = binary.AppendUvarint(buf, uint64(e.assoc))
				buf = s.appendTime(buf, k, id)
			}
		}
	}
	buf = binary.AppendVarint(buf, j.rightRows)
	buf = binary.AppendVarint(buf, j.rightNulls)
	for _, cs := range [][]row.Change{j.held, j.nullRight} {
		buf = binary.AppendUvarint(buf, uint64(len(cs)))
		for _, c := range cs {
			buf = append(buf, byte(c.Kind))
			buf = row.AppendRow(buf, c.Row)
		}
	}
	return buf, nil
}

// Restore implements Snapshotter.
func (j *Join) Restore(state []byte) error {
	d := row.NewDecoder(state)
	v := d.Byte()
	if v != joinStateVersion && v != joinTTLStateVersion {
		return fmt.Errorf("join: state version %d, want %d or %d", v, joinStateVersion, joinTTLStateVersion)
	}
	timed := v == joinTTLStateVersion
	settled := d.Byte() == 1
	widths := [3]int{j.spec.LeftWidth, j.spec.RightWidth, j.spec.LeftWidth}
	var restored [3]*joinSide
	for i, old := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
		s := newJoinSide(old.keys, old.unique, widths[i])
		s.appendOnly = old.appendOnly
		s.onExpire = old.onExpire
		rt := j.restoreTimes(s)
		n := d.Count(1)
		for range n {
			r := d.Row()
			count, assoc := int(d.Uvarint()), int(d.Uvarint())
			at := int64(0)
			if timed {
				at = d.Varint()
			}
			if d.Err() != nil {
				break
			}
			if len(r) != widths[i] {
				d.Fail("row of %d columns on side %d, want %d", len(r), i, widths[i])
				break
			}
			key, null := s.key(r)
			if null {
				d.Fail("row with a NULL join key in the state")
				break
			}
			for range count {
				s.add(key, r, assoc)
			}
			if s.unique == nil && !s.appendOnly {
				s.rows.get(key).get(s.ident(r)).assoc = assoc
			}
			rt.note(key, s.ident(r), at)
		}
		rt.apply(timed)
		restored[i] = s
	}
	rightRows, rightNulls := d.Varint(), d.Varint()
	changes := func() []row.Change {
		n := d.Count(2)
		out := make([]row.Change, 0, n)
		for range n {
			k := row.Kind(d.Byte())
			r := d.Row()
			if d.Err() != nil {
				break
			}
			out = append(out, row.Change{Kind: k, Row: r})
		}
		return out
	}
	held := changes()
	nullRight := changes()
	if err := d.End(); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	j.sides[0], j.sides[1], j.leftNulls = restored[0], restored[1], restored[2]
	j.rightRows, j.rightNulls = rightRows, rightNulls
	j.held, j.nullRight, j.settled = held, nullRight, settled
	return nil
}
