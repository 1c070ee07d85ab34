package rankop

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// State TTL of an UpdatableTopN: the unit is the partition, as for
// TopN. Every +I/+U of a partition refreshes its time; a partition not
// written for TTL is dropped whole, so its next row enters an empty top
// (+I at rank 1). Flink's UpdatableTopNFunction expires its row-key
// entries one by one (a row-key map and a sort-key map that can fall out
// of step); etld keeps a partition's rows together.

func (t *UpdatableTopN) sweep(budget int) {
	t.ttl.Sweep(budget, func(k string) bool {
		if p := t.parts[k]; p != nil {
			t.rows -= int64(p.n)
			delete(t.parts, k)
		}
		return true
	})
}

// expirePart drops the partition of the key in t.kbuf when it expired
// and reports whether it did.
func (t *UpdatableTopN) expirePart() bool {
	k := string(t.kbuf)
	if !t.ttl.Expired(k) {
		return false
	}
	t.rows -= int64(t.parts[k].n)
	delete(t.parts, k)
	t.ttl.Drop(k)
	return true
}

// updatableTopNTTLStateVersion is the version-1 layout followed by the
// partitions' last writes (state.TTLKeys.AppendTimes), written while a
// TTL is set.
const updatableTopNTTLStateVersion = 2

func (t *UpdatableTopN) stateVersion() byte {
	if t.ttl.On() {
		return updatableTopNTTLStateVersion
	}
	return updatableTopNStateVersion
}

func (t *UpdatableTopN) appendTTL(buf []byte) []byte {
	if !t.ttl.On() {
		return buf
	}
	return t.ttl.AppendTimes(buf, row.AppendString)
}

// readTTL restores the partitions' times; those without one (a snapshot
// taken without a TTL) get the restore time.
func (t *UpdatableTopN) readTTL(d *row.Decoder, timed bool, parts map[string]*fastPartition) {
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
		if parts[k] == nil {
			stale = append(stale, k)
		}
	})
	for _, k := range stale {
		t.ttl.Drop(k)
	}
	for k := range parts {
		if _, ok := t.ttl.IDs[k]; !ok {
			t.ttl.Touch(k)
		}
	}
}

var (
	_ operator.TTLSetter = (*UpdatableTopN)(nil)
	_ operator.Sweeper   = (*UpdatableTopN)(nil)
)
