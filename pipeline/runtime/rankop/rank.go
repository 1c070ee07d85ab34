package rankop

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// TopN is a streaming or batch Top-N (Flink's Rank operators). Per
// partition it keeps rows in sort order, ties in arrival order, and emits
// Flink's changes exactly:
//
//   - with the rank number: a row entering at rank r shifts the rows below
//     it, each shift a -U[old row, k] +U[new row, k] pair for k from r to
//     End, then +I of the last one when the top had room; a retracted row
//     shifts the rows below it up the same way and ends with -D of the
//     row that left rank End, or of the last one;
//   - without it (rn not selected): +I of a row entering the top, -D of a
//     row leaving it, nothing for rows that only move within it.
//
// AppendFast keeps only the top End rows (and rows tied with them) of an
// insert-only input; Retract keeps every row and takes -U/-D too. A rank
// range that does not start at 1 always uses the rank-number algorithm,
// as Flink's does, and emits the rows ranked in range.
type TopN struct {
	operator.ColumnWidening // a restore retags saved values of widened columns, by column (operator.ColumnWidener)
	spec                    RankSpec
	// keys gives each partition an id, the index of its rows in parts
	// (nil for a free id).
	keys  *state.KeyIDs
	parts []*Partition
	order []int32 // batch: partitions in the order they were first seen
	rows  int64
	kbuf  []byte
	out   operator.Emitter
	ttl   state.TTLKeys[string] // state TTL by partition (rank_ttl.go)
	operator.Expiry
	// floor, for an AppendFast top whose first ORDER BY column is an
	// integer one (floorCol, else -1): by id, that column's value in a
	// full partition's last row, with floorSet, so that a row that cannot
	// enter (most rows of a long stream) is turned away without reading
	// the partition's rows.
	floorCol int
	floor    []int64
	floorSet []bool
	// pack holds the partitions of a streaming AppendFast top, off the
	// scanned heap (rank_packed.go); parts is then unused.
	pack *packedParts
}

// NewTopN builds the operator.
func NewTopN(spec RankSpec) *TopN {
	t := &TopN{spec: spec, keys: state.NewKeyIDs(), floorCol: -1}
	t.Key = spec.Partition // the keys its TTL times are saved by
	if spec.Strategy == AppendFast && !spec.Batch && len(spec.Order) > 0 {
		t.floorCol = spec.Order[0].Col
	}
	if spec.Strategy == AppendFast && !spec.Batch {
		t.pack = &packedParts{}
	}
	t.InitExpiry(t.ttl.Set, t.ttl.Tick, t.sweep)
	return t
}

// StateEntries implements StateSizer: the rows held.
func (t *TopN) StateEntries() int64 { return t.rows }

// partition returns the id and rows of the partition of r, whose key it
// leaves in t.kbuf, making them when new.
func (t *TopN) partition(r row.Row) (int32, *Partition) {
	t.kbuf = row.KeyOf(t.kbuf[:0], r, t.spec.Partition)
	id, ok := t.keys.Find(t.kbuf)
	if ok && t.expirePart(id) {
		ok = false
	}
	if t.ttl.On() { // the key as a string costs an allocation a row
		t.ttl.Touch(string(t.kbuf))
	}
	if !ok {
		id = t.addPart(t.kbuf, &Partition{})
		if t.spec.Batch {
			t.order = append(t.order, id)
		}
	}
	if t.pack != nil {
		return id, nil
	}
	return id, t.parts[id]
}

// addPart gives key the partition p.
func (t *TopN) addPart(key []byte, p *Partition) int32 {
	id, fresh := t.keys.Add(key)
	if t.pack != nil {
		if fresh && t.floorCol >= 0 {
			t.floor = append(t.floor, 0)
			t.floorSet = append(t.floorSet, false)
		}
		t.pack.slot(id).live = true
		if len(p.Groups) > 0 {
			t.storePartition(id, p)
		}
		return id
	}
	if !fresh {
		t.parts[id] = p
		return id
	}
	t.parts = append(t.parts, p)
	if t.floorCol >= 0 {
		t.floor = append(t.floor, 0)
		t.floorSet = append(t.floorSet, false)
	}
	return id
}

