package rankop

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// State TTL of a streaming TopN: the unit is the partition. Every row
// of a partition refreshes its time; a partition not written for TTL is
// dropped whole, so its next row enters an empty top (+I at rank 1) and
// a retraction of a row of it is ignored. Flink's rank functions expire
// their sort-key entries one by one inside a partition (MapState
// entries), which can leave a partition's tree and its rows out of step
// (their "lenient" warnings); etld keeps a partition's rows together.
// Batch mode has no TTL.

// SetStateTTL implements TTLSetter; a batch Top-N ignores it.
func (t *TopN) SetStateTTL(c operator.StateTTL) {
	if !t.spec.Batch {
		t.Expiry.SetStateTTL(c)
	}
}

func (t *TopN) sweep(budget int) {
	t.ttl.Sweep(budget, func(k string) bool {
		t.kbuf = append(t.kbuf[:0], k...)
		if id, ok := t.keys.Find(t.kbuf); ok {
			t.dropPart(id)
		}
		return true
	})
}

// expirePart drops the partition of the key in t.kbuf when it expired
// and reports whether it did.
func (t *TopN) expirePart(id int32) bool {
	if !t.ttl.On() || !t.ttl.Expired(string(t.kbuf)) {
		return false
	}
	t.dropPart(id)
	t.ttl.Drop(string(t.kbuf))
	return true
}

// topNTTLStateVersion is the version-1 layout followed by the
// partitions' last writes (state.TTLKeys.AppendTimes).
const topNTTLStateVersion = 2

func (t *TopN) stateVersion() byte {
	if t.ttl.On() {
		return topNTTLStateVersion
	}
	return TopNStateVersion
}

func (t *TopN) appendTTL(buf []byte) []byte {
	if !t.ttl.On() {
		return buf
	}
	return t.ttl.AppendTimes(buf, row.AppendString)
}

// readTTL restores the partitions' times; those without one (an old
// snapshot) get the restore time.
func (t *TopN) readTTL(d *row.Decoder, timed bool) {
	t.ttl.Reset()
	t.ttl.Tick()
	if timed {
		t.ttl.ReadTimes(d, (*row.Decoder).KeyStr)
	}
	if !t.ttl.On() {
		return
	}
	var stale []string
	t.ttl.Each(func(k string, _ int64) {
		if _, ok := t.keys.Find([]byte(k)); !ok {
			stale = append(stale, k)
		}
	})
	for _, k := range stale {
		t.ttl.Drop(k)
	}
	for _, id := range t.liveIDs() {
		k := t.keys.Key(id)
		if _, ok := t.ttl.IDs[k]; !ok {
			t.ttl.Touch(k)
		}
	}
}

var (
	_ operator.TTLSetter = (*TopN)(nil)
	_ operator.Sweeper   = (*TopN)(nil)
)
