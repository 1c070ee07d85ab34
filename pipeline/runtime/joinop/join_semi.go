package joinop

import (
	"math"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// The changes of a semi and an anti join (IN, EXISTS and their negations)
// and of a null-aware anti join (NOT IN): they emit left rows only, and
// a left row's visibility follows how many right rows match it.

// semiChange is a change of a semi or anti join: the left rows carry how
// many right rows match them, and are emitted (semi) or retracted (anti)
// when that goes from 0 to 1, and the reverse when it goes back to 0.
func (j *Join) semiChange(side int, k row.Kind, r row.Row, out operator.Emitter) error {
	this, other := j.sides[side], j.sides[1-side]
	anti := j.spec.Kind == AntiJoin
	add := k.IsAdd()
	null := this.key(r)
	if side == 0 {
		matched, err := j.countMatches(r, null)
		if err != nil {
			return err
		}
		if (matched > 0) != anti {
			out.Emit(k, r)
		}
		if null || j.probes(0) {
			return nil
		}
		return store(this, add, r, matched)
	}
	if null {
		return nil
	}
	if kid, ok := other.live(this.cur()); ok {
		for rid := range other.rows(kid) {
			ok, err := j.matches(1, r, rid)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			count, assoc := other.counts(rid)
			var emit bool
			if add {
				if assoc == math.MaxInt32 {
					return errJoinCount
				}
				assoc++
				emit = assoc == 1
			} else if assoc > 0 {
				assoc--
				emit = assoc == 0
			}
			other.setAssoc(rid, assoc)
			other.touch(rid)
			if emit && !j.spec.Batch {
				kind := row.Insert
				if add == anti {
					kind = row.Delete
				}
				for range count {
					out.Emit(kind, other.row(rid))
				}
			}
		}
	}
	return store(this, add, r, 0)
}

// countMatches counts the right rows that match the left row r, whose
// key is in the left side's kbuf (none when it is NULL).
func (j *Join) countMatches(r row.Row, null bool) (int, error) {
	if null {
		return 0, nil
	}
	right := j.sides[1]
	kid, ok := right.live(j.sides[0].cur())
	if !ok {
		return 0, nil
	}
	matched := 0
	for rid := range right.rows(kid) {
		ok, err := j.matches(0, r, rid)
		if err != nil {
			return 0, err
		}
		if ok {
			count, _ := right.counts(rid)
			matched += int(count)
		}
	}
	return matched, nil
}

// notInVisible reports whether a left row of a null-aware anti join
// passes, given its matches and whether its key is NULL.
func (j *Join) notInVisible(assoc int32, nullKey bool, rows, nulls int64) bool {
	if rows == 0 {
		return true
	}
	return !nullKey && nulls == 0 && assoc == 0
}

// notInChange is a change of a null-aware anti join (NOT IN). A right
// change that empties the right side or adds its first NULL key (or the
// reverse) changes the answer for every left row: they are all looked
// at then; otherwise only the left rows of the right row's key are.
func (j *Join) notInChange(side int, k row.Kind, r row.Row, out operator.Emitter) error {
	add := k.IsAdd()
	this := j.sides[side]
	null := this.key(r)
	if side == 0 {
		matched, err := j.countMatches(r, null)
		if err != nil {
			return err
		}
		if j.notInVisible(int32(min(matched, 1)), null, j.rightRows, j.rightNulls) {
			out.Emit(k, r)
		}
		if j.probes(0) {
			return nil
		}
		s := this
		if null {
			s = j.leftNulls
			s.kbuf = s.kbuf[:0]
		}
		return store(s, add, r, matched)
	}
	d := int64(1)
	if !add {
		d = -1
	}
	rows, nulls := j.rightRows+d, j.rightNulls
	if null {
		nulls += d
	}
	affected := j.notInAffected(null, rows, nulls)
	j.rightRows, j.rightNulls = rows, nulls
	if !null {
		if err := j.notInMatch(r, add); err != nil {
			return err
		}
		if err := store(this, add, r, 0); err != nil {
			return err
		}
	}
	if j.spec.Batch {
		return nil
	}
	for _, a := range affected {
		count, assoc := a.s.counts(a.rid)
		after := j.notInVisible(assoc, a.null, rows, nulls)
		if after == a.before {
			continue
		}
		for range count {
			out.Emit(padKind(after), a.s.row(a.rid))
		}
	}
	return nil
}

// notInSeen is a left row of a null-aware anti join whose visibility a
// right change may change, with its visibility before the change.
type notInSeen struct {
	s      *joinSide
	rid    rowRef
	null   bool
	before bool
}

// notInAffected returns the left rows whose visibility may change when
// the right side goes to rows rows and nulls NULL keys by a change
// whose key (in the right side's kbuf) is NULL or not.
func (j *Join) notInAffected(null bool, rows, nulls int64) []notInSeen {
	var affected []notInSeen
	note := func(s *joinSide, rid rowRef, null bool) {
		_, assoc := s.counts(rid)
		affected = append(affected, notInSeen{s, rid, null, j.notInVisible(assoc, null, j.rightRows, j.rightNulls)})
	}
	left := j.sides[0]
	if (rows == 0) != (j.rightRows == 0) || (nulls == 0) != (j.rightNulls == 0) {
		for _, s := range []*joinSide{left, j.leftNulls} {
			for _, rid := range s.eachRow {
				if !s.ttl.Expired(int32(rid)) {
					note(s, rid, s == j.leftNulls)
				}
			}
		}
	} else if !null {
		if kid, ok := left.live(j.sides[1].cur()); ok {
			for rid := range left.rows(kid) {
				note(left, rid, false)
			}
		}
	}
	return affected
}

// notInMatch counts the right row r, whose key is in the right side's
// kbuf and not NULL, in (add) or out of the matches of the left rows it
// matches.
func (j *Join) notInMatch(r row.Row, add bool) error {
	left := j.sides[0]
	kid, ok := left.live(j.sides[1].cur())
	if !ok {
		return nil
	}
	for rid := range left.rows(kid) {
		ok, err := j.matches(1, r, rid)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		_, assoc := left.counts(rid)
		if add {
			if assoc == math.MaxInt32 {
				return errJoinCount
			}
			assoc++
		} else if assoc > 0 {
			assoc--
		}
		left.setAssoc(rid, assoc)
		left.touch(rid)
	}
	return nil
}