// dropPart forgets partition id, whose key is in t.kbuf.
func (t *TopN) dropPart(id int32) {
	if t.pack != nil {
		t.rows -= int64(t.pack.rowsOf(id))
		t.pack.drop(id)
	} else {
		t.rows -= int64(t.parts[id].N)
		t.parts[id] = nil
	}
	t.keys.Drop(t.kbuf)
	if t.floorCol >= 0 {
		t.floorSet[id] = false
	}
}

// intKey is v as an int64 ordered as row.Compare orders such values,
// when it is a non-NULL integer, date or timestamp.
func intKey(v row.Value) (int64, bool) {
	switch v.Type() {
	case row.Int, row.BigInt, row.Date, row.Timestamp, row.TimestampLTZ:
		return v.Int64(), true
	}
	return 0, false
}

// turnedAway reports whether r cannot enter the full partition id: its
// sort value is not better than the floor (appendRow's first test).
// With more ORDER BY columns, a row tied with the floor on the first
// one is left to the comparison of the others.
func (t *TopN) turnedAway(id int32, r row.Row) bool {
	if !t.floorSet[id] {
		return false
	}
	v, ok := intKey(r[t.floorCol])
	if !ok {
		return false
	}
	f := t.floor[id]
	if len(t.spec.Order) > 1 {
		if t.spec.Order[0].Desc {
			return v < f
		}
		return v > f
	}
	if t.spec.Order[0].Desc {
		return v <= f
	}
	return v >= f
}

// setFloor records partition id's floor after a change.
func (t *TopN) setFloor(id int32, p *Partition) {
	t.floorSet[id] = false
	if p.N < int(t.spec.End) || len(p.Groups) == 0 {
		return
	}
	last := p.Groups[len(p.Groups)-1][0]
	if v, ok := intKey(last[t.floorCol]); ok {
		t.floor[id], t.floorSet[id] = v, true
	}
}

func (t *TopN) Process(in *row.Batch, out operator.Emitter) error {
	defer t.Begin(len(in.Changes))()
	t.out = out
	return operator.EachChange("top-n", in, out, t.change)
}

// change applies change c to its partition and emits what it changes in
// the top.
func (t *TopN) change(_ int, c *row.Change) error {
	id, p := t.partition(c.Row)
	switch {
	case t.spec.Batch:
		if !c.Kind.IsAdd() {
			return fmt.Errorf("a batch input carries a %s change", c.Kind)
		}
		p.Add(t.spec.Order, c.Row)
		t.rows++
	case c.Kind.IsAdd() && t.spec.Strategy == AppendFast:
		if c.Kind != row.Insert {
			return errInsertOnly(c.Kind)
		}
		if t.pack != nil {
			return t.appendPackedChange(id, c.Row)
		}
		if t.floorCol < 0 {
			t.appendRow(p, c.Row)
			break
		}
		if t.turnedAway(id, c.Row) {
			return nil
		}
		t.appendRow(p, c.Row)
		t.setFloor(id, p)
	case c.Kind.IsAdd():
		gi := p.Add(t.spec.Order, c.Row)
		t.rows++
		if t.spec.numbered() {
			t.insertWithRank(p, gi, c.Row)
		} else {
			t.insertWithoutRank(p, gi, c.Row)
		}
	case t.spec.Strategy == AppendFast:
		return errInsertOnly(c.Kind)
	default:
		t.retract(p, c.Row)
	}
	if p.N == 0 {
		t.kbuf = row.KeyOf(t.kbuf[:0], c.Row, t.spec.Partition)
		t.dropPart(id)
		t.ttl.Drop(string(t.kbuf))
	}
	return nil
}

func errInsertOnly(k row.Kind) error {
	return fmt.Errorf("input planned as insert-only carries a %s change", k)
}

func (t *TopN) inRange(rank int64) bool { return rank >= t.spec.Start && rank <= t.spec.End }

// emit sends r with kind k at rank, when the rank is in range.
func (t *TopN) emit(k row.Kind, r row.Row, rank int64) {
	if !t.inRange(rank) {
		return
	}
	t.emitRow(k, r, rank)
}

func (t *TopN) emitRow(k row.Kind, r row.Row, rank int64) {
	if t.spec.OutputRank {
		r = t.spec.withNumber(r, rank)
	}
	t.out.Emit(k, r)
}

