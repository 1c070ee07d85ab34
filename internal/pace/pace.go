// Package pace holds generated sources to a rate: a token bucket on the
// monotonic clock, shared by the sources that generate rows rather than
// read them.
package pace

import (
	"context"
	"math"
	"time"
)

// Pacing: a token bucket on the monotonic clock. Tokens (rows) accrue at
// rate per second from the first Read, starting from none, so that n rows
// take at least n/rate seconds. A Read waits until a chunk of about 10ms
// worth of rows is available rather than for each row, which keeps batches
// steady without a timer per row; the bucket holds at most about 100ms worth,
// so a consumer that stalls gets a short burst afterwards, not a flood.
const (
	chunkTime = 10 * time.Millisecond
	burstTime = 100 * time.Millisecond
)

// Pacer paces one source; it is not safe for concurrent use.
type Pacer struct {
	rate    float64 // rows per second
	chunk   float64 // rows a Read waits for, at least 1
	burst   float64 // bucket capacity, at least chunk
	tokens  float64
	last    time.Time
	started bool
	timer   *time.Timer
}

// New returns a pacer of rate rows per second.
func New(rate float64) *Pacer {
	chunk := max(1, math.Floor(rate*chunkTime.Seconds()))
	return &Pacer{rate: rate, chunk: chunk, burst: max(chunk, rate*burstTime.Seconds())}
}

// Take waits until min(want, chunk) rows are allowed, then takes as many as
// are allowed, up to want. It returns early with ctx's error.
func (p *Pacer) Take(ctx context.Context, want int) (int, error) {
	now := time.Now()
	if !p.started {
		p.last, p.started = now, true
	}
	p.refill(now)
	need := min(float64(want), p.chunk)
	for p.tokens < need {
		wait := time.Duration((need-p.tokens)/p.rate*float64(time.Second)) + time.Microsecond
		if err := p.sleep(ctx, wait); err != nil {
			return 0, err
		}
		p.refill(time.Now())
	}
	n := min(want, int(p.tokens))
	p.tokens -= float64(n)
	return n, nil
}

func (p *Pacer) refill(now time.Time) {
	if d := now.Sub(p.last); d > 0 {
		p.tokens = min(p.burst, p.tokens+d.Seconds()*p.rate)
		p.last = now
	}
}

func (p *Pacer) sleep(ctx context.Context, d time.Duration) error {
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d)
	}
	select {
	case <-ctx.Done():
		p.timer.Stop()
		return ctx.Err()
	case <-p.timer.C:
		return nil
	}
}
