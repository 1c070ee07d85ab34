package udf

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/etld/etld/internal/wasmbuild"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// BenchmarkCall measures what one call of a scalar function costs beside
// its rows: a call of one row, and a batch of 1024 (ns/row), for upper
// from the Go SDK, from AssemblyScript (when ETLD_TEST_ASC names its
// compiler) and in JavaScript.
//
//	go test -run XXX -bench Call ./pipeline/udf/
func BenchmarkCall(b *testing.B) {
	str := []row.Type{row.Of(row.String)}
	decls := []struct {
		name string
		decl func() *spec.Function
	}{
		{"wasm-go", func() *spec.Function {
			return decl("upper", wasmbuild.Go(b, "../../sdk/go/examples/upper"), str, row.Of(row.String))
		}},
		{"wasm-assemblyscript", func() *spec.Function {
			asc := os.Getenv("ETLD_TEST_ASC")
			if asc == "" {
				return nil
			}
			return decl("upper", wasmbuild.AssemblyScript(b, asc, "../../sdk/assemblyscript/strings.ts"), str, row.Of(row.String))
		}},
		{"javascript", func() *spec.Function {
			return jsDecl("upper", "scalar", "function upper(s) { return s.toUpperCase(); }", str, row.Of(row.String))
		}},
	}
	for _, dc := range decls {
		d := dc.decl()
		if d == nil {
			continue
		}
		f := loadOne(b, d)
		for _, n := range []int{1, 1024} {
			b.Run(fmt.Sprintf("%s/rows=%d", dc.name, n), func(b *testing.B) {
				inst, err := f.NewInstance(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				defer inst.Close(context.Background())
				col := make([]row.Value, n)
				for i := range col {
					col[i] = row.StringValue("abcdefghijklmnopqrst")
				}
				out, errs := make([]row.Value, n), make([]error, n)
				for b.Loop() {
					if err := inst.Scalar([][]row.Value{col}, n, out, errs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			})
		}
	}
}

// BenchmarkCountChar measures a function of two arguments, one of them a
// constant, over strings of about a hundred bytes: Nexmark's count_char
// (query 14) from the Go SDK, a batch of 1024 rows a call.
//
//	go test -run XXX -bench CountChar ./pipeline/udf/
func BenchmarkCountChar(b *testing.B) {
	str := row.Of(row.String)
	f := loadOne(b, decl("count_char", wasmbuild.Go(b, "../../sdk/go/examples/count_char"), []row.Type{str, str}, row.Of(row.BigInt)))
	inst, err := f.NewInstance(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Close(context.Background())
	const n = 1024
	s, c := make([]row.Value, n), make([]row.Value, n)
	for i := range s {
		s[i] = row.StringValue(fmt.Sprintf("%0*d", 60+i%80, i) + "abcdefghijklmnopqrstuvwxyz")
		c[i] = row.StringValue("c")
	}
	out, errs := make([]row.Value, n), make([]error, n)
	cpu0 := cpuTime()
	for b.Loop() {
		if err := inst.Scalar([][]row.Value{s, c}, n, out, errs); err != nil {
			b.Fatal(err)
		}
	}
	// The machine's load makes the wall clock say little: CPU time too.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*n), "cpu-ns/row")
	if got := out[0].Int64(); got != 1 {
		b.Fatalf("count_char = %d, want 1", got)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkCountCharTimeLimit measures count_char (as BenchmarkCountChar)
// under each way of keeping a time limit, interleaved in rounds so that
// the machine's load falls on each alike: the module metered (meter.go,
// what loadWasm does), wazero's close on the context's end (its loops
// exit to Go at each turn), and none at all (no time limit: the floor).
//
//	go test -run XXX -bench CountCharTimeLimit ./pipeline/udf/
func BenchmarkCountCharTimeLimit(b *testing.B) {
	str := row.Of(row.String)
	path := wasmbuild.Go(b, "../../sdk/go/examples/count_char")
	f := loadOne(b, decl("count_char", path, []row.Type{str, str}, row.Of(row.BigInt)))
	code, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	metered, err := meterModule(code)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cfg := f.impl.(*wasmImpl).cfg
	impl := func(code []byte, metered bool) *wasmImpl {
		w, err := newWasmImpl(ctx, f, DefaultMemoryLimit, code, metered)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { w.close(ctx) })
		w.cfg = cfg
		return w
	}
	// "none" is the module unmetered in a runtime without the close: no
	// check at all.
	modes := []struct {
		name string
		w    *wasmImpl
	}{{"metered", impl(metered, true)}, {"close", impl(code, false)}, {"none", impl(code, true)}}
	const n = 1024
	s, c := make([]row.Value, n), make([]row.Value, n)
	for i := range s {
		s[i] = row.StringValue(fmt.Sprintf("%0*d", 60+i%80, i) + "abcdefghijklmnopqrstuvwxyz")
		c[i] = row.StringValue("c")
	}
	out, errs := make([]row.Value, n), make([]error, n)
	for range 3 {
		for _, m := range modes {
			f.impl = m.w
			inst, err := f.NewInstance(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(m.name, func(b *testing.B) {
				cpu0 := cpuTime()
				for b.Loop() {
					if err := inst.Scalar([][]row.Value{s, c}, n, out, errs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*n), "cpu-ns/row")
			})
			inst.Close(ctx)
		}
	}
}
