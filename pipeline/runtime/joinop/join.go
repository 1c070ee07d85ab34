package joinop

import (
	"fmt"
	"math"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
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
	// NullSafe, by key, marks the keys compared with IS NOT DISTINCT FROM
	// (Flink's filterNulls false): a NULL key matches a NULL key. Nil:
	// every key is compared with =.
	NullSafe []bool
	// LeftAppendOnly and RightAppendOnly say an input is insert-only:
	// its rows are never retracted, so the side stores each row as it
	// comes, without the identity (the whole row's encoding) that finds
	// a row again to retract it (Flink's JoinInputSideSpec without a
	// unique key still keys them by the row; the output is the same).
	LeftAppendOnly, RightAppendOnly bool
	LeftWidth, RightWidth           int
	// LeftTypes and RightTypes are the inputs' column types, by which an
	// append-only side stores its rows (row.Layout); nil when not known,
	// which stores each value with its type.
	LeftTypes, RightTypes []row.TypeID
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
	// RightFirst, with Batch, says every right change arrives before the
	// first left one (the union in front reads the right input to its
	// end first: runtime.UnionNode.BuildFirst): a hash join. The right
	// side is the build table; each left change is joined as it comes
	// instead of being held to the end, and an insert-only left side
	// keeps none of its rows, since no right change can come to match
	// them. Finish emits the right rows that found no match.
	RightFirst bool
	// Output, if set, is the columns of the joined row (left then
	// right) the join emits, in their order: the projection of a Calc
	// that only picks columns, done by the join (the planner sets it
	// for a batch or streaming join of an INNER, LEFT, RIGHT or FULL
	// kind whose one reader is such a Calc). Without a residual, a
	// joined row is built of those columns only (a probe of the probe
	// table, a streaming change); the other rows (padded ones, and
	// joined ones a residual reads whole) are projected as emitted.
	// Retractions are projected as the rows they take back were. A
	// column -1 is NULL: one the join's readers never read, dropped
	// from its inputs (the planner's narrowing of a batch join).
	Output []int
	// Narrowed, by side, are the columns of the input's whole row that
	// the side's rows keep, when the planner narrowed them (nil: not
	// narrowed): a snapshot of the join over whole rows (of
	// WholeWidth columns) restores, its rows cut to those columns.
	Narrowed   [2][]int
	WholeWidth [2]int
	// LeftKeep and RightKeep, if set, are a filter the planner moved
	// from a WHERE over the join into a Calc below it, on that input's
	// rows: the join drops a restored row it is false of, which a
	// checkpoint of the plan before the move kept (the join's state ID
	// and fingerprint are the same). Only on an INNER join: an outer
	// side's restored match counts would still count the dropped rows.
	LeftKeep, RightKeep func(r row.Row) (bool, error)
}

// Join is a regular join of two inputs (Flink's StreamingJoinOperator and
// StreamingSemiAntiJoinOperator): each side keeps its rows by join key; a
// change on one side is joined with the other side's rows of its key. An
// outer side's row without a match is emitted padded with NULLs; when its
// first match arrives the padded row is retracted (-D) and the joined one
// inserted, and when its last match leaves, the reverse.
type Join struct {
	// A restore retags saved values of widened columns, by column
	// (operator.ColumnWidener): each side's rows by its own columns.
	operator.ColumnWidening
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
	// ttl is the state TTL the sides keep ages by (join_ttl.go), kept
	// to give it to the sides a restore makes.
	ttl operator.StateTTL
	operator.Expiry
	// slab and text hold the rows the join emits and their strings
	// decoded from the state: a joined row costs no allocation of its
	// own, nor do its strings one each.
	slab rowSlab
	text row.Text
	// hash is a batch hash join's probe table of its right side
	// (join_hash.go): a direct join's from the start, its right side's
	// only state; another's built at the first left batch, nil before
	// and after anything that could change the right side.
	hash *hashTable
	// direct: a batch hash join whose right side is insert-only adds
	// its right rows to hash alone, not to sides[1].
	direct bool
	// rightRow is where a probe decodes a right row whose columns it
	// picks (JoinSpec.Output).
	rightRow row.Row
	// otherRow, by the side of the change, is where a streaming change
	// decodes the other side's stored row whose columns it picks.
	otherRow [2]row.Row
	// readAhead's key ids, and the sum of what it read (kept, so that
	// the compiler keeps its loads).
	aheadIDs []int32
	touched  uint64
	// carver is the emitter's, during a call of ProcessInput (nil: rows
	// from slab).
	carver operator.RowCarver
}