// appendRow is AppendOnlyTopNFunction.processElement.
func (t *TopN) appendRow(p *Partition, r row.Row) {
	if p.N >= int(t.spec.End) {
		last := p.Groups[len(p.Groups)-1]
		if CompareRows(t.spec.Order, r, last[0]) >= 0 {
			return
		}
	}
	gi := p.Add(t.spec.Order, r)
	t.rows++
	if t.spec.numbered() {
		stop := t.insertWithRank(p, gi, r)
		for _, g := range p.Groups[stop:] {
			p.N -= len(g)
			t.rows -= int64(len(g))
		}
		p.Groups = p.Groups[:stop]
		return
	}
	if p.N > int(t.spec.End) {
		lg := len(p.Groups) - 1
		last := p.Groups[lg][len(p.Groups[lg])-1]
		p.RemoveAt(lg, len(p.Groups[lg])-1)
		t.rows--
		if sameRow(last, r) {
			return
		}
		if t.spec.End == 1 {
			// A top 1 replaces its one row: Flink 2.3 emits the pair as
			// an update (-U/+U), as the conformance case sql-top-n
			// recorded; a larger top deletes and inserts.
			t.emitRow(row.UpdateBefore, last, 0)
			t.emitRow(row.UpdateAfter, r, 0)
			return
		}
		t.emitRow(row.Delete, last, 0)
	}
	t.emitRow(row.Insert, r, 0)
}

// insertWithRank emits the changes of r, just added to group gi, with
// rank numbers (emitRecordsWithRowNumber). It returns the index of the
// first group the walk did not reach.
func (t *TopN) insertWithRank(p *Partition, gi int, r row.Row) int {
	var rank int64
	var cur row.Row
	found := false
	i := 0
	for ; i < len(p.Groups) && rank <= t.spec.End; i++ {
		g := p.Groups[i]
		switch {
		case !found && i == gi:
			rank += int64(len(g))
			cur, found = r, true
		case found:
			for j := 0; j < len(g) && rank <= t.spec.End; j++ {
				prev := g[j]
				t.emit(row.UpdateBefore, prev, rank)
				t.emit(row.UpdateAfter, cur, rank)
				cur = prev
				rank++
			}
		default:
			rank += int64(len(g))
		}
	}
	if rank <= t.spec.End {
		t.emit(row.Insert, cur, rank)
	}
	return i
}

// insertWithoutRank emits the changes of r, just added to group gi,
// without rank numbers (emitRecordsWithoutRowNumber): -D of the row
// pushed out of the top, +I of r when it entered.
func (t *TopN) insertWithoutRank(p *Partition, gi int, r row.Row) {
	var rank int64
	var toDelete row.Row
	collect := false
	found := false
	for i := 0; i < len(p.Groups) && rank <= t.spec.End; i++ {
		g := p.Groups[i]
		if !found && i == gi {
			rank += int64(len(g))
			collect, found = t.inRange(rank), true
			continue
		}
		if !found {
			rank += int64(len(g))
			continue
		}
		if last := rank + int64(len(g)); last <= t.spec.End {
			rank = last
			continue
		}
		toDelete = g[t.spec.End-rank]
		break
	}
	if toDelete != nil {
		t.emitRow(row.Delete, toDelete, 0)
	}
	if collect {
		t.emitRow(row.Insert, r, 0)
	}
}

// retract removes r (a -U or -D) and emits the changes
// (retractRecordWithRowNumber / WithoutRowNumber). A row the state does
// not hold is ignored, as Flink does.
func (t *TopN) retract(p *Partition, r row.Row) {
	gi, ok := p.find(t.spec.Order, r)
	if !ok {
		return
	}
	j := -1
	for k, x := range p.Groups[gi] {
		if sameRow(x, r) {
			j = k
			break
		}
	}
	if j < 0 {
		return
	}
	var rank int64 = 1 // the old rank of the removed row
	for _, g := range p.Groups[:gi] {
		rank += int64(len(g))
	}
	rank += int64(j)
	removed := p.Groups[gi][j]
	// The rows after the removed one, in order, before the removal.
	next := func(yield func(row.Row) bool) {
		for k := j + 1; k < len(p.Groups[gi]); k++ {
			if !yield(p.Groups[gi][k]) {
				return
			}
		}
		for _, g := range p.Groups[gi+1:] {
			for _, x := range g {
				if !yield(x) {
					return
				}
			}
		}
	}
	if rank <= t.spec.End {
		if t.spec.numbered() {
			prev, k := removed, rank
			for x := range next {
				if k > t.spec.End {
					break
				}
				t.emit(row.UpdateBefore, prev, k)
				t.emit(row.UpdateAfter, x, k)
				prev = x
				k++
			}
			if k <= t.spec.End {
				t.emit(row.Delete, prev, k)
			}
		} else {
			t.emitRow(row.Delete, removed, 0)
			k := rank
			for x := range next {
				k++
				if k == t.spec.End+1 {
					t.emitRow(row.Insert, x, 0)
					break
				}
			}
		}
	}
	p.RemoveAt(gi, j)
	t.rows--
}

