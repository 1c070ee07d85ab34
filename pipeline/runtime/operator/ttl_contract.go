package operator

import "time"

// State TTL (Flink's table.exec.state.ttl, StateTtlConfig with
// processing time, UpdateType.OnCreateAndWrite and
// StateVisibility.NeverReturnExpired): the state an operator keeps for a
// key is dropped once the key has not been written for TTL. Reading a
// key's state (a join probing the other side) does not refresh it;
// creating or changing it does. An expired entry is absent: it is never
// read again, a new row for its key starts fresh and a retraction of it
// finds nothing. Expiry emits nothing.
//
// Clean-up is lazy and incremental: an operator checks a key's age when
// it looks the key up, and after every input batch (and every SweepEvery
// while its input is quiet) frees at most a bounded number of the
// oldest expired entries, more than the batch could have created, so the
// state stays bounded by the keys written within TTL. The last write of
// every entry is in the operator's snapshot as wall-clock milliseconds:
// a restored run keeps the ages.
//
// The operators that honour it: GroupAgg (with its mini-batch path),
// Distinct, Join (both sides, per stored row), TopN and
// UpdatableTopN (per partition), Dedup (per key) and OverAgg (per
// partition). Window aggregates, window Top-N, sessions and interval
// state are freed by the watermark instead.

// StateTTL is an operator's state retention.
type StateTTL struct {
	// TTL: the state of a key not written for this long is dropped; 0
	// keeps it forever (the default).
	TTL time.Duration
	// Now is the processing-time clock; nil is time.Now. Tests inject a
	// clock instead of sleeping.
	Now func() time.Time
}

// TTLSetter is an operator whose keyed state honours a StateTTL. The
// planner calls SetStateTTL once, after building the operator and before
// Restore or any message.
type TTLSetter interface {
	SetStateTTL(StateTTL)
}

// Sweeper is an operator with expiring state. The node calls Sweep every
// SweepEvery while its input is quiet, so that idle keys are freed (and
// the state size metrics fall) without new input.
type Sweeper interface {
	SweepEvery() time.Duration
	Sweep()
}

// SweepEvery is how often a quiet node sweeps: often enough that the
// state size follows the TTL closely, never more than every 10ms.
func SweepEvery(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return 0
	}
	return min(max(ttl/4, 10*time.Millisecond), time.Second)
}

// SweepBudget bounds the entries one sweep frees: at least twice what a
// batch of n changes can create, so expired state never accumulates.
func SweepBudget(n int) int { return 2*n + 256 }

// QuietSweep bounds the entries one timer sweep frees (well under a
// millisecond of work), so a mass expiry on a quiet input is freed
// within a few ticks without stalling the node.
const QuietSweep = 4096
