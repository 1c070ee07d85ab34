package runtime

import (
	"encoding/binary"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// State TTL of a Dedup (see ttl.go), as Flink's deduplicate functions
// with a state TTL: a key's time is its kept row's last write, so
//
//   - keep first (processing time): the first row's arrival; later rows
//     do not refresh it, and once it expired the key's next row is
//     emitted as a first row again (+I);
//   - keep last: every row that replaces the kept one; after expiry the
//     next row is +I, not -U/+U;
//   - keep first on event time: the emitted key's time is when the
//     watermark emitted it; after expiry a later row of the key waits
//     for the watermark and is emitted again. Rows still waiting are
//     freed by the watermark, not by the TTL.
//
// Batch mode has no TTL.

// SetStateTTL implements TTLSetter.
func (d *Dedup) SetStateTTL(c StateTTL) {
	if c.TTL > 0 && !d.spec.Batch {
		d.ttl.set(c)
	}
}

// SweepEvery implements Sweeper.
func (d *Dedup) SweepEvery() time.Duration {
	if !d.ttl.on() {
		return 0
	}
	return sweepEvery(time.Duration(d.ttl.ttl) * time.Millisecond)
}

// Sweep implements Sweeper.
func (d *Dedup) Sweep() {
	if d.ttl.on() {
		d.ttl.tick()
		d.sweep(quietSweep)
	}
}

func (d *Dedup) sweep(budget int) {
	d.ttl.sweep(budget, func(id int32) bool {
		d.forget(id)
		return true
	})
}

// dedupTTLStateVersion is the version-2 layout followed by the keys'
// last writes: a count, then per key (the oldest first) the key and the
// time in milliseconds.
const dedupTTLStateVersion = 3

func (d *Dedup) appendTTL(buf []byte) []byte {
	if !d.ttl.on() {
		return buf
	}
	buf = binary.AppendUvarint(buf, uint64(d.ttl.n))
	d.ttl.each(func(id int32, at int64) {
		buf = row.AppendString(buf, string(d.keys.bytes(id)))
		buf = binary.AppendVarint(buf, at)
	})
	return buf
}

// readTTL reads appendTTL's times (when timed) into a restored Dedup,
// then gives the keys that have none (an old snapshot) the restore time.
// Keys the snapshot no longer holds are skipped.
func (d *Dedup) readTTL(dec *row.Decoder, timed bool) {
	d.ttl.tick()
	if timed {
		for range dec.Count(2) {
			d.kbuf = append(d.kbuf[:0], dec.Bytes()...)
			at := dec.Varint()
			if dec.Err() != nil {
				return
			}
			if id, ok := d.keys.find(d.kbuf); ok && d.ttl.on() && d.tracked(id) {
				d.ttl.touchAt(id, at)
			}
		}
	}
	if !d.ttl.on() {
		return
	}
	for _, id := range d.ids() {
		if d.tracked(id) && !d.ttl.linked(id) {
			d.ttl.touch(id)
		}
	}
}

// tracked reports whether id's state expires by TTL: every key's but
// that of a row waiting for the watermark (event time, keep first).
func (d *Dedup) tracked(id int32) bool { return !d.firstOnTimer() || !d.kept.has(id) }

var (
	_ TTLSetter = (*Dedup)(nil)
	_ Sweeper   = (*Dedup)(nil)
)
