package aggop

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// State TTL of a GroupAgg, Flink's GroupAggFunction with
// stateRetentionTime: each group's last write is tracked by slot; a group
// that expired is absent, so its next row starts it again with +I and a
// retraction of it is ignored (and counted as dropped). While a TTL is
// set, an update that leaves the result unchanged still emits -U/+U, as
// Flink does "to prevent too early state eviction of downstream
// operators". Batch mode has no TTL.

// SetStateTTL implements TTLSetter; a batch-mode aggregate ignores it.
func (g *GroupAgg) SetStateTTL(c operator.StateTTL) {
	if !g.opt.Batch {
		g.Expiry.SetStateTTL(c)
	}
}

// pending reports whether the slot has changes a mini-batch has not
// emitted yet: it cannot expire before the flush.
func (g *GroupAgg) pending(id int32) bool {
	return int(id) < len(g.mb.mark) && g.mb.mark[id] != 0
}

// sweep frees at most budget expired groups.
func (g *GroupAgg) sweep(budget int) {
	g.ttl.Sweep(budget, func(id int32) bool {
		if g.pending(id) {
			return false
		}
		g.ints.reset()
		g.index.Remove(g.index.Bytes(id))
		g.store.Release(id)
		return true
	})
}

// expireAt drops group id when it expired (lazy expiry on lookup) and
// reports whether it did; the group key is in g.kbuf.
func (g *GroupAgg) expireAt(id int32) bool {
	if !g.ttl.Expired(id) || g.pending(id) {
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
	buf = binary.AppendUvarint(buf, uint64(g.ttl.N))
	g.ttl.Each(func(id int32, at int64) {
		buf = binary.AppendUvarint(buf, uint64(id))
		buf = binary.AppendVarint(buf, at)
	})
	return buf
}

// readTTL restores appendTTL's times, or (v1, a snapshot without them)
// gives every group the restore time as its last write.
func (g *GroupAgg) readTTL(d *row.Decoder, withTimes bool, slots int) {
	on := g.ttl.On()
	if on {
		g.ttl.Reset()
		g.ttl.Tick()
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
			g.ttl.TouchAt(int32(id), at)
		}
	}
}

// touchRestored gives the restored groups that have no time the
// restore time (an old snapshot, or a run that had no TTL).
func (g *GroupAgg) touchRestored() error {
	if !g.ttl.On() {
		return nil
	}
	bad := int32(-1)
	g.ttl.Each(func(id int32, _ int64) {
		if !g.index.Has(id) && bad < 0 {
			bad = id
		}
	})
	if bad >= 0 {
		return fmt.Errorf("group aggregate: restore: a state time for the free slot %d", bad)
	}
	for id := range g.store.Slots {
		if g.index.Has(id) && !g.ttl.Linked(id) {
			g.ttl.Touch(id)
		}
	}
	return nil
}
