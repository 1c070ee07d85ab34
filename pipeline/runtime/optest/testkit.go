package optest

import (
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// Out records emitted changes in Flink's print form.
type Out struct {
	Lines []string
	Rows  []row.Change
}

func (o *Out) Emit(k row.Kind, r row.Row) {
	o.Lines = append(o.Lines, row.Change{Kind: k, Row: r}.String())
	o.Rows = append(o.Rows, row.Change{Kind: k, Row: r})
}

func (o *Out) Take() []string { l := o.Lines; o.Lines, o.Rows = nil, nil; return l }

// Change builds a change from Go values: int → BIGINT, int32 → INT,
// float64 → DOUBLE, string → STRING, nil → NULL, row.Value as is.
func Change(k row.Kind, vals ...any) row.Change {
	r := make(row.Row, len(vals))
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
			r[i] = row.NullValue
		case int:
			r[i] = row.BigIntValue(int64(v))
		case int32:
			r[i] = row.IntValue(v)
		case float64:
			r[i] = row.DoubleValue(v)
		case float32:
			r[i] = row.FloatValue(v)
		case string:
			r[i] = row.StringValue(v)
		case row.Value:
			r[i] = v
		default:
			panic("aggChange: unsupported value")
		}
	}
	return row.Change{Kind: k, Row: r}
}

func Batch(changes ...row.Change) *row.Batch { return &row.Batch{Changes: changes} }

func Dec(unscaled int64, scale int) row.Value { return row.DecimalValue(unscaled, scale) }

var (
	TInt    = row.Type{ID: row.Int}
	TBigInt = row.Type{ID: row.BigInt}
	TFloat  = row.Type{ID: row.Float}
	TDouble = row.Type{ID: row.Double}
	TString = row.Type{ID: row.String}
)

func TDec(p, s int) row.Type { return row.Type{ID: row.Decimal, Precision: p, Scale: s} }

func Ins(vals ...any) row.Change { return Change(row.Insert, vals...) }

func UB(vals ...any) row.Change { return Change(row.UpdateBefore, vals...) }

func UA(vals ...any) row.Change { return Change(row.UpdateAfter, vals...) }

func Del(vals ...any) row.Change { return Change(row.Delete, vals...) }

// Changes returns and clears the recorded changes as row changes.
func (o *Out) Changes() []row.Change {
	cs := o.Rows
	o.Rows, o.Lines = nil, nil
	return cs
}

// fakeClock is an injected processing-time clock: tests move it instead
// of sleeping.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

func NewFakeClock() *fakeClock { return &fakeClock{t: time.UnixMilli(1_700_000_000_000)} }

// Set moves the clock to sec seconds after its start.
func (c *fakeClock) Set(sec int64) { c.t = time.UnixMilli(1_700_000_000_000 + sec*1000) }

// TTLStep is one change at a clock time (seconds) on an input (0 or 1,
// for a join) and the changes it must emit.
type TTLStep struct {
	At   int64
	Side int
	In   row.Change
	Want []string
}

const TTL10s = 10 * time.Second

func TS(s string) int64 {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

const Minute = int64(60_000_000)

func LTZSec(sec int64) row.Value { return row.TimestampLTZValue(sec * 1_000_000) }

// Must returns the operator a constructor built, and panics with its
// error: for a test's spec that is valid by construction, where the
// test cannot go on without the operator.
func Must[T any](op T, err error) T {
	if err != nil {
		panic(err)
	}
	return op
}

// Discard counts what an operator emits.
type Discard struct{ N int64 }

func (d *Discard) Emit(row.Kind, row.Row) { d.N++ }

// BenchPool builds batches of [key, ts, value] rows: keys spread over
// nkeys (every key within the first nkeys rows), ts rising by step µs.
func BenchPool(batches, size, nkeys int, step int64) []*row.Batch {
	pool := make([]*row.Batch, batches)
	j := 0
	for i := range pool {
		b := row.NewBatch(size, 3)
		for range size {
			r := b.NewRow()
			r[0] = row.BigIntValue(int64(j * 7919 % nkeys))
			r[1] = row.TimestampValue(int64(j) * step)
			r[2] = row.BigIntValue(int64(j % 1000))
			b.Append(row.Insert, r)
			j++
		}
		pool[i] = b
	}
	return pool
}

// CPUNow is the process's user+system CPU time: on a shared machine rows
// per CPU second say more than rows per wall second.
func CPUNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// MemNow returns live bytes, the Go heap's and those mapped off it
// (offheap.go), and the count of allocations so far.
func MemNow() (live, mallocs uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + uint64(state.OffHeapLive.Load()), m.Mallocs
}

func ReportRun(b *testing.B, rows int64, cpu0 time.Duration, heap0, mallocs0 uint64, groups int, keep any) {
	cpu := CPUNow() - cpu0
	heap1, mallocs1 := MemNow()
	runtime.KeepAlive(keep)
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	if cpu > 0 {
		b.ReportMetric(float64(rows)/cpu.Seconds(), "rows/cpu-s")
	}
	b.ReportMetric(float64(mallocs1-mallocs0)/float64(rows), "allocs/row")
	if groups > 0 {
		b.ReportMetric(float64(int64(heap1)-int64(heap0))/float64(groups), "state-B/key")
	}
}

// ReadBlock stands for a source's read buffer: the strings of thousands
// of decoded rows point into it, and what an operator keeps past a batch
// must be its own copy, or it pins the whole block.
type ReadBlock struct{ s string }

func NewReadBlock() ReadBlock {
	return ReadBlock{strings.Repeat("abcdefghijklmnopqrstuvwxyz", 64)}
}

// Str returns the n-byte value at offset i, pointing into the block.
func (b ReadBlock) Str(i, n int) row.Value { return row.StringValue(b.s[i : i+n]) }

// Pins reports whether v's text lies inside the block.
func (b ReadBlock) Pins(v row.Value) bool {
	if v.IsNull() || v.Type() != row.String || v.Str() == "" {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(b.s)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(v.Str())))
	return p >= start && p < start+uintptr(len(b.s))
}

// CheckRows fails t for each value of rows that pins the block.
func (b ReadBlock) CheckRows(t *testing.T, what string, rows ...row.Row) {
	t.Helper()
	for _, r := range rows {
		for i, v := range r {
			if b.Pins(v) {
				t.Errorf("%s: column %d (%s) points into the input's read block", what, i, v)
			}
		}
	}
}

// FoldChanges applies a changelog to a multiset of rows.
func FoldChanges(t *testing.T, got []string) []string {
	t.Helper()
	held := map[string]int{}
	for _, g := range got {
		kind, r := g[:2], g[2:]
		if kind == "+I" || kind == "+U" {
			held[r]++
		} else {
			if held[r] == 0 {
				t.Fatalf("%s retracts a row not held", g)
			}
			held[r]--
		}
	}
	var out []string
	for r, n := range held {
		for range n {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// Step is one call of an operator's driver: a batch or a watermark.
type Step struct {
	Batch []row.Change
	wm    int64
}

func Drive(t *testing.T, op operator.Operator, steps []Step, out *Out) {
	t.Helper()
	for i, s := range steps {
		var err error
		if s.Batch != nil {
			err = op.Process(Batch(s.Batch...), out)
		} else {
			err = op.Watermark(s.wm, out)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
}

func Restored(t *testing.T, fresh func() operator.Operator, from operator.Operator) operator.Operator {
	t.Helper()
	state, err := from.(operator.Snapshotter).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	op := fresh()
	if err := op.(operator.Snapshotter).Restore(state); err != nil {
		t.Fatalf("restore: %v", err)
	}
	return op
}