func (t *TopN) Watermark(int64, operator.Emitter) error { return nil }

// Finish emits a batch Top-N's ranks.
func (t *TopN) Finish(out operator.Emitter) error {
	if !t.spec.Batch {
		return nil
	}
	t.out = out
partitions:
	for _, id := range t.order {
		p := t.parts[id]
		var n, rank, dense int64
		for _, g := range p.Groups {
			dense++
			for i, r := range g {
				n++
				switch t.spec.Kind {
				case RowNumber:
					rank = n
				case Rank:
					if i == 0 {
						rank = n
					}
				case DenseRank:
					rank = dense
				}
				if rank > t.spec.End {
					continue partitions
				}
				if t.inRange(rank) {
					t.emitRow(row.Insert, r, rank)
				}
			}
		}
	}
	return nil
}

const TopNStateVersion = 1

// Snapshot encodes the partitions: a version byte, their count, then per
// partition its groups, each a count of rows and the rows.
func (t *TopN) Snapshot() ([]byte, error) {
	buf := []byte{t.stateVersion()}
	ids := t.order
	if !t.spec.Batch {
		ids = t.liveIDs()
	}
	return t.appendTTL(t.appendParts(buf, ids)), nil
}

// appendParts appends the count of the partitions ids, then each one's
// groups, each a count of rows and the rows.
func (t *TopN) appendParts(buf []byte, ids []int32) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(ids)))
	for _, id := range ids {
		groups := t.groupsOf(id, false)
		buf = binary.AppendUvarint(buf, uint64(len(groups)))
		for _, g := range groups {
			buf = binary.AppendUvarint(buf, uint64(len(g)))
			for _, r := range g {
				buf = row.AppendRow(buf, r)
			}
		}
	}
	return buf
}

// Restore replaces the partitions with a snapshot's.
func (t *TopN) Restore(snap []byte) error {
	d := t.Decoder(snap)
	v := d.Byte()
	if v != TopNStateVersion && v != topNTTLStateVersion {
		return fmt.Errorf("top-n: state version %d, want %d or %d", v, TopNStateVersion, topNTTLStateVersion)
	}
	r := NewTopN(t.spec)
	r.ttl = t.ttl
	np := d.Count(1)
	for range np {
		p := &Partition{}
		ng := d.Count(1)
		for range ng {
			nr := d.Count(1)
			g := make([]row.Row, 0, nr)
			for range nr {
				g = append(g, d.Row())
			}
			if d.Err() != nil {
				break
			}
			if len(g) == 0 {
				d.Fail("empty rank group")
				break
			}
			p.Groups = append(p.Groups, g)
			p.N += len(g)
		}
		if d.Err() != nil || len(p.Groups) == 0 {
			break
		}
		r.kbuf = row.KeyOf(r.kbuf[:0], p.Groups[0][0], t.spec.Partition)
		if _, dup := r.keys.Find(r.kbuf); dup {
			d.Fail("partition %q twice", r.kbuf)
			break
		}
		id := r.addPart(r.kbuf, p)
		r.order = append(r.order, id)
		r.rows += int64(p.N)
		if r.floorCol >= 0 {
			r.setFloor(id, p)
		}
	}
	r.readTTL(d, v == topNTTLStateVersion)
	if err := d.End(); err != nil {
		return fmt.Errorf("top-n: restore: %w", err)
	}
	if !t.spec.Batch {
		r.order = nil
	}
	// The expiry's functions are bound to t, which takes r's state.
	r.Expiry = t.Expiry
	r.ColumnWidening = t.ColumnWidening
	*t = *r
	return nil
}

var (
	_ operator.Operator    = (*TopN)(nil)
	_ operator.Snapshotter = (*TopN)(nil)
	_ operator.StateSizer  = (*TopN)(nil)
)
