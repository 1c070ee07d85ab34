package panics

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCall(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		f         func() error
		wantErr   string
		wantPanic bool
		wantIs    error
	}{
		{"returns nil", func() error { return nil }, "", false, nil},
		{"returns an error", func() error { return boom }, "boom", false, boom},
		{"panics with a string", func() error { panic("bad options") }, "panic: bad options", true, nil},
		{"panics with an error", func() error { panic(fmt.Errorf("wrapped: %w", boom)) }, "panic: wrapped: boom", true, boom},
		{"runtime error", func() error {
			var s []int
			_ = s[3]
			return nil
		}, "panic: runtime error: index out of range [3] with length 0", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Call(tt.f)
			if got := fmt.Sprint(err); (err == nil && tt.wantErr != "") || (err != nil && got != tt.wantErr) {
				t.Fatalf("Call = %v, want %q", err, tt.wantErr)
			}
			stack, ok := Stack(fmt.Errorf("pipeline p: %w", err))
			if ok != tt.wantPanic {
				t.Fatalf("Stack found a panic: %v, want %v", ok, tt.wantPanic)
			}
			// The stack is the panicking goroutine's: it names this test.
			if ok && !strings.Contains(stack, "panics.TestCall") {
				t.Errorf("stack does not reach the panicking function:\n%s", stack)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
		})
	}
}
