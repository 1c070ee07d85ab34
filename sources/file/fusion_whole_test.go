package file_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/sources/file"
)

// TestFusedFilterWholeRows: a Calc that only filters (SELECT * ...
// WHERE) runs in the parallel decoders over the decoded rows in place,
// and the sink gives the batches back to the source: the output, dead
// letters and errors are a serial read's, for csv and json, in batch and
// streaming, with bad records, a filter that fails on some rows, and one
// whose subexpressions are shared (Calc.Memo).
func TestFusedFilterWholeRows(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	names := []string{"a", "b", "c", `"d,e"`, "", "f"}
	var csv, json strings.Builder
	for i := range 4000 {
		name, amount := names[r.IntN(len(names))], r.IntN(1000)
		if i%397 == 396 {
			fmt.Fprintf(&csv, "%d,bad,%d\n", i, amount) // a bad record: 3 fields
			fmt.Fprintf(&json, `{"id":%d,"name":"open,"amount":%d}`+"\n", i, amount)
			continue
		}
		fmt.Fprintf(&csv, "%d,%s,%d,2024-01-01 00:00:%02d\n", i, name, amount, i%60)
		fmt.Fprintf(&json, `{"amount":%d,"id":%d,"name":%q,"ts":"2024-01-01 00:00:%02d"}`+"\n", amount, i, strings.Trim(name, `"`), i%60)
	}
	schema := "[id BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3)]"
	dead := "    on_error: dead-letter\n    dead_letter: $DEAD"
	batch, stream := "execution: batch", "execution: streaming"
	cases := []struct{ name, format, top, sql, sink string }{
		{"csv batch", "csv", batch, "SELECT * FROM s WHERE amount < 400", ""},
		{"csv stream", "csv", stream, "SELECT * FROM s WHERE amount < 400 AND name <> 'b'", "mode: retract"},
		{"json batch", "json", batch, "SELECT * FROM s WHERE amount < 400", ""},
		{"json stream", "json", stream, "SELECT * FROM s WHERE id % 3 = 1", "mode: retract"},
		{"shared subexpressions", "csv", batch, "SELECT * FROM s WHERE amount * 3 > 300 AND amount * 3 < 2400", ""},
		// 100 / (amount - 500) fails where amount is 500: those
		// batches take the serial way, the rows go to on_error.
		{"failing filter", "csv", batch, "SELECT * FROM s WHERE 100 / (amount - 500) > 0", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, options := csv.String(), dead
			if tc.format == "json" {
				in, options = json.String(), "    format: json\n"+dead
			}
			dir := t.TempDir()
			file.SetReader(t, -1, 0, 0)
			out, dl, err := runFusedIn(t, dir, in, tc.top, schema, options, tc.sql, tc.sink)
			if out == "" || err != "" || dl == "" {
				t.Fatalf("serial run: error %q, %d bytes out, %d bytes of dead letters", err, len(out), len(dl))
			}
			file.SetReader(t, 2, 97, 512)
			recycled := file.Recycled()
			fOut, fDead, fErr := runFusedIn(t, dir, in, tc.top, schema, options, tc.sql, tc.sink)
			if file.Recycled() == recycled {
				t.Error("no batch given back: the filter did not run in the decoders")
			}
			if fErr != err || byWriter(fDead) != byWriter(dl) {
				t.Fatalf("fused run: error %q, dead letters:\n%.2000s\nserial: %q\n%.2000s", fErr, fDead, err, dl)
			}
			if got, want := folded(t, fOut, tc.sink != ""), folded(t, out, tc.sink != ""); got != want {
				t.Fatalf("fused result:\n%.2000s\nserial:\n%.2000s", got, want)
			}
		})
	}
}

// TestFusedEmptyBatchesGivenBack: a batch whose rows all fail the fused
// filter goes to no node, and goes back to the source at once; before,
// each such batch was lost to the source, which made a new one for the
// next block (every block, under a filter that keeps nothing).
func TestFusedEmptyBatchesGivenBack(t *testing.T) {
	var in strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&in, "%d,n%d,%d\n", i, i%7, i%1000)
	}
	schema := "[id BIGINT, name STRING, amount BIGINT]"
	for name, sql := range map[string]string{
		"whole rows": "SELECT * FROM s WHERE amount < 0",
		"picked":     "SELECT name, id FROM s WHERE amount < 0",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			file.SetReader(t, 2, 97, 512)
			recycled := file.Recycled()
			out, _, err := runFusedIn(t, dir, in.String(), "execution: streaming", schema, "", sql, "")
			if out != "" || err != "" {
				t.Fatalf("error %q, output %.200q", err, out)
			}
			if file.Recycled() == recycled {
				t.Error("no empty batch given back")
			}
		})
	}
}
