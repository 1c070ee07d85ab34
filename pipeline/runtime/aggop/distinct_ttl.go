package aggop

import (
	"encoding/binary"

	"github.com/etld/etld/pipeline/runtime/operator"
)

// State TTL of a Distinct: a row not seen for TTL is
// forgotten, so its next copy is emitted again as +I. Each copy
// refreshes the row's time (Flink's GroupAggFunction, which SELECT
// DISTINCT is in Flink, writes its state for every row).

// insert adds key under a free id.
func (d *Distinct) insert(key []byte) int32 {
	var id int32
	if n := len(d.free); n > 0 {
		id, d.free = d.free[n-1], d.free[:n-1]
	} else {
		id = d.ids
		d.ids++
	}
	d.seen.Insert(key, id)
	return id
}

func (d *Distinct) remove(id int32) {
	d.seen.Remove(d.seen.Bytes(id))
	d.ttl.Drop(id)
	d.free = append(d.free, id)
}

func (d *Distinct) sweep(budget int) {
	d.ttl.Sweep(budget, func(id int32) bool {
		d.seen.Remove(d.seen.Bytes(id))
		d.free = append(d.free, id)
		return true
	})
}

// expireAt removes row id when it expired and reports whether it did.
func (d *Distinct) expireAt(id int32) bool {
	if !d.ttl.Expired(id) {
		return false
	}
	d.remove(id)
	return true
}

// distinctTTLStateVersion is a snapshot with each row's last write: a
// version byte, the count, then per row (the oldest first) its key
// encoding and the time in milliseconds.
const distinctTTLStateVersion = 2

func (d *Distinct) snapshotTTL() []byte {
	buf := []byte{distinctTTLStateVersion}
	buf = binary.AppendUvarint(buf, uint64(d.ttl.N))
	d.ttl.Each(func(id int32, at int64) {
		k := d.seen.Bytes(id)
		buf = binary.AppendUvarint(buf, uint64(len(k)))
		buf = append(buf, k...)
		buf = binary.AppendVarint(buf, at)
	})
	return buf
}

func (d *Distinct) resetTTL() {
	if !d.ttl.On() {
		return
	}
	d.ttl.Reset()
	d.ttl.Tick()
}

// restoredAt gives restored row id its time: the snapshot's, or the
// restore time for a snapshot without times.
func (d *Distinct) restoredAt(id int32, at int64, timed bool) {
	if !d.ttl.On() {
		return
	}
	if !timed {
		at = d.ttl.Clock
	}
	d.ttl.TouchAt(id, at)
}

var (
	_ operator.TTLSetter = (*Distinct)(nil)
	_ operator.Sweeper   = (*Distinct)(nil)
	_ operator.TTLSetter = (*GroupAgg)(nil)
	_ operator.Sweeper   = (*GroupAgg)(nil)
)
