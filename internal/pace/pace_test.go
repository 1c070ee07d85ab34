package pace

import (
	"context"
	"errors"
	"testing"
)

// TestTakeEndsWithContext: a wait for tokens that will not come in time
// ends with the context's error.
func TestTakeEndsWithContext(t *testing.T) {
	p := New(0.001) // one row in 1000 s
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n, err := p.Take(ctx, 10); !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("Take = %d, %v; want 0, context.Canceled", n, err)
	}
}

// TestTakeNeverMoreThanAsked: whatever the bucket holds, Take gives at
// most want rows, and at least one.
func TestTakeNeverMoreThanAsked(t *testing.T) {
	p := New(1e9)
	for _, want := range []int{1, 3, 1000} {
		n, err := p.Take(context.Background(), want)
		if err != nil || n < 1 || n > want {
			t.Fatalf("Take(%d) = %d, %v", want, n, err)
		}
	}
}
