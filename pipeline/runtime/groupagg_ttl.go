package runtime

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// State TTL of a GroupAgg (see ttl.go), Flink's GroupAggFunction with
// stateRetentionTime: each group's last write is tracked by slot; a group
// that expired is absent, so its next row starts it again with +I and a
// retraction of it is ignored (and counted as dropped). While a TTL is
// set, an update that leaves the result unchanged still emits -U/+U, as
// Flink does "to prevent too early state eviction of downstream
// operators". Batch mode has no TTL.

// SetStateTTL implements TTLSetter.
func (g *GroupAgg) SetStateTTL(c StateTTL) {
	if g.opt.Batch || c.TTL <= 0 {
		return
	}
	g.ttl.set(c)
}

// SweepEvery implements Sweeper.
func (g *GroupAgg) SweepEvery() time.Duration {
	if !g.ttl.on() {
		return 0
	}
	return sweepEvery(time.Duration(g.ttl.ttl) * time.Millisecond)
}

// Sweep implements Sweeper.
func (g *GroupAgg) Sweep() {
	if g.ttl.on() {
		g.ttl.tick()
		g.sweep(quietSweep)
	}
}

// pending reports whether the slot has changes a mini-batch has not
// emitted yet: it cannot expire before the flush.
func (g *GroupAgg) pending(id int32) bool {
	return int(id) < len(g.mb.mark) && g.mb.mark[id] != 0
}

// sweep frees at most budget expired groups.
func (g *GroupAgg) sweep(budget int) {
	g.ttl.sweep(budget, func(id int32) bool {
		if g.pending(id) {
			return false
		}
		g.ints.reset()
		g.index.remove(g.index.bytes(id))
		g.st.release(id)
		return true
	})
}

// expireAt drops group id when it expired (lazy expiry on lookup) and
// reports whether it did; the group key is in g.kbuf.
func (g *GroupAgg) expireAt(id int32) bool {
	if !g.ttl.expired(id) || g.pending(id) {
		return false
	}
	g.drop(id)
	return true
}

// groupAggTTLStateVersion is a snapshot with each group's last write
// after the version-1 layout.
const groupAggTTLStateVersion = 2

// appendTTL adds the groups' last writes: a count, then per group (the
// oldest first) its slot and the time in milliseconds.
func (g *GroupAgg) appendTTL(buf []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(g.ttl.n))
	g.ttl.each(func(id int32, at int64) {
		buf = binary.AppendUvarint(buf, uint64(id))
		buf = binary.AppendVarint(buf, at)
	})
	return buf
}

// readTTL restores appendTTL's times, or (v1, a snapshot without them)
// gives every group the restore time as its last write.
func (g *GroupAgg) readTTL(d *row.Decoder, withTimes bool, slots int) {
	on := g.ttl.on()
	if on {
		c := StateTTL{TTL: time.Duration(g.ttl.ttl) * time.Millisecond, Now: g.ttl.now}
		clock := g.ttl.clock
		g.ttl = ttlList{}
		g.ttl.set(c)
		g.ttl.clock = clock
		g.ttl.tick()
	}
	if !withTimes {
		return
	}
	n := d.Count(2)
	for range n {
		id, at := d.Uvarint(), d.Varint()
		if d.Err() != nil {
			return
		}
		if id >= uint64(slots) {
			d.Fail("state time of slot %d in %d slots", id, slots)
			return
		}
		if on {
			g.ttl.touchAt(int32(id), at)
		}
	}
}

// touchRestored gives the restored groups that have no time the
// restore time (an old snapshot, or a run that had no TTL).
func (g *GroupAgg) touchRestored() error {
	if !g.ttl.on() {
		return nil
	}
	bad := int32(-1)
	g.ttl.each(func(id int32, _ int64) {
		if !g.index.has(id) && bad < 0 {
			bad = id
		}
	})
	if bad >= 0 {
		return fmt.Errorf("group aggregate: restore: a state time for the free slot %d", bad)
	}
	for id := range g.st.slots {
		if g.index.has(id) && !g.ttl.linked(id) {
			g.ttl.touch(id)
		}
	}
	return nil
}