// rowSlab carves rows out of slices of joinSlabValues values that many
// rows share, as a batch's rows are (row.Batch.NewRow): an operator
// that keeps a row detaches it.
type rowSlab struct {
	vals []row.Value
	used int
}

// joinSlabValues is the size of a rowSlab's slices, in values.
const joinSlabValues = 1024

// get returns a zeroed row of w columns.
func (s *rowSlab) get(w int) row.Row {
	if len(s.vals)-s.used < w {
		s.vals, s.used = make([]row.Value, max(w, joinSlabValues)), 0
	}
	r := s.vals[s.used : s.used+w : s.used+w]
	s.used += w
	return r
}

// pick returns the columns cols of r in a row of the slab; r itself
// when cols is nil (an interval join's Output: JoinSpec's -1 for a NULL
// column is the regular join's own).
func (s *rowSlab) pick(r row.Row, cols []int) row.Row {
	if cols == nil {
		return r
	}
	pr := s.get(len(cols))
	for k, c := range cols {
		pr[k] = r[c]
	}
	return pr
}

// unget gives back r, the last row get returned, no longer used.
func (s *rowSlab) unget(r row.Row) {
	clear(r)
	s.used -= len(r)
}

var (
	_ operator.TwoInput    = (*Join)(nil)
	_ operator.Snapshotter = (*Join)(nil)
	_ operator.StateSizer  = (*Join)(nil)
)

// NewJoin returns a join with empty state.
func NewJoin(spec JoinSpec) *Join {
	if spec.Kind == SemiJoin || spec.Kind == AntiJoin {
		spec.Output = nil // they emit the left rows
	}
	j := &Join{spec: spec}
	j.sides[0] = newJoinSide(spec.LeftKeys, spec.LeftUnique, spec.LeftWidth, spec.LeftTypes, newJoinIndex(&spec))
	j.sides[1] = newJoinSide(spec.RightKeys, spec.RightUnique, spec.RightWidth, spec.RightTypes, nil)
	pairJoinSides(j.sides[0], j.sides[1])
	j.sides[0].nullSafe, j.sides[1].nullSafe = spec.NullSafe, spec.NullSafe
	j.sides[0].appendOnly = spec.LeftAppendOnly && spec.LeftUnique == nil
	j.sides[1].appendOnly = spec.RightAppendOnly && spec.RightUnique == nil
	j.leftNulls = newJoinSide(nil, spec.LeftUnique, spec.LeftWidth, spec.LeftTypes, newBytesIndex())
	switch spec.Kind {
	case LeftJoin, SemiJoin, AntiJoin:
		j.outer[0] = true
	case RightJoin:
		j.outer[1] = true
	case FullJoin:
		j.outer = [2]bool{true, true}
	}
	// Only an outer side's rows count their matches.
	j.sides[0].noMatches, j.sides[1].noMatches = !j.outer[0], !j.outer[1]
	j.InitExpiry(j.armTTL, j.tick, j.sweep)
	if j.usesHash() && j.sides[1].appendOnly {
		j.direct = true
		j.hash = newHashTable(&j.spec, j.sides[1].layout)
	}
	return j
}

func (j *Join) semi() bool { return j.spec.Kind == SemiJoin || j.spec.Kind == AntiJoin }

// probes reports whether side's rows are only probed with, never
// stored: a hash join's insert-only left side, which comes after the
// whole right side (JoinSpec.RightFirst).
func (j *Join) probes(side int) bool {
	return side == 0 && j.spec.Batch && j.spec.RightFirst && j.spec.LeftAppendOnly
}

// ProcessInput implements TwoInput.
func (j *Join) ProcessInput(input int, in *row.Batch, out operator.Emitter) error {
	defer j.Begin(len(in.Changes))()
	if input == 0 && j.usesHash() {
		return j.probeBatch(in, out)
	}
	if input == 1 && j.direct && !j.settled {
		j.buildBatch(in)
		return nil
	}
	if input == 1 && !j.direct {
		j.hash = nil
	}
	// A change's picked rows may be cut from the emitter's slabs
	// (operator.RowCarver), for this call only.
	j.carver = operator.CarverOf(out)
	defer func() { j.carver = nil }()
	out = j.project(out)
	ahead := len(j.sides[0].keys) > 0 && !(j.spec.Batch && !j.spec.RightFirst && input == 0)
	return operator.EachChange("join", in, out, func(i int, c *row.Change) error {
		if j.spec.Batch && !j.spec.RightFirst && input == 0 {
			j.held = append(j.held, *c)
			return nil
		}
		if ahead && i%aheadRows == 0 {
			j.readAhead(input, in.Changes[i:min(i+aheadRows, len(in.Changes))])
		}
		return j.change(input, c.Kind, c.Row, out)
	})
}

