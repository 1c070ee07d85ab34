package rankop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// UpdatableTopN is a streaming Top-N under Flink's UpdateFastStrategy
// (UpdatableTopNFunction): its input is updating, has an upsert key
// (RankSpec.RowKey) that holds the partition key, and its sort key only
// moves up (a COUNT, a MAX, a SUM of non-negative values ordered DESC; a
// MIN ordered ASC; a group key). So a row that leaves the top never has to
// come back from below what is kept, and only the top rows are kept: per
// partition the rows in sort order, ties in arrival order, each by its
// row key.
//
// The input's -U changes are skipped (Flink plans the input without
// them); every +I and +U is the row's new value. Its changes:
//
//   - with the rank number: a row moving up from rank o to r emits
//     -U[row at r, r], -U[old row, o], +U[new row, r], then for each row
//     shifted down a -U/+U pair, the last one at rank o without its -U; a
//     new row entering emits the shifts of AppendFast, then +I when the
//     top had room; a row updated in place emits -U[old, rank] +U[new,
//     rank];
//   - without it: -U[old] +U[new] for a row already in the top (moved or
//     not), -D of the row pushed out and +I of a row entering.
//
// A -D in the input is an error: the plan picks this strategy only for
// inputs that delete nothing.
type UpdatableTopN struct {
	operator.ColumnWidening // a restore retags saved values of widened columns, by column (operator.ColumnWidener)
	spec                    RankSpec
	parts                   map[string]*fastPartition
	rows                    int64
	kbuf                    []byte
	out                     operator.Emitter
	ttl                     state.TTLKeys[string] // partitions' last writes (rank_update_ttl.go)
	operator.Expiry
}

// fastPartition is one partition's kept rows: groups of row keys with
// equal sort keys, best first, each in arrival order (Flink's TopNBuffer
// over a LinkedHashSet), and the rows by key.
type fastPartition struct {
	groups [][]string
	rows   map[string]row.Row
	n      int
}

// NewUpdatableTopN builds the operator; spec.RowKey names the upsert key.
// It refuses a spec the strategy gives wrong results for, which the plan
// never picks it for: a batch input (its Finish emits nothing), a rank
// other than ROW_NUMBER (it would number rows as ROW_NUMBER does), and
// an upsert key that does not hold the partition key (a row whose
// partition changes would stay in its old one).
func NewUpdatableTopN(spec RankSpec) (*UpdatableTopN, error) {
	switch {
	case spec.Batch:
		return nil, errors.New("top-n (UpdateFastStrategy): a batch input")
	case spec.Kind != RowNumber:
		return nil, fmt.Errorf("top-n (UpdateFastStrategy): %s, want ROW_NUMBER", spec.Kind)
	}
	for _, c := range spec.Partition {
		if !slices.Contains(spec.RowKey, c) {
			return nil, fmt.Errorf("top-n (UpdateFastStrategy): partition column %d is not in the upsert key %v", c, spec.RowKey)
		}
	}
	t := &UpdatableTopN{spec: spec, parts: map[string]*fastPartition{}}
	t.Key = spec.Partition // the keys its TTL times are saved by
	t.InitExpiry(t.ttl.Set, t.ttl.Tick, t.sweep)
	return t, nil
}

// StateEntries implements StateSizer: the rows kept.
func (t *UpdatableTopN) StateEntries() int64 { return t.rows }

