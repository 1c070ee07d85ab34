package conformance

import (
	"context"
	"strings"
	"testing"
	"time"
)

// perRowCases are the cases of other prefixes that
// TestLateRowsDoNotDependOnBatchSize runs.
var perRowCases = map[string]bool{
	"fn29-current-watermark": true, "fn29-current-watermark-late": true, "fn29-current-watermark-subquery": true,
	"fn29-current-watermark-count": true, "fn29-rand-seeded": true,
}

// The wm-late cases (gen_wm_test.go) give byte-identical output with
// every batch size from 1 to the number of input rows: a row is late or
// not by the rows read before it, never by the batch it was read in.
// Batch size 1 is Flink's per-record watermark; the larger sizes read a
// late row in one batch with the rows that made it late.
//
// So do the cases whose values depend on the rows read before: each row
// sees the watermark of those rows in CURRENT_WATERMARK, and a seeded
// RAND draws the next value of its sequence.
func TestLateRowsDoNotDependOnBatchSize(t *testing.T) {
	var cases []*Case
	all, err := LoadDir(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all {
		if strings.HasPrefix(c.Name, "wm-late-") || perRowCases[c.Name] {
			cases = append(cases, c)
		}
	}
	if len(cases) < 8 {
		t.Fatalf("%d wm-late cases, want the generated ones (go test ./conformance -run TestGenerate -args -generate)", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			rows := 0
			for _, tb := range c.Tables {
				rows = max(rows, strings.Count(c.Data(tb.Name), "\n"))
			}
			var want string
			for size := 1; size <= rows; size++ {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				out := c.RunEtldBatch(ctx, t.TempDir(), size)
				cancel()
				if err := out.Err(); err != nil {
					t.Fatalf("batch size %d: %v", size, err)
				}
				got := strings.Join(out.Lines, "\n")
				if size == 1 {
					want = got
					if got == "" {
						t.Fatal("no output")
					}
					continue
				}
				if got != want {
					t.Errorf("batch size %d gives\n%s\nbatch size 1 gives\n%s", size, got, want)
				}
			}
		})
	}
}