func (j *Join) Watermark(int64, operator.Emitter) error { return nil }

// Finish joins a batch join's held left rows with the complete right
// side and emits the right rows that found no match.
func (j *Join) Finish(out operator.Emitter) error {
	if !j.spec.Batch || j.settled {
		return nil
	}
	j.settled = true
	if !j.direct {
		j.hash = nil
	}
	out = j.project(out)
	for _, c := range j.held {
		if err := j.change(0, c.Kind, c.Row, out); err != nil {
			return fmt.Errorf("join: %w", err)
		}
	}
	j.held = nil
	if j.outer[1] {
		j.emitNullRight(out)
		right := j.sides[1]
		for _, rid := range right.eachRow {
			if count, assoc := right.counts(rid); assoc == 0 {
				for range count {
					out.Emit(row.Insert, j.paddedStored(1, rid))
				}
			}
		}
	}
	return nil
}

// emitNullRight emits a batch outer join's right rows of a NULL key
// padded, those retracted since left out.
func (j *Join) emitNullRight(out operator.Emitter) {
	retracted := map[string]int{}
	var enc []byte
	for _, c := range j.nullRight {
		if !c.Kind.IsAdd() {
			enc = row.AppendRow(enc[:0], c.Row)
			retracted[string(enc)]++
		}
	}
	for _, c := range j.nullRight {
		if !c.Kind.IsAdd() {
			continue
		}
		if len(retracted) > 0 {
			enc = row.AppendRow(enc[:0], c.Row)
			if n := retracted[string(enc)]; n > 0 {
				retracted[string(enc)] = n - 1
				continue
			}
		}
		out.Emit(row.Insert, j.padded(1, c.Row))
	}
	j.nullRight = nil
}

// joinedStored returns the output row of this (of side) and the other
// side's stored row rid.
func (j *Join) joinedStored(side int, this row.Row, rid rowRef) row.Row {
	lw := j.spec.LeftWidth
	out := j.slab.get(lw + j.spec.RightWidth)
	if side == 0 {
		copy(out, this)
		j.sides[1].decodeInto(out[lw:], rid, &j.text)
	} else {
		copy(out[lw:], this)
		j.sides[0].decodeInto(out[:lw], rid, &j.text)
	}
	return out
}

// pickStored returns the columns pick (of the joined row, left then
// right) of this (of side) and the other side's stored row rid, which
// it decodes aside: a joined row of the emitted columns alone, carved
// from the emitter's slabs when it lends them (j.carver: the row must be
// the next one emitted).
func (j *Join) pickStored(side int, this row.Row, rid rowRef, pick []int) row.Row {
	other := j.sides[1-side]
	if len(j.otherRow[side]) != len(other.all) {
		j.otherRow[side] = make(row.Row, len(other.all))
	}
	stored := j.otherRow[side]
	other.decodeInto(stored, rid, &j.text)
	left, right := this, stored
	if side == 1 {
		left, right = stored, this
	}
	lw := j.spec.LeftWidth
	var pr row.Row
	if j.carver != nil {
		pr = j.carver.CarveRow(len(pick))
	} else {
		pr = j.slab.get(len(pick))
	}
	pickJoined(pr, pick, left, right, lw)
	return pr
}

// pickJoined sets pr to the columns pick of the joined row of left and
// right (left's lw columns first), NULL for a column -1 (JoinSpec.Output).
func pickJoined(pr row.Row, pick []int, left, right row.Row, lw int) {
	for k, col := range pick {
		switch {
		case col < 0:
			pr[k] = row.NullValue
		case col < lw:
			pr[k] = left[col]
		default:
			pr[k] = right[col-lw]
		}
	}
}

// padded returns side's row with NULLs for the other side's columns.
func (j *Join) padded(side int, r row.Row) row.Row {
	return padRow(side, r, j.spec.LeftWidth, j.spec.RightWidth)
}

