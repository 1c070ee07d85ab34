package testenv

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// OutageDuration is how long recovery tests keep a server away:
// ETLD_OUTAGE_SECONDS, else def. A sink's backoff reaches its cap within a
// few seconds, so a short outage already shows the longest wait; a 30 s
// one (ETLD_OUTAGE_SECONDS=30) shows that the cap holds.
func OutageDuration(def time.Duration) time.Duration {
	if n, err := strconv.Atoi(os.Getenv("ETLD_OUTAGE_SECONDS")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return def
}

// MeasureRecovery takes p down, runs write (a write and flush that
// retries until it succeeds) on its own goroutine, keeps the server away
// for outage once write has met the outage (a connection turned away),
// brings it back, and returns the time from the server's return until
// write returned: the sink's recovery time. It fails t if write returns
// during the outage, fails, or does not return within a minute.
func MeasureRecovery(t testing.TB, p *Proxy, outage time.Duration, write func() error) time.Duration {
	t.Helper()
	p.Down()
	refused := p.Refused()
	type result struct {
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		err := write()
		done <- result{err, time.Now()}
	}()
	p.WaitRefused(t, refused+1)
	select {
	case r := <-done:
		t.Fatalf("the write returned (%v) while the server was away", r.err)
	case <-time.After(outage):
	}
	p.Up()
	up := time.Now()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("the write failed after the server came back: %v", r.err)
		}
		return r.at.Sub(up)
	case <-time.After(time.Minute):
		t.Fatal("the write did not succeed within a minute of the server's return")
	}
	return 0
}

// RecoveryBound is what recovery tests assert: a sink writes again
// within 2 s of its server's return, plus slack for a loaded machine.
const RecoveryBound = 2*time.Second + 500*time.Millisecond
