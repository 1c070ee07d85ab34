package retry

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestDelayGrowsAndCaps(t *testing.T) {
	b := Backoff{Initial: 10 * time.Millisecond, Max: 80 * time.Millisecond}
	tests := []struct {
		attempt  int
		min, max time.Duration
	}{
		{1, 8 * time.Millisecond, 10 * time.Millisecond},
		{2, 16 * time.Millisecond, 20 * time.Millisecond},
		{4, 64 * time.Millisecond, 80 * time.Millisecond},
		{10, 64 * time.Millisecond, 80 * time.Millisecond},
	}
	for _, tt := range tests {
		for range 50 {
			if d := b.Delay(tt.attempt); d < tt.min || d > tt.max {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", tt.attempt, d, tt.min, tt.max)
			}
		}
	}
}

func TestDoRetriesUntilSuccess(t *testing.T) {
	calls := 0
	err := Do(context.Background(), Backoff{Initial: time.Microsecond}, nil, "op", func(context.Context) error {
		calls++
		if calls < 3 {
			return errors.New("transient")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err=%v calls=%d, want nil after 3 calls", err, calls)
	}
}

func TestDoStopsOnPermanent(t *testing.T) {
	base := errors.New("data too long")
	calls := 0
	err := Do(context.Background(), Backoff{Initial: time.Microsecond}, nil, "op", func(context.Context) error {
		calls++
		return Permanent(base)
	})
	if !errors.Is(err, base) || IsPermanent(err) || calls != 1 {
		t.Fatalf("err=%v calls=%d, want the unwrapped permanent error after 1 call", err, calls)
	}
}

func TestDoStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Do(ctx, Backoff{Initial: time.Microsecond}, nil, "op", func(context.Context) error {
		calls++
		if calls == 2 {
			cancel()
		}
		return errors.New("down")
	})
	if !errors.Is(err, context.Canceled) || calls != 2 {
		t.Fatalf("err=%v calls=%d, want context.Canceled after 2 calls", err, calls)
	}
}

func TestDoAttempts(t *testing.T) {
	calls := 0
	err := Do(context.Background(), Backoff{Initial: time.Microsecond, Attempts: 4}, nil, "op", func(context.Context) error {
		calls++
		return errors.New("down")
	})
	if err == nil || calls != 4 {
		t.Fatalf("err=%v calls=%d, want an error after 4 calls", err, calls)
	}
}

// An Expected error is retried like any other, but the retry is a debug
// line, not a warning, and its success is not announced.
func TestDoLogsExpectedRetriesAtDebug(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		want     []string
		wantNone []string
	}{
		{"expected", Expected(errors.New("topic created, reading its metadata again")),
			[]string{`level=DEBUG msg="op: will retry"`}, []string{"level=WARN", "succeeded after retrying"}},
		{"transient", errors.New("connection refused"),
			[]string{`level=WARN msg="op: will retry"`, "succeeded after retrying"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs strings.Builder
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			calls := 0
			err := Do(context.Background(), Backoff{Initial: time.Microsecond}, logger, "op", func(context.Context) error {
				calls++
				if calls < 2 {
					return tt.err
				}
				return nil
			})
			if err != nil || calls != 2 {
				t.Fatalf("err=%v calls=%d, want nil after 2 calls", err, calls)
			}
			for _, w := range tt.want {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("logs lack %q:\n%s", w, logs.String())
				}
			}
			for _, w := range tt.wantNone {
				if strings.Contains(logs.String(), w) {
					t.Errorf("logs have %q:\n%s", w, logs.String())
				}
			}
		})
	}
}

func TestProbeEndsTheWait(t *testing.T) {
	// An hour between tries: only the probe can make the second try come.
	probes, calls := 0, 0
	b := Backoff{Initial: time.Hour, ProbeEvery: time.Millisecond,
		Probe: func(context.Context) error {
			probes++
			if probes < 3 {
				return errors.New("still down")
			}
			return nil
		}}
	start := time.Now()
	err := Do(context.Background(), b, nil, "op", func(context.Context) error {
		calls++
		if calls == 1 {
			return errors.New("down")
		}
		return nil
	})
	if err != nil || calls != 2 || probes != 3 {
		t.Fatalf("err=%v calls=%d probes=%d, want nil after 2 calls and 3 probes", err, calls, probes)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Do took %s: the probe's success did not end the wait", d)
	}
}

func TestProbeIsBounded(t *testing.T) {
	// A probe that hangs (a server that accepts and never answers) is cut
	// at ProbeTimeout; the wait still ends on its own timer.
	var deadlines []time.Duration
	b := Backoff{Initial: 50 * time.Millisecond, Max: 50 * time.Millisecond, Attempts: 2,
		ProbeEvery: time.Millisecond, ProbeTimeout: 20 * time.Millisecond,
		Probe: func(ctx context.Context) error {
			d, ok := ctx.Deadline()
			if !ok {
				t.Error("probe context has no deadline")
			}
			deadlines = append(deadlines, time.Until(d))
			<-ctx.Done()
			return ctx.Err()
		}}
	err := Do(context.Background(), b, nil, "op", func(context.Context) error { return errors.New("down") })
	if err == nil || err.Error() != "down" {
		t.Fatalf("err = %v, want the last error after the attempts", err)
	}
	if len(deadlines) == 0 {
		t.Fatal("the probe never ran")
	}
	for _, d := range deadlines {
		if d > 20*time.Millisecond {
			t.Errorf("probe deadline %s away, want at most ProbeTimeout 20ms", d)
		}
	}
}

func TestProbeWaitEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := Backoff{Initial: time.Hour, ProbeEvery: time.Millisecond,
		Probe: func(context.Context) error { cancel(); return errors.New("down") }}
	err := Do(ctx, b, nil, "op", func(context.Context) error { return errors.New("down") })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the context's", err)
	}
}

func TestSinkScheduleRecoversWithinASecond(t *testing.T) {
	// However long the outage, no wait is longer than the cap.
	for attempt := 1; attempt < 100; attempt++ {
		if d := Sink.Delay(attempt); d > time.Second {
			t.Fatalf("Sink.Delay(%d) = %s, want at most 1s", attempt, d)
		}
	}
}

// A counter in the context counts the retries, not the tries, also
// through a context made from it that has lost its cancellation.
func TestDoCountsRetriesIntoTheContext(t *testing.T) {
	var n atomic.Int64
	ctx := context.WithoutCancel(WithCounter(context.Background(), &n))
	tries := 0
	err := Do(ctx, Backoff{Initial: time.Millisecond, Max: time.Millisecond}, nil, "op", func(context.Context) error {
		tries++
		if tries < 4 {
			return errors.New("away")
		}
		return nil
	})
	if err != nil || tries != 4 || n.Load() != 3 {
		t.Fatalf("err %v, %d tries, %d retries counted; want 4 tries, 3 retries", err, tries, n.Load())
	}
	_ = Do(ctx, Backoff{}, nil, "op", func(context.Context) error { return Permanent(errors.New("no")) })
	if n.Load() != 3 {
		t.Errorf("a permanent error counted as a retry: %d", n.Load())
	}
}
