package runtime

import (
	"encoding/binary"
	"time"
)

// State TTL of a Distinct (see ttl.go): a row not seen for TTL is
// forgotten, so its next copy is emitted again as +I. Each copy
// refreshes the row's time (Flink's GroupAggFunction, which SELECT
// DISTINCT is in Flink, writes its state for every row).

// SetStateTTL implements TTLSetter.
func (d *Distinct) SetStateTTL(c StateTTL) {
	if c.TTL > 0 {
		d.ttl.set(c)
	}
}

// SweepEvery implements Sweeper.
func (d *Distinct) SweepEvery() time.Duration {
	if !d.ttl.on() {
		return 0
	}
	return sweepEvery(time.Duration(d.ttl.ttl) * time.Millisecond)
}

// Sweep implements Sweeper.
func (d *Distinct) Sweep() {
	if d.ttl.on() {
		d.ttl.tick()
		d.sweep(quietSweep)
	}
}

// insert adds key under a free id.
func (d *Distinct) insert(key []byte) int32 {
	var id int32
	if n := len(d.free); n > 0 {
		id, d.free = d.free[n-1], d.free[:n-1]
	} else {
		id = d.ids
		d.ids++
	}
	d.seen.insert(key, id)
	return id
}

func (d *Distinct) remove(id int32) {
	d.seen.remove(d.seen.bytes(id))
	d.ttl.drop(id)
	d.free = append(d.free, id)
}

func (d *Distinct) sweep(budget int) {
	d.ttl.sweep(budget, func(id int32) bool {
		d.seen.remove(d.seen.bytes(id))
		d.free = append(d.free, id)
		return true
	})
}

// expireAt removes row id when it expired and reports whether it did.
func (d *Distinct) expireAt(id int32) bool {
	if !d.ttl.expired(id) {
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
	buf = binary.AppendUvarint(buf, uint64(d.ttl.n))
	d.ttl.each(func(id int32, at int64) {
		k := d.seen.bytes(id)
		buf = binary.AppendUvarint(buf, uint64(len(k)))
		buf = append(buf, k...)
		buf = binary.AppendVarint(buf, at)
	})
	return buf
}

func (d *Distinct) resetTTL() {
	if !d.ttl.on() {
		return
	}
	c := StateTTL{TTL: time.Duration(d.ttl.ttl) * time.Millisecond, Now: d.ttl.now}
	clock := d.ttl.clock
	d.ttl = ttlList{}
	d.ttl.set(c)
	d.ttl.clock = clock
	d.ttl.tick()
}

// restoredAt gives restored row id its time: the snapshot's, or the
// restore time for a snapshot without times.
func (d *Distinct) restoredAt(id int32, at int64, timed bool) {
	if !d.ttl.on() {
		return
	}
	if !timed {
		at = d.ttl.clock
	}
	d.ttl.touchAt(id, at)
}

var (
	_ TTLSetter = (*Distinct)(nil)
	_ Sweeper   = (*Distinct)(nil)
	_ TTLSetter = (*GroupAgg)(nil)
	_ Sweeper   = (*GroupAgg)(nil)
)
