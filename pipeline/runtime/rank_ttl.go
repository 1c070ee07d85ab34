package runtime

import (
	"time"

	"github.com/etld/etld/pipeline/row"
)

// State TTL of a streaming TopN (see ttl.go): the unit is the partition.
// Every row of a partition refreshes its time; a partition not written
// for TTL is dropped whole, so its next row enters an empty top (+I at
// rank 1) and a retraction of a row of it is ignored. Flink's rank
// functions expire their sort-key entries one by one inside a
// partition (MapState entries), which can leave a partition's tree and
// its rows out of step (their "lenient" warnings); etld keeps a
// partition's rows together. Batch mode has no TTL.

// SetStateTTL implements TTLSetter.
func (t *TopN) SetStateTTL(c StateTTL) {
	if c.TTL > 0 && !t.spec.Batch {
		t.ttl.set(c)
	}
}

// SweepEvery implements Sweeper.
func (t *TopN) SweepEvery() time.Duration {
	if !t.ttl.on() {
		return 0
	}
	return sweepEvery(time.Duration(t.ttl.list.ttl) * time.Millisecond)
}

// Sweep implements Sweeper.
func (t *TopN) Sweep() {
	if t.ttl.on() {
		t.ttl.tick()
		t.sweep(quietSweep)
	}
}

func (t *TopN) sweep(budget int) {
	t.ttl.sweep(budget, func(k string) bool {
		t.kbuf = append(t.kbuf[:0], k...)
		if id, ok := t.keys.find(t.kbuf); ok {
			t.dropPart(id)
		}
		return true
	})
}

// expirePart drops the partition of the key in t.kbuf when it expired
// and reports whether it did.
func (t *TopN) expirePart(id int32) bool {
	if !t.ttl.expired(string(t.kbuf)) {
		return false
	}
	t.dropPart(id)
	t.ttl.drop(string(t.kbuf))
	return true
}

// topNTTLStateVersion is the version-1 layout followed by the
// partitions' last writes (ttlKeys.appendTimes).
const topNTTLStateVersion = 2

func (t *TopN) stateVersion() byte {
	if t.ttl.on() {
		return topNTTLStateVersion
	}
	return topNStateVersion
}

func (t *TopN) appendTTL(buf []byte) []byte {
	if !t.ttl.on() {
		return buf
	}
	return t.ttl.appendTimes(buf, row.AppendString)
}

// readTTL restores the partitions' times; those without one (an old
// snapshot) get the restore time.
func (t *TopN) readTTL(d *row.Decoder, timed bool) {
	t.ttl.reset()
	t.ttl.tick()
	if timed {
		t.ttl.readTimes(d, (*row.Decoder).Str)
	}
	if !t.ttl.on() {
		return
	}
	var stale []string
	t.ttl.each(func(k string, _ int64) {
		if _, ok := t.keys.find([]byte(k)); !ok {
			stale = append(stale, k)
		}
	})
	for _, k := range stale {
		t.ttl.drop(k)
	}
	for id, p := range t.parts {
		if p == nil {
			continue
		}
		k := t.keys.key(int32(id))
		if _, ok := t.ttl.ids[k]; !ok {
			t.ttl.touch(k)
		}
	}
}

var (
	_ TTLSetter = (*TopN)(nil)
	_ Sweeper   = (*TopN)(nil)
)
