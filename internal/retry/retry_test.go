package retry

import (
	"context"
	"errors"
	"log/slog"
	"strings"
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
