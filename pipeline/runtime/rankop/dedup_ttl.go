package rankop

import (
	"encoding/binary"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// State TTL of a Dedup, as Flink's deduplicate functions with a state
// TTL: a key's time is its kept row's last write, so
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

// SetStateTTL implements TTLSetter; a batch deduplication ignores it.
func (d *Dedup) SetStateTTL(c operator.StateTTL) {
	if !d.spec.Batch {
		d.Expiry.SetStateTTL(c)
	}
}

func (d *Dedup) sweep(budget int) {
	d.ttl.Sweep(budget, func(id int32) bool {
		d.forget(id)
		return true
	})
}

// dedupTTLStateVersion is the version-2 layout followed by the keys'
// last writes: a count, then per key (the oldest first) the key and the
// time in milliseconds.
const dedupTTLStateVersion = 3

// ttlOrder lists the ids with a TTL time, the oldest first; none
// without a TTL.
func (d *Dedup) ttlOrder() []int32 {
	if !d.ttl.On() {
		return nil
	}
	ids := make([]int32, 0, d.ttl.N)
	d.ttl.Each(func(id int32, _ int64) { ids = append(ids, id) })
	return ids
}

// appendTTL appends the times of ids, in the TTL list's order.
func (d *Dedup) appendTTL(buf []byte, ids []int32) []byte {
	if !d.ttl.On() {
		return buf
	}
	buf = binary.AppendUvarint(buf, uint64(len(ids)))
	for _, id := range ids {
		buf = row.AppendString(buf, string(d.keys.Bytes(id)))
		buf = binary.AppendVarint(buf, d.ttl.At[id])
	}
	return buf
}

// readTTL reads appendTTL's times (when timed) into a restored Dedup,
// then gives the keys that have none (an old snapshot) the restore time.
// Keys the snapshot no longer holds are skipped.
func (d *Dedup) readTTL(dec *row.Decoder, timed bool) {
	d.ttl.Tick()
	if timed {
		for range dec.Count(2) {
			d.kbuf = append(d.kbuf[:0], dec.KeyBytes()...)
			at := dec.Varint()
			if dec.Err() != nil {
				return
			}
			if id, ok := d.keys.Find(d.kbuf); ok && d.ttl.On() && d.tracked(id) {
				d.ttl.TouchAt(id, at)
			}
		}
	}
	if !d.ttl.On() {
		return
	}
	for _, id := range d.ids() {
		if d.tracked(id) && !d.ttl.Linked(id) {
			d.ttl.Touch(id)
		}
	}
}

// tracked reports whether id's state expires by TTL: every key's but
// that of a row waiting for the watermark (event time, keep first).
func (d *Dedup) tracked(id int32) bool { return !d.firstOnTimer() || !d.kept.Has(id) }

var (
	_ operator.TTLSetter = (*Dedup)(nil)
	_ operator.Sweeper   = (*Dedup)(nil)
)
