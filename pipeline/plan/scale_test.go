//go:build unix

package plan_test

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/spec"
)

// longExpression is a pipeline whose one transform selects a + a + ...
// with n terms.
func longExpression(n int) string {
	return "version: 1\nname: t\nsources: [{name: s, type: datagen, rows: 1, schema: [a BIGINT]}]\n" +
		"transforms:\n  - name: x\n    sql: SELECT " + strings.Repeat("a + ", n-1) + "a AS total FROM s\n" +
		"sinks: [{name: o, from: x, type: print}]\n"
}

// manySources is a pipeline of n sources, each read by a transform and
// a sink.
func manySources(n int) string {
	var b strings.Builder
	b.WriteString("version: 1\nname: t\nsources:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: s%d, type: datagen, rows: 1, schema: [a BIGINT]}\n", i)
	}
	b.WriteString("transforms:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: t%d, sql: SELECT a FROM s%d}\n", i, i)
	}
	b.WriteString("sinks:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: o%d, from: t%d, type: print}\n", i, i)
	}
	return b.String()
}

func validate(tb testing.TB, src string) {
	tb.Helper()
	sp, err := spec.Parse("p.yaml", []byte(src), func(string) (string, bool) { return "", false })
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := plan.Build(sp, plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)}); err != nil {
		tb.Fatal(err)
	}
}

func BenchmarkValidateLongExpression(b *testing.B) {
	src := longExpression(10_000)
	for b.Loop() {
		validate(b, src)
	}
}

func BenchmarkValidateManySources(b *testing.B) {
	src := manySources(2_000)
	for b.Loop() {
		validate(b, src)
	}
}

// cpuTime is the CPU time the process has used: unlike the wall clock, it
// does not count the time other processes on a busy machine take.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Validating stays linear in the size of the file: four times the input
// takes well under the sixteen times a quadratic step would. The best of
// a few runs is compared, in CPU time, each after a collection and long
// enough (tens of milliseconds) that whether the collector runs during
// it does not decide the ratio, so that a busy machine does not fail it;
// the limit, 8, leaves room on both sides (linear is 4; the deep
// expression's recursion grows its stack, about 5).
func TestValidateScalesLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("times validation of large files")
	}
	for name, gen := range map[string]struct {
		file func(int) string
		n    int
	}{
		"long expression": {longExpression, 8_000},
		"many sources":    {manySources, 1_000},
	} {
		t.Run(name, func(t *testing.T) {
			small, large := gen.file(gen.n), gen.file(4*gen.n)
			best := func(src string) time.Duration {
				var min time.Duration
				for i := range 5 {
					runtime.GC()
					start := cpuTime(t)
					validate(t, src)
					if d := cpuTime(t) - start; i == 0 || d < min {
						min = d
					}
				}
				return min
			}
			ts, tl := best(small), best(large)
			ratio := float64(tl) / float64(ts)
			t.Logf("n=%d: %v, 4n: %v, %.1fx", gen.n, ts, tl, ratio)
			if ratio > 8 {
				t.Errorf("n=%d took %v, 4n took %v: %.1fx, want < 8x (linear is 4x)", gen.n, ts, tl, ratio)
			}
		})
	}
}
