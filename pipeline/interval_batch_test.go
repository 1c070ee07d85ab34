package pipeline_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// intervalCases are interval joins a batch run plans as a hash join
// (INNER, LEFT) and as the sorted join (RIGHT, FULL): integer, string
// and two-column keys with NULLs, bounds of both signs, a residual,
// and self-joins (one source on both sides).
var intervalCases = []struct{ name, sql string }{
	{"inner_int", "SELECT a.id, b.id AS bid FROM l a JOIN r b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '3' SECOND AND b.ts + INTERVAL '1' SECOND"},
	{"left_str", "SELECT a.id, b.id AS bid FROM l a LEFT JOIN r b ON a.s = b.s AND a.ts BETWEEN b.ts + INTERVAL '1' SECOND AND b.ts + INTERVAL '4' SECOND"},
	{"inner_two", "SELECT a.id, b.id AS bid, b.v FROM l a JOIN r b ON a.k = b.k AND a.s = b.s AND a.ts >= b.ts - INTERVAL '5' SECOND AND a.ts < b.ts AND a.v <> b.v"},
	{"self", "SELECT a.id, b.id AS bid FROM l a JOIN l b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '2' SECOND AND b.ts"},
	{"self_left_str", "SELECT a.id, b.s, b.v FROM l a LEFT JOIN l b ON a.s = b.s AND a.ts BETWEEN b.ts + INTERVAL '1' SECOND AND b.ts + INTERVAL '2' SECOND"},
	{"self_two", "SELECT b.v, a.s, a.id FROM r a JOIN r b ON a.k = b.k AND a.s = b.s AND a.ts BETWEEN b.ts - INTERVAL '5' SECOND AND b.ts - INTERVAL '1' SECOND"},
	{"right", "SELECT a.id, b.id AS bid FROM l a RIGHT JOIN r b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '2' SECOND AND b.ts"},
}

// TestBatchIntervalJoinsMatchStreaming runs each interval join over the
// same files in streaming execution (input in time order, so no row is
// late) and in batch execution, and wants the same rows.
func TestBatchIntervalJoinsMatchStreaming(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 35))
	val := func(n int) string {
		if rng.IntN(9) == 0 {
			return ""
		}
		return fmt.Sprint(rng.IntN(n))
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, rows := range map[string]int{"l.csv": 2000, "r.csv": 700} {
		var b strings.Builder
		at := base
		for i := range rows {
			at = at.Add(time.Duration(rng.IntN(700)) * time.Millisecond)
			s := val(4)
			if s != "" {
				s = "s" + s
			}
			fmt.Fprintf(&b, "%d,%s,%s,%d,%s\n", i, val(20), s, rng.IntN(5), at.Format("2006-01-02 15:04:05.000"))
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(mode string) map[string][]string {
		var transforms, sinks strings.Builder
		for _, c := range intervalCases {
			fmt.Fprintf(&transforms, "  - name: %s\n    sql: %q\n", c.name, c.sql)
			fmt.Fprintf(&sinks, "  - {name: %s_out, from: %s, type: file, path: %s}\n", c.name, c.name, filepath.Join(dir, mode+"-"+c.name+".csv"))
		}
		src := func(name string) string {
			return fmt.Sprintf("  - {name: %s, type: file, path: %s, format: {type: csv, null_literal: \"\"}, schema: [id INT, k INT, s STRING, v INT, ts TIMESTAMP(3)], watermark: \"ts - INTERVAL '1' SECOND\"}\n",
				name, filepath.Join(dir, name+".csv"))
		}
		runFile(t, dir, fmt.Sprintf("version: 1\nname: ij-%s\nexecution: %s\nsources:\n%s%stransforms:\n%ssinks:\n%s",
			mode, mode, src("l"), src("r"), transforms.String(), sinks.String()))
		out := map[string][]string{}
		for _, c := range intervalCases {
			out[c.name] = readLines(t, filepath.Join(dir, mode+"-"+c.name+".csv"))
		}
		return out
	}
	streaming, batch := run("streaming"), run("batch")
	for _, c := range intervalCases {
		s, b := streaming[c.name], batch[c.name]
		if !slices.Equal(s, b) {
			t.Errorf("%s: batch gives %d rows, streaming %d; first batch %q, streaming %q", c.name, len(b), len(s), first(b), first(s))
		}
		if len(b) < 10 {
			t.Errorf("%s: %d rows: the case checks little", c.name, len(b))
		}
	}
}
