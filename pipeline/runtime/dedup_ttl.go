package runtime

import (
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
	return sweepEvery(time.Duration(d.ttl.list.ttl) * time.Millisecond)
}

// Sweep implements Sweeper.
func (d *Dedup) Sweep() {
	if d.ttl.on() {
		d.ttl.tick()
		d.sweep(quietSweep)
	}
}

func (d *Dedup) sweep(budget int) {
	d.ttl.sweep(budget, func(k string) bool {
		delete(d.kept, k)
		delete(d.done, k)
		return true
	})
}

// expireKey drops the state of the key in d.kbuf when it expired and
// reports whether it did.
func (d *Dedup) expireKey() bool {
	if !d.ttl.expired(string(d.kbuf)) {
		return false
	}
	k := string(d.kbuf)
	delete(d.kept, k)
	delete(d.done, k)
	d.ttl.drop(k)
	return true
}

// dedupTTLStateVersion is the version-2 layout followed by the keys'
// last writes (ttlKeys.appendTimes).
const dedupTTLStateVersion = 3

func (d *Dedup) appendTTL(buf []byte) []byte {
	if !d.ttl.on() {
		return buf
	}
	return d.ttl.appendTimes(buf, row.AppendString)
}

func (d *Dedup) readTTL(dec *row.Decoder, timed bool) {
	d.ttl.reset()
	d.ttl.tick()
	if timed {
		d.ttl.readTimes(dec, (*row.Decoder).Str)
	}
}

// touchRestored gives the restored keys without a time (an old
// snapshot) the restore time; it runs after kept and done are restored.
func (d *Dedup) touchRestored() {
	if !d.ttl.on() {
		return
	}
	var stale []string
	d.ttl.each(func(k string, _ int64) {
		_, kept := d.kept[k]
		_, done := d.done[k]
		if !kept && !done {
			stale = append(stale, k)
		}
	})
	for _, k := range stale {
		d.ttl.drop(k)
	}
	if d.firstOnTimer() {
		for k := range d.done {
			if _, ok := d.ttl.ids[k]; !ok {
				d.ttl.touch(k)
			}
		}
		return
	}
	for k := range d.kept {
		if _, ok := d.ttl.ids[k]; !ok {
			d.ttl.touch(k)
		}
	}
}

var (
	_ TTLSetter = (*Dedup)(nil)
	_ Sweeper   = (*Dedup)(nil)
)
