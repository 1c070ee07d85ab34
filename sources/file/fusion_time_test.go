package file_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/etld/etld/sources/file"
)

// TestPickedColumnsWithWatermark: a source with a watermark decodes the
// columns its fused Calc reads and those the watermark reads only
// (SelectColumns), serial or in the parallel decoders, and the run is
// that of a read of whole rows: the output, the dead letters (bad
// records, rows whose event time is NULL, named as whole rows, at their
// positions), the late rows and the errors, for a HOP window as the
// matrix's M-hop, a projection that keeps other columns, a filter, json
// input; a watermark on a computed column, and two Calcs reading the
// source, pick nothing and read as before.
func TestPickedColumnsWithWatermark(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	names := []string{"a", "b", `"c,d"`, "", "e"}
	var csv, json strings.Builder
	for i := range 4000 {
		name, amount, k := names[r.IntN(len(names))], r.IntN(1000), r.IntN(50)
		sec := i / 40
		if i%53 == 52 {
			sec -= 5 + r.IntN(10) // late: behind the watermark by more than 1 s
		}
		ts := fmt.Sprintf("2024-01-01 %02d:%02d:%02d.%03d", sec/3600, sec/60%60, sec%60, r.IntN(1000))
		switch {
		case i%397 == 396:
			fmt.Fprintf(&csv, "%d,%d,bad\n", i, k) // a bad record: 3 fields
			fmt.Fprintf(&json, `{"id":%d,"k":"open,"amount":%d}`+"\n", i, amount)
			continue
		case i%311 == 310:
			ts = "" // a NULL event time: the source's bad record
		}
		fmt.Fprintf(&csv, "%d,%d,%s,%d,%s\n", i, k, name, amount, ts)
		jts := `"` + ts + `"`
		if ts == "" {
			jts = "null"
		}
		fmt.Fprintf(&json, `{"amount":%d,"id":%d,"k":%d,"name":%q,"ts":%s}`+"\n", amount, i, k, strings.Trim(name, `"`), jts)
	}
	schema := "[id BIGINT, k BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3)]"
	computed := "[id BIGINT, k BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3), t2 AS ts + INTERVAL '1' SECOND]"
	wm := "\n    watermark: ts - INTERVAL '1' SECOND"
	dead := "    on_error: dead-letter\n    dead_letter: $DEAD"
	top := "execution: streaming\nlate_rows: {policy: dead-letter, file: $LATE}"
	hop := "SELECT CAST(window_start AS STRING) AS ws, COUNT(*) AS n, SUM(amount) AS s FROM TABLE(HOP(TABLE s, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end"
	cases := []struct {
		name, format, schema, sql string
		picks                     bool
	}{
		{"hop", "csv", schema + wm, hop, true},
		{"hop json", "json", schema + wm, hop, true},
		{"projection", "csv", schema + wm, "SELECT name, id, ts FROM s", true},
		{"filter", "csv", schema + wm, "SELECT name, amount FROM s WHERE amount < 400 AND k <> 3", true},
		{"filter json", "json", schema + wm, "SELECT id FROM s WHERE amount > 700", true},
		{"watermark the column", "csv", schema + "\n    watermark: ts", "SELECT id, amount FROM s WHERE amount < 500", true},
		{"computed watermark", "csv", computed + "\n    watermark: t2 - INTERVAL '1' SECOND", "SELECT id, t2 FROM s", false},
		{"two readers", "csv", schema + wm, "SELECT id FROM s WHERE amount < 100 UNION ALL SELECT id FROM s WHERE amount > 900", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, options := csv.String(), dead
			if tc.format == "json" {
				in, options = json.String(), "    format: json\n"+dead
			}
			dir := t.TempDir()
			late := dir + "/late.jsonl"
			top := strings.ReplaceAll(top, "$LATE", late)
			run := func() [4]string {
				out, dl, err := runFusedIn(t, dir, in, top, tc.schema, options, tc.sql, "mode: retract")
				return [4]string{folded(t, out, true), byWriter(dl), err, readLate(t, late)}
			}
			for _, workers := range []int{-1, 2} {
				file.SetReader(t, workers, 97, 512)
				file.SetSelect(t, false)
				whole := run()
				if whole[0] == "" || whole[1] == "" || whole[2] != "" || strings.Contains(tc.sql, "HOP") && whole[3] == "" {
					t.Fatalf("whole rows: error %q, %d bytes out, %d of dead letters, %d of late rows", whole[2], len(whole[0]), len(whole[1]), len(whole[3]))
				}
				file.SetSelect(t, true)
				before := file.Selected()
				got := run()
				if picked := file.Selected() > before; picked != tc.picks {
					t.Errorf("%d workers: columns picked %v, want %v", workers, picked, tc.picks)
				}
				for j, what := range []string{"output", "dead letters", "error", "late rows"} {
					if got[j] != whole[j] {
						t.Fatalf("%d workers: %s\n%.2000s\nwhole rows:\n%.2000s", workers, what, got[j], whole[j])
					}
				}
			}
		})
	}
}

// readLate returns the late rows' file, removed for the next run.
func readLate(t *testing.T, path string) string {
	t.Helper()
	data, _ := os.ReadFile(path)
	os.Remove(path)
	return string(data)
}
