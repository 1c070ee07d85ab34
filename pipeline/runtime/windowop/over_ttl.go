package windowop

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// State TTL of an OVER aggregate (operator.StateTTL), as Flink's over functions
// with a state retention (RowTimeRangeBoundedPrecedingFunction and kin
// register a processing-time cleanup timer for each input row): the unit
// is the partition, and every input row of it refreshes its time. A
// partition not written for TTL is dropped whole (its aggregates, the
// rows of its frame and LAG's rows), so its next row starts from empty
// state: a running COUNT restarts at 1 and LAG returns its default.
// A partition whose rows still wait for the watermark does not expire
// yet: as Flink's timer does when rows are left to process, it is given
// another TTL. Batch mode has no TTL.

// SetStateTTL implements TTLSetter. Batch mode keeps no TTL, as Flink's
// batch execution has none: every row waits for the end of input.
func (g *OverAgg) SetStateTTL(c operator.StateTTL) {
	if !g.opt.Batch {
		g.Expiry.SetStateTTL(c)
	}
}

// sweep frees at most budget expired partitions, oldest first; one with
// rows waiting is given another TTL instead.
func (g *OverAgg) sweep(budget int) {
	t := &g.ttl
	for n := 0; n < budget && t.List.Head != state.TTLNone && t.List.Expired(t.List.Head); n++ {
		k := t.Keys[t.List.Head]
		p := g.parts[k]
		if p != nil && p.waiting > 0 {
			t.Touch(k) // moves it behind every other: the loop ends
			continue
		}
		g.free(k, p)
	}
}

// expire drops partition p, whose key is in g.kbuf, when it expired and
// no row of it waits, and reports whether it did.
func (g *OverAgg) expire(p *overPart) bool {
	k := string(g.kbuf)
	if p.waiting > 0 || !g.ttl.Expired(k) {
		return false
	}
	g.free(k, p)
	return true
}

func (g *OverAgg) free(k string, p *overPart) {
	if p != nil {
		g.st.Release(p.id)
		delete(g.parts, k)
	}
	g.ttl.Drop(k)
}

// overTTLStateVersion is the version-3 layout followed by the
// partitions' last writes (state.TTLKeys.AppendTimes), written while a TTL is
// set; overOldTTLStateVersion is the same after version 1.
const (
	overTTLStateVersion    = 4
	overOldTTLStateVersion = 2
)

// overVersion reads a snapshot's version byte, refusing one it does not
// know.
func overVersion(snap []byte) (byte, error) {
	if len(snap) == 0 {
		return 0, fmt.Errorf("over aggregate: restore: empty state")
	}
	v := snap[0]
	if v < 1 || v > overTTLStateVersion+overCleanupShift {
		return 0, fmt.Errorf("over aggregate: state version %d, want 1 to %d", v, overTTLStateVersion+overCleanupShift)
	}
	return v, nil
}

func (g *OverAgg) appendTTL(buf []byte) []byte {
	if !g.ttl.On() {
		return buf
	}
	return g.ttl.AppendTimes(buf, row.AppendString)
}

// readTTL restores the partitions' times (read past when the TTL is now
// off).
func (g *OverAgg) readTTL(d *row.Decoder, timed bool) {
	g.ttl.Reset()
	g.ttl.Tick()
	if timed {
		g.ttl.ReadTimes(d, (*row.Decoder).KeyStr)
	}
}

// touchRestored forgets the times of partitions the snapshot does not
// hold and gives the restored partitions without one (a snapshot taken
// without a TTL) the restore time.
func (g *OverAgg) touchRestored() error {
	if !g.ttl.On() {
		return nil
	}
	var stale []string
	g.ttl.Each(func(k string, _ int64) {
		if g.parts[k] == nil {
			stale = append(stale, k)
		}
	})
	if len(stale) > 0 {
		return fmt.Errorf("over aggregate: restore: a state time for %d partitions the state does not hold", len(stale))
	}
	for k := range g.parts {
		if _, ok := g.ttl.IDs[k]; !ok {
			g.ttl.Touch(k)
		}
	}
	return nil
}

var (
	_ operator.TTLSetter = (*OverAgg)(nil)
	_ operator.Sweeper   = (*OverAgg)(nil)
)
