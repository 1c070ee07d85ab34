package operator

import "time"

// Expiry is an operator's state TTL, embedded to give it TTLSetter and
// Sweeper. The operator says once, when it is built (InitExpiry), how to
// start keeping ages, how to read the clock for a batch and how to free
// expired state; Expiry does the rest: nothing at all while no TTL is
// set, and otherwise a clock read per batch, a bounded clean-up after
// it (Begin), and a larger one on the node's timer while the input is
// quiet (Sweep).
type Expiry struct {
	ttl  time.Duration
	arm  func(StateTTL)
	tick func()
	free func(budget int)
}

// InitExpiry tells e how to keep the operator's ages: arm starts keeping
// them (the TTL is > 0), tick reads the processing-time clock once for
// what follows, free frees at most budget expired entries, the oldest
// first.
func (e *Expiry) InitExpiry(arm func(StateTTL), tick func(), free func(budget int)) {
	e.arm, e.tick, e.free = arm, tick, free
}

// SetStateTTL implements TTLSetter. A TTL of 0 keeps state forever.
func (e *Expiry) SetStateTTL(c StateTTL) {
	if c.TTL <= 0 {
		return
	}
	e.ttl = c.TTL
	e.arm(c)
}

// Expiring reports whether state expires.
func (e *Expiry) Expiring() bool { return e.ttl > 0 }

// SweepEvery implements Sweeper: 0 (never) without a TTL.
func (e *Expiry) SweepEvery() time.Duration { return SweepEvery(e.ttl) }

// Sweep implements Sweeper: it frees expired state while the input is
// quiet, so that idle keys go too.
func (e *Expiry) Sweep() {
	if e.ttl > 0 {
		e.tick()
		e.free(QuietSweep)
	}
}

// Begin starts a batch of n changes: it reads the clock, and the
// returned function, deferred by the caller, frees more expired entries
// than the batch can have created, so the state stays bounded by the
// keys written within the TTL.
func (e *Expiry) Begin(n int) (end func()) {
	if e.ttl <= 0 {
		return noEnd
	}
	e.tick()
	return func() { e.free(SweepBudget(n)) }
}

func noEnd() {}

var (
	_ TTLSetter = (*Expiry)(nil)
	_ Sweeper   = (*Expiry)(nil)
)
