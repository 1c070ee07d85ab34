package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/internal/wasmbuild"
)

// BenchmarkUDFUpper runs datagen -> SELECT upper(s) -> blackhole over
// ETLD_BENCH_ROWS rows (1M by default) of 20-character strings with the
// built-in UPPER, the same work as a WebAssembly function from the Go SDK
// (sdk/go/examples/upper) and from AssemblyScript (sdk/assemblyscript,
// when ETLD_TEST_ASC names its compiler), and as inline JavaScript, in
// one run. It reports rows/s and the CPU seconds (user + system) per
// million rows; compare each to builtin's, measured in the same run.
//
//	ETLD_BENCH_ROWS=10000000 go test -run XXX -bench UDFUpper -benchtime 1x ./pipeline/
func BenchmarkUDFUpper(b *testing.B) {
	rows := benchRows(b)
	dir := b.TempDir()
	goUpper := wasmbuild.Go(b, filepath.Join("..", "sdk", "go", "examples", "upper"))
	asUpper := ""
	if asc := os.Getenv("ETLD_TEST_ASC"); asc != "" {
		asUpper = wasmbuild.AssemblyScript(b, asc, filepath.Join("..", "sdk", "assemblyscript", "strings.ts"))
	}
	head := fmt.Sprintf(`version: 1
name: bench-udf
sources:
  - name: gen
    type: datagen
    rows: %d
    seed: 1
    schema: [s STRING]
    fields:
      s: { length: 20 }
`, rows)
	wasm := func(file string) string {
		return "functions:\n  - name: up\n    wasm: " + file + "\n    export: upper\n    params: [s STRING]\n    returns: STRING\n"
	}
	js := "functions:\n  - name: up\n    language: javascript\n    params: [s STRING]\n    returns: STRING\n    code: |\n      function up(s) { return s.toUpperCase(); }\n"
	cases := []struct{ name, functions, call string }{
		{"builtin", "", "UPPER(s)"},
		{"wasm-go", wasm(goUpper), "up(s)"},
		{"wasm-assemblyscript", wasm(asUpper), "up(s)"},
		{"javascript", js, "up(s)"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.name == "wasm-assemblyscript" && asUpper == "" {
				b.Skip("ETLD_TEST_ASC is not set (testenv/tools.sh)")
			}
			yaml := head + c.functions + "transforms:\n  - name: q\n    sql: SELECT " + c.call + " AS u FROM gen\n" +
				"sinks:\n  - name: out\n    from: q\n    type: blackhole\n"
			var cpu time.Duration
			for b.Loop() {
				before := cpuTime(b)
				runFile(b, dir, yaml)
				cpu += cpuTime(b) - before
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(cpu.Seconds()/float64(b.N)/(float64(rows)/1e6), "cpu-s/Mrows")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
