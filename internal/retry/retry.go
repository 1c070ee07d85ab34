// Package retry runs an operation again after transient failures, with
// exponential backoff and jitter, until it succeeds, fails permanently or
// the context ends. Sinks use it so that a broker or database that is away
// for a while holds the pipeline back instead of losing rows.
package retry

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Backoff is a retry schedule. The zero value retries forever, starting at
// 100ms and doubling up to 30s.
type Backoff struct {
	// Initial is the first wait (default 100ms).
	Initial time.Duration
	// Max caps the wait (default 30s).
	Max time.Duration
	// Attempts bounds the number of tries; 0 means until ctx ends. A sink
	// that must never drop data leaves it at 0.
	Attempts int
	// Probe, if set, is a cheap health request (a ping, a HEAD /) made
	// every ProbeEvery while Do waits between tries, each bounded by
	// ProbeTimeout: once it succeeds the wait ends and the operation is
	// tried at once. A server's return is then noticed within about
	// ProbeEvery, without resending a large write at that rate.
	Probe func(ctx context.Context) error
	// ProbeEvery is the probing interval (default 200ms).
	ProbeEvery time.Duration
	// ProbeTimeout bounds one probe (default 500ms): a server that
	// accepts connections but does not answer must not hold the wait.
	ProbeTimeout time.Duration
}

// Sink is the schedule of writes to a server that may be away for a
// while: 100ms doubling to 1s, so that writes resume within about a
// second of the server's return even after a long outage (a 30s cap made
// recovery take up to 30s), with the sink's Probe set to notice the
// return sooner still. A failed write costs the server little: the next
// try is a reconnect, refused at once while it is down.
var Sink = Backoff{Initial: 100 * time.Millisecond, Max: time.Second}

// WithProbe returns b probing with probe while it waits.
func (b Backoff) WithProbe(probe func(ctx context.Context) error) Backoff {
	b.Probe = probe
	return b
}

// Delay returns the wait before retry number attempt (1 for the first
// retry): Initial doubled per attempt, capped at Max, with up to 20% jitter
// so that many clients do not retry in step.
func (b Backoff) Delay(attempt int) time.Duration {
	initial, maxWait := b.Initial, b.Max
	if initial <= 0 {
		initial = 100 * time.Millisecond
	}
	if maxWait <= 0 {
		maxWait = 30 * time.Second
	}
	d := initial
	for i := 1; i < attempt && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// permanent marks an error that retrying cannot fix.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent wraps err so that Do returns it at once instead of retrying.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// expected marks an error that is a normal step, not a failure.
type expected struct{ err error }

func (e expected) Error() string { return e.err.Error() }
func (e expected) Unwrap() error { return e.err }

// Expected wraps err so that Do retries it as any other error but logs
// the retry at debug level instead of as a warning: the operation is
// waiting for something it caused, such as the metadata of a topic it
// has just created.
func Expected(err error) error {
	if err == nil {
		return nil
	}
	return expected{err}
}

// counterKey is the context key of WithCounter's counter.
type counterKey struct{}

// WithCounter returns ctx carrying c: Do adds 1 to c for every retry it
// makes under ctx or a context made from it (context.WithoutCancel keeps
// it too). The runtime counts each connector's retries so, for /metrics,
// without the connector counting them itself.
func WithCounter(ctx context.Context, c *atomic.Int64) context.Context {
	return context.WithValue(ctx, counterKey{}, c)
}

// Do calls op until it returns nil or a Permanent error, waiting b.Delay
// between tries, and logs each retry on logger (which may be nil) with
// what: a warning, or a debug line for an Expected error. It returns the
// permanent error unwrapped, the last error when the attempts run out, or
// the context's cause together with the last error.
func Do(ctx context.Context, b Backoff, logger *slog.Logger, what string, op func(ctx context.Context) error) error {
	warned := false // a retry was logged as a warning
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil {
			if warned && logger != nil {
				logger.Info(what+": succeeded after retrying", "attempts", attempt)
			}
			return nil
		}
		var p permanent
		if errors.As(err, &p) {
			return p.err
		}
		if b.Attempts > 0 && attempt >= b.Attempts {
			return err
		}
		// A context that ended during op ends the retries now: with a
		// short wait the timer could otherwise win the select below.
		if ctx.Err() != nil {
			return errors.Join(context.Cause(ctx), err)
		}
		wait := b.Delay(attempt)
		if c, _ := ctx.Value(counterKey{}).(*atomic.Int64); c != nil {
			c.Add(1)
		}
		if logger != nil {
			level := slog.LevelWarn
			if errors.As(err, new(expected)) {
				level = slog.LevelDebug
			} else {
				warned = true
			}
			logger.Log(ctx, level, what+": will retry", "attempt", attempt, "in", wait.Round(time.Millisecond), "error", err.Error())
		}
		if !b.wait(ctx, wait) {
			return errors.Join(context.Cause(ctx), err)
		}
	}
}

// wait waits d, or less once the probe succeeds, and reports false when
// ctx ended first.
func (b Backoff) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	var probe <-chan time.Time
	if b.Probe != nil {
		every := b.ProbeEvery
		if every <= 0 {
			every = 200 * time.Millisecond
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		probe = tick.C
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case <-probe:
			timeout := b.ProbeTimeout
			if timeout <= 0 {
				timeout = 500 * time.Millisecond
			}
			pctx, cancel := context.WithTimeout(ctx, timeout)
			err := b.Probe(pctx)
			cancel()
			if err == nil {
				return ctx.Err() == nil
			}
		}
	}
}
