package udf

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/wasmbuild"
	"github.com/etld/etld/pipeline/row"
)

// callStrings calls export of the sandbox module over one batch of
// strings and returns the results and errors per row.
func callStrings(t *testing.T, export string, returns row.Type, args []string, timeout time.Duration) ([]row.Value, []error) {
	t.Helper()
	d := decl(export, wasmbuild.Go(t, "testdata/wasm/sandbox"), []row.Type{row.Of(row.String)}, returns)
	d.Timeout, d.MemoryLimit = timeout, 32<<20
	f := loadOne(t, d)
	inst, err := f.NewInstance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	col := make([]row.Value, len(args))
	for i, a := range args {
		col[i] = row.StringValue(a)
	}
	out, errs := make([]row.Value, len(args)), make([]error, len(args))
	if err := inst.Scalar([][]row.Value{col}, len(args), out, errs); err != nil {
		t.Fatal(err)
	}
	return out, errs
}

// wantRows checks that the rows named in bad failed with an error
// containing their text, and that the others echo their argument.
func wantRows(t *testing.T, args []string, out []row.Value, errs []error, bad map[int]string) {
	t.Helper()
	for i, a := range args {
		if want, ok := bad[i]; ok {
			if errs[i] == nil || !strings.Contains(errs[i].Error(), want) || !out[i].IsNull() {
				t.Errorf("row %d (%q): got %v, error %v; want an error containing %q", i, a, out[i], errs[i], want)
			}
			continue
		}
		if errs[i] != nil || out[i].Str() != a {
			t.Errorf("row %d (%q): got %v, error %v; want it back", i, a, out[i], errs[i])
		}
	}
}

// TestSandboxTimeLimit stops a call that never ends at its time limit:
// the row fails, the rows around it are computed (the batch retried row
// by row in fresh instances).
func TestSandboxTimeLimit(t *testing.T) {
	args := []string{"a", "loop", "b"}
	start := time.Now()
	out, errs := callStrings(t, "loop", row.Of(row.String), args, 300*time.Millisecond)
	wantRows(t, args, out, errs, map[int]string{1: "the call ran past its time limit"})
	if !errors.Is(errs[1], ErrTimeout) {
		t.Errorf("error %v is not ErrTimeout", errs[1])
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v for two time limits of 300ms", d)
	}
}

// TestSandboxEndlessBatch fails a batch whose every row runs past the
// time limit after two of them, the rest without a call.
func TestSandboxEndlessBatch(t *testing.T) {
	args := []string{"loop", "loop", "loop", "loop", "loop", "loop"}
	_, errs := callStrings(t, "loop", row.Of(row.String), args, 300*time.Millisecond)
	for i, err := range errs {
		want := "the call ran past its time limit"
		if i >= maxTimeouts {
			want = "not called: the function ran past its time limit on 2 rows of this batch"
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("row %d: error %v, want %q", i, err, want)
		}
	}
}

// TestSandboxTrap fails the row a function panics on.
func TestSandboxTrap(t *testing.T) {
	args := []string{"x", "trap", "y", "trap"}
	out, errs := callStrings(t, "trap", row.Of(row.String), args, time.Second)
	wantRows(t, args, out, errs, map[int]string{1: "wasm error: unreachable (the module wrote: panic: trapped)", 3: "panic: trapped"})
}

// TestSandboxMemoryCap stops a function that allocates past its memory
// cap: the row fails, the others are computed.
func TestSandboxMemoryCap(t *testing.T) {
	args := []string{"x", "hog", "y"}
	// A time limit long enough for the module to reach its cap.
	out, errs := callStrings(t, "hog", row.Of(row.String), args, 30*time.Second)
	wantRows(t, args, out, errs, map[int]string{1: "out of memory"})
}

// TestSandboxRowErrors passes the errors a function reports per row.
func TestSandboxRowErrors(t *testing.T) {
	args := []string{"good", "bad one", "fine", "bad two"}
	out, errs := callStrings(t, "fails", row.Of(row.String), args, time.Second)
	wantRows(t, args, out, errs, map[int]string{1: "refused bad one", 3: "refused bad two"})
}

// TestSandboxWrongType fails every row of a batch whose result has
// another type than declared.
func TestSandboxWrongType(t *testing.T) {
	args := []string{"a", "b"}
	out, errs := callStrings(t, "wrong", row.Of(row.BigInt), args, time.Second)
	wantRows(t, args, out, errs, map[int]string{0: "a result of type DOUBLE, declared BIGINT", 1: "a result of type DOUBLE, declared BIGINT"})
}

// TestSandboxClock gives a deterministic function a fixed clock, and one
// declared deterministic: false the machine's.
func TestSandboxClock(t *testing.T) {
	args := []string{"a"}
	fixed, errs := callStrings(t, "clock", row.Of(row.BigInt), args, time.Second)
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	if now := time.Now().UnixNano(); fixed[0].Int64() > now-int64(24*time.Hour) {
		t.Errorf("a deterministic function read the clock: %d (now %d)", fixed[0].Int64(), now)
	}
	d := decl("clock", wasmbuild.Go(t, "testdata/wasm/sandbox"), []row.Type{row.Of(row.String)}, row.Of(row.BigInt))
	d.Deterministic = false
	f := loadOne(t, d)
	inst, err := f.NewInstance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	out, rerrs := make([]row.Value, 1), make([]error, 1)
	before := time.Now().UnixNano()
	if err := inst.Scalar([][]row.Value{{row.StringValue("a")}}, 1, out, rerrs); err != nil || rerrs[0] != nil {
		t.Fatal(err, rerrs[0])
	}
	if got := out[0].Int64(); got < before || got > time.Now().UnixNano() {
		t.Errorf("deterministic: false read %d, not the clock (%d)", got, before)
	}
}
