package operator

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// trackingEmitter records which input change each emitted row came from.
type trackingEmitter struct {
	cur  int
	from []int
}

func (e *trackingEmitter) At(i int)                  { e.cur = i }
func (e *trackingEmitter) Emit(row.Kind, row.Row)    { e.from = append(e.from, e.cur) }
func (e *trackingEmitter) reset()                    { e.cur, e.from = -1, nil }
func (p positions) Position(i int) string            { return p[i] }
func (p positions) Record(int) (string, int64, bool) { return "", 0, false }

type positions []string

func TestEachChange(t *testing.T) {
	in := &row.Batch{Origin: positions{"f:1", "f:2", "f:3"}}
	for range 3 {
		in.Append(row.Insert, row.Row{row.IntValue(1)})
	}
	out := &trackingEmitter{}
	out.reset()
	// Every change emits twice except the second, which emits nothing.
	err := EachChange("op", in, out, func(i int, c *row.Change) error {
		if c != &in.Changes[i] {
			t.Fatalf("change %d is not the batch's own", i)
		}
		if i != 1 {
			out.Emit(c.Kind, c.Row)
			out.Emit(c.Kind, c.Row)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.from; len(got) != 4 || got[0] != 0 || got[1] != 0 || got[2] != 2 || got[3] != 2 {
		t.Fatalf("emitted from %v, want [0 0 2 2]", got)
	}

	// An error stops the walk and names the operator, the record and the
	// change, wrapping the cause.
	cause := errors.New("boom")
	calls := 0
	err = EachChange("top-n", in, out, func(i int, c *row.Change) error {
		calls++
		if i == 1 {
			return cause
		}
		return nil
	})
	if !errors.Is(err, cause) || err.Error() != "top-n: f:2: change 1: boom" || calls != 2 {
		t.Fatalf("error %q after %d calls, want top-n: f:2: change 1: boom after 2", err, calls)
	}

	// Without positions the emitter is not told anything.
	plain := &row.Batch{Changes: in.Changes}
	out.reset()
	err = EachChange("op", plain, out, func(i int, c *row.Change) error { out.Emit(c.Kind, c.Row); return nil })
	if err != nil || len(out.from) != 3 || out.from[0] != -1 || out.from[2] != -1 {
		t.Fatalf("without positions: %v, from %v", err, out.from)
	}
	if err := EachChange("x", plain, out, func(int, *row.Change) error { return cause }); !strings.HasPrefix(err.Error(), "x: change 0: ") {
		t.Fatalf("without positions: %q", err)
	}
}

func TestExpiry(t *testing.T) {
	var log []string
	var e Expiry
	e.InitExpiry(
		func(c StateTTL) { log = append(log, "arm "+c.TTL.String()) },
		func() { log = append(log, "tick") },
		func(budget int) { log = append(log, "free "+itoa(budget)) },
	)
	// Off: nothing at all.
	e.SetStateTTL(StateTTL{})
	e.Begin(10)()
	e.Sweep()
	if e.Expiring() || e.SweepEvery() != 0 || len(log) != 0 {
		t.Fatalf("off: expiring %v, sweep every %v, calls %q", e.Expiring(), e.SweepEvery(), log)
	}
	e.SetStateTTL(StateTTL{TTL: 10 * time.Second})
	end := e.Begin(10)
	log = append(log, "batch")
	end()
	e.Sweep()
	want := []string{"arm 10s", "tick", "batch", "free " + itoa(SweepBudget(10)), "tick", "free " + itoa(QuietSweep)}
	if strings.Join(log, ",") != strings.Join(want, ",") {
		t.Fatalf("calls %q, want %q", log, want)
	}
	if !e.Expiring() || e.SweepEvery() != SweepEvery(10*time.Second) {
		t.Fatalf("on: expiring %v, sweep every %v", e.Expiring(), e.SweepEvery())
	}
}

func itoa(n int) string { return time.Duration(n).String() }