// find returns the index of the group of sort key r, or where it would
// go, and whether it exists.
func (p *fastPartition) find(keys []SortKey, r row.Row) (int, bool) {
	lo, hi := 0, len(p.groups)
	for lo < hi {
		m := (lo + hi) / 2
		c := CompareRows(keys, p.rows[p.groups[m][0]], r)
		switch {
		case c == 0:
			return m, true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return lo, false
}

// put stores r under key k at the end of its group and returns the
// group's index.
func (p *fastPartition) put(keys []SortKey, k string, r row.Row) int {
	gi, ok := p.find(keys, r)
	p.rows[k] = row.Detach(r) // kept: must not pin its batch
	if ok {
		p.groups[gi] = append(p.groups[gi], k)
	} else {
		p.groups = append(p.groups, nil)
		copy(p.groups[gi+1:], p.groups[gi:])
		p.groups[gi] = []string{k}
	}
	p.n++
	return gi
}

// unlink takes key k, whose row sorts as r, out of its group; the row
// stays in rows.
func (p *fastPartition) unlink(keys []SortKey, k string, r row.Row) {
	gi, ok := p.find(keys, r)
	if !ok {
		return
	}
	g := p.groups[gi]
	for j, x := range g {
		if x == k {
			if len(g) == 1 {
				p.groups = append(p.groups[:gi], p.groups[gi+1:]...)
			} else {
				p.groups[gi] = append(g[:j:j], g[j+1:]...)
			}
			p.n--
			return
		}
	}
}

// rankOf is the 1-based rank of key k, whose row sorts as r.
func (p *fastPartition) rankOf(keys []SortKey, k string, r row.Row) int64 {
	gi, _ := p.find(keys, r)
	var rank int64 = 1
	for _, g := range p.groups[:gi] {
		rank += int64(len(g))
	}
	for _, x := range p.groups[gi] {
		if x == k {
			break
		}
		rank++
	}
	return rank
}

// admits is Flink's checkSortKeyInBufferRange: r sorts before the worst
// kept row, or the top has room.
func (t *UpdatableTopN) admits(p *fastPartition, r row.Row) bool {
	if len(p.groups) == 0 {
		return true
	}
	worst := p.rows[p.groups[len(p.groups)-1][0]]
	return CompareRows(t.spec.Order, r, worst) < 0 || int64(p.n) < t.spec.End
}

func (t *UpdatableTopN) Process(in *row.Batch, out operator.Emitter) error {
	defer t.Begin(len(in.Changes))()
	t.out = out
	return operator.EachChange("top-n (UpdateFastStrategy)", in, out, t.change)
}

// change applies change c, the new value of its row (a -U is skipped),
// and emits what it changes in the top.
func (t *UpdatableTopN) change(_ int, c *row.Change) error {
	switch c.Kind {
	case row.UpdateBefore:
		return nil
	case row.Delete:
		return errors.New("a -D, but the input was planned as never deleting")
	}
	t.kbuf = row.KeyOf(t.kbuf[:0], c.Row, t.spec.Partition)
	p := t.parts[string(t.kbuf)]
	if p != nil && t.expirePart() {
		p = nil
	}
	if t.ttl.On() {
		t.ttl.Touch(string(t.kbuf))
	}
	if p == nil {
		p = &fastPartition{rows: map[string]row.Row{}}
		t.parts[string(t.kbuf)] = p
	}
	before := p.n
	t.kbuf = row.KeyOf(t.kbuf[:0], c.Row, t.spec.RowKey)
	// Unlike the retract algorithm (RankSpec.numbered), Flink keeps the
	// numbered algorithm here even for a constant rank number: its
	// UpdateFastStrategy prints -U/+U for a replaced top row.
	if t.spec.OutputRank || t.spec.Start > 1 {
		if err := t.withNumber(p, string(t.kbuf), c.Row); err != nil {
			return err
		}
	} else {
		t.withoutNumber(p, string(t.kbuf), c.Row)
	}
	t.rows += int64(p.n - before)
	if p.n == 0 {
		t.kbuf = row.KeyOf(t.kbuf[:0], c.Row, t.spec.Partition)
		delete(t.parts, string(t.kbuf))
		t.ttl.Drop(string(t.kbuf))
	}
	return nil
}

func (t *UpdatableTopN) emit(k row.Kind, r row.Row, rank int64) {
	if rank < t.spec.Start || rank > t.spec.End {
		return
	}
	t.emitRow(k, r, rank)
}

// emitRow sends r with kind k, numbered when the spec outputs the rank
// (the number-less algorithm, rank 0, runs only when it is constant).
func (t *UpdatableTopN) emitRow(k row.Kind, r row.Row, rank int64) {
	if t.spec.OutputRank {
		r = t.spec.withNumber(r, rank)
	}
	t.out.Emit(k, r)
}

// withNumber is processElementWithRowNumber.
func (t *UpdatableTopN) withNumber(p *fastPartition, k string, r row.Row) error {
	old, ok := p.rows[k]
	if !ok {
		if t.admits(p, r) {
			t.shift(p, p.put(t.spec.Order, k, r), r, nil, -1)
		}
		return nil
	}
	switch c := CompareRows(t.spec.Order, r, old); {
	case c == 0:
		rank := p.rankOf(t.spec.Order, k, old)
		p.rows[k] = row.Detach(r) // kept: must not pin its batch
		t.emit(row.UpdateBefore, old, rank)
		t.emit(row.UpdateAfter, r, rank)
	case c > 0:
		return fmt.Errorf("the sort key of row %s moved down (from %s), which the plan's monotonicity analysis excludes", r, old)
	default:
		oldRank := p.rankOf(t.spec.Order, k, old)
		p.unlink(t.spec.Order, k, old)
		t.shift(p, p.put(t.spec.Order, k, r), r, old, oldRank)
	}
	return nil
}

// shift emits the changes of r, just put in group gi (emitRecordsWithRowNumber):
// for a new row (old nil) the rows below it move down to the end of the
// top, for a moved row those between its new and its old rank. Past the
// top, what the walk did not reach is dropped.
func (t *UpdatableTopN) shift(p *fastPartition, gi int, r, old row.Row, oldRank int64) {
	var rank int64
	cur := r
	retracted := false
	i := 0
walk:
	for ; i < len(p.groups) && rank <= t.spec.End; i++ {
		g := p.groups[i]
		switch {
		case i <= gi:
			rank += int64(len(g))
		case old == nil:
			for j := 0; j < len(g) && rank <= t.spec.End; j++ {
				prev := p.rows[g[j]]
				t.emit(row.UpdateBefore, prev, rank)
				t.emit(row.UpdateAfter, cur, rank)
				cur = prev
				rank++
			}
		default:
			if CompareRows(t.spec.Order, p.rows[g[0]], old) > 0 {
				break walk
			}
			for j := 0; j < len(g) && rank < oldRank; j++ {
				prev := p.rows[g[j]]
				t.emit(row.UpdateBefore, prev, rank)
				if !retracted {
					t.emit(row.UpdateBefore, old, oldRank)
					retracted = true
				}
				t.emit(row.UpdateAfter, cur, rank)
				cur = prev
				rank++
			}
		}
	}
	if rank <= t.spec.End {
		if old == nil {
			t.emit(row.Insert, cur, rank)
			return
		}
		if !retracted {
			t.emit(row.UpdateBefore, old, oldRank)
		}
		t.emit(row.UpdateAfter, cur, rank)
		return
	}
	for _, g := range p.groups[i:] {
		for _, k := range g {
			delete(p.rows, k)
		}
		p.n -= len(g)
	}
	p.groups = p.groups[:i]
}

// withoutNumber is processElementWithoutRowNumber.
func (t *UpdatableTopN) withoutNumber(p *fastPartition, k string, r row.Row) {
	if old, ok := p.rows[k]; ok {
		if CompareRows(t.spec.Order, r, old) != 0 {
			p.unlink(t.spec.Order, k, old)
			p.put(t.spec.Order, k, r)
		} else {
			p.rows[k] = row.Detach(r) // kept: must not pin its batch
		}
		t.emitRow(row.UpdateBefore, old, 0)
		t.emitRow(row.UpdateAfter, r, 0)
		return
	}
	if !t.admits(p, r) {
		return
	}
	p.put(t.spec.Order, k, r)
	if int64(p.n) > t.spec.End {
		lg := len(p.groups) - 1
		g := p.groups[lg]
		lk := g[len(g)-1]
		last := p.rows[lk]
		if len(g) == 1 {
			p.groups = p.groups[:lg]
		} else {
			p.groups[lg] = g[:len(g)-1]
		}
		p.n--
		delete(p.rows, lk)
		t.emitRow(row.Delete, last, 0)
	}
	t.emitRow(row.Insert, r, 0)
}

func (t *UpdatableTopN) Watermark(int64, operator.Emitter) error { return nil }

func (t *UpdatableTopN) Finish(operator.Emitter) error { return nil }

const updatableTopNStateVersion = 1

// Snapshot encodes the partitions: a version byte, their count, then per
// partition its groups, each a count of rows and the rows in order (the
// row keys are derived again on restore).
func (t *UpdatableTopN) Snapshot() ([]byte, error) {
	buf := []byte{t.stateVersion()}
	buf = binary.AppendUvarint(buf, uint64(len(t.parts)))
	for _, p := range t.parts {
		buf = binary.AppendUvarint(buf, uint64(len(p.groups)))
		for _, g := range p.groups {
			buf = binary.AppendUvarint(buf, uint64(len(g)))
			for _, k := range g {
				buf = row.AppendRow(buf, p.rows[k])
			}
		}
	}
	return t.appendTTL(buf), nil
}

// Restore replaces the partitions with a snapshot's.
func (t *UpdatableTopN) Restore(snap []byte) error {
	d := t.Decoder(snap)
	v := d.Byte()
	if v != updatableTopNStateVersion && v != updatableTopNTTLStateVersion {
		return fmt.Errorf("top-n (UpdateFastStrategy): state version %d, want %d or %d", v, updatableTopNStateVersion, updatableTopNTTLStateVersion)
	}
	parts := map[string]*fastPartition{}
	var rows int64
	np := d.Count(1)
	for range np {
		p := &fastPartition{rows: map[string]row.Row{}}
		ng := d.Count(1)
		for range ng {
			nr := d.Count(1)
			g := make([]string, 0, nr)
			for range nr {
				r := d.Row()
				if d.Err() != nil {
					break
				}
				t.kbuf = row.KeyOf(t.kbuf[:0], r, t.spec.RowKey)
				k := string(t.kbuf)
				if _, dup := p.rows[k]; dup {
					d.Fail("duplicate row key in a top-n partition")
					break
				}
				p.rows[k] = row.Detach(r) // kept: must not pin its batch
				g = append(g, k)
			}
			if d.Err() != nil {
				break
			}
			if len(g) == 0 {
				d.Fail("empty rank group")
				break
			}
			p.groups = append(p.groups, g)
			p.n += len(g)
		}
		if d.Err() != nil || len(p.groups) == 0 {
			break
		}
		t.kbuf = row.KeyOf(t.kbuf[:0], p.rows[p.groups[0][0]], t.spec.Partition)
		parts[string(t.kbuf)] = p
		rows += int64(p.n)
	}
	t.readTTL(d, v == updatableTopNTTLStateVersion, parts)
	if err := d.End(); err != nil {
		return fmt.Errorf("top-n (UpdateFastStrategy): restore: %w", err)
	}
	t.parts, t.rows = parts, rows
	return nil
}

var (
	_ operator.Operator    = (*UpdatableTopN)(nil)
	_ operator.Snapshotter = (*UpdatableTopN)(nil)
	_ operator.StateSizer  = (*UpdatableTopN)(nil)
)