// paddedStored is padded of side's stored row rid.
func (j *Join) paddedStored(side int, rid rowRef) row.Row {
	lw := j.spec.LeftWidth
	out := make(row.Row, lw+j.spec.RightWidth) // zero Values are NULL
	if side == 0 {
		j.sides[0].decodeInto(out[:lw], rid, &j.text)
	} else {
		j.sides[1].decodeInto(out[lw:], rid, &j.text)
	}
	return out
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

// probe joins this (of side) with the other side's stored row rid: the
// joined row, nil when the residual rejects it. A join without a
// residual that emits nothing (semi, anti) builds no row.
func (j *Join) probe(side int, this row.Row, rid rowRef, build bool) (row.Row, error) {
	if j.spec.Residual == nil && !build {
		return nil, nil
	}
	jr := j.joinedStored(side, this, rid)
	if j.spec.Residual != nil {
		ok, err := j.spec.Residual(jr)
		if err != nil || !ok {
			j.slab.unget(jr)
			return nil, err
		}
	}
	return jr, nil
}

// matches reports whether this (of side) and the other side's row rid
// satisfy the residual.
func (j *Join) matches(side int, this row.Row, rid rowRef) (bool, error) {
	if j.spec.Residual == nil {
		return true, nil
	}
	jr, err := j.probe(side, this, rid, false)
	if jr != nil {
		j.slab.unget(jr)
	}
	return jr != nil, err
}

// emitting reports whether the right side's padded rows were emitted: a
// batch join emits them only at the end.
func (j *Join) emitting(side int) bool { return !j.spec.Batch || side == 0 }

// store adds (add) or removes r, whose key is s's current one, on side s.
func store(s *joinSide, add bool, r row.Row, matched int) error {
	if add {
		return s.add(r, matched)
	}
	s.remove(r)
	return nil
}

// emitCopies emits r count times: the first is r itself, the others
// copies, so that no two emitted changes share a row.
func emitCopies(out operator.Emitter, k row.Kind, r row.Row, count int32) {
	for i := range count {
		if i > 0 {
			r = r.Clone()
		}
		out.Emit(k, r)
	}
}

func (j *Join) change(side int, k row.Kind, r row.Row, out operator.Emitter) error {
	if j.spec.NullAware {
		return j.notInChange(side, k, r, out)
	}
	if j.semi() {
		return j.semiChange(side, k, r, out)
	}
	this, other := j.sides[side], j.sides[1-side]
	thisOuter, otherOuter := j.outer[side], j.outer[1-side]
	add := k.IsAdd()
	if this.key(r) {
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
	// The key's id serves the probe and the store: one lookup.
	kid, found := this.index.find(this.cur())
	if found {
		found = other.expire(kid)
	}
	matched := 0
	if found {
		jk := joinedKind(k, thisOuter, otherOuter)
		// Without a residual, a join that emits some columns builds
		// those alone into the emitter under the projection.
		joined, pick := out, j.spec.Output
		if p, ok := out.(*projecting); ok && j.spec.Residual == nil {
			joined = p.out
		} else {
			pick = nil
		}
		for it := other.iter(kid); ; {
			rid, ok := it.row()
			if !ok {
				break
			}
			var jr row.Row
			if pick == nil {
				var err error
				if jr, err = j.probe(side, r, rid, true); err != nil {
					return err
				}
				if jr == nil {
					continue
				}
			}
			count, assoc := other.counts(rid)
			matched += int(count)
			if otherOuter {
				if add {
					if assoc == 0 && j.emitting(1-side) {
						for range count {
							out.Emit(row.Delete, j.paddedStored(1-side, rid))
						}
					}
					if assoc == math.MaxInt32 {
						return errJoinCount
					}
					assoc++
				} else if assoc > 0 {
					assoc--
				}
				other.setAssoc(rid, assoc)
				other.touch(rid)
			}
			if pick != nil {
				// Built after the padded rows above: it may be carved.
				jr = j.pickStored(side, r, rid, pick)
			}
			emitCopies(joined, jk, jr, count)
			if otherOuter && !add && assoc == 0 && j.emitting(1-side) {
				for range count {
					out.Emit(row.Insert, j.paddedStored(1-side, rid))
				}
			}
		}
	}
	if thisOuter && matched == 0 && j.emitting(side) {
		out.Emit(padKind(add), j.padded(side, r))
	}
	if !add {
		if found {
			this.removeAt(kid, r)
		}
		return nil
	}
	if j.probes(side) {
		return nil
	}
	if !found {
		kid = this.index.add(this.cur())
	}
	this.ensure(kid)
	return this.addAt(kid, r, matched)
}

// joinedKind is the kind of a joined row a change of kind k emits, as
// Flink's StreamingJoinOperator gives it: an outer join sends +I and -D
// rather than the updates, since an outer side's update may turn into a
// padded row or come from one. An accumulating change is +I when either
// side is outer, a retracting one -D when its own side is outer (the
// other side's padded row that comes back is an +I of its own); else the
// input's kind is kept.
func joinedKind(k row.Kind, thisOuter, otherOuter bool) row.Kind {
	switch {
	case k.IsAdd() && (thisOuter || otherOuter):
		return row.Insert
	case !k.IsAdd() && thisOuter:
		return row.Delete
	}
	return k
}

func padKind(add bool) row.Kind {
	if add {
		return row.Insert
	}
	return row.Delete
}
