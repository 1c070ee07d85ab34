package file_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/sources/file"
)

// TestOperatorGivesBuffersBack: a window over a source with a watermark
// whose query reads numbers and times only (the decoders pick those
// columns: no value points into the text) gives each batch back, and
// the source reads into its buffers again (TextRecycle), though the
// window is no sink that copies text; what comes out is what a serial
// read gives, csv (CRLF; quoted fields with line breaks, which
// reuse no buffer) and json. A query that also
// reads a STRING column (its key) keeps the buffers as they are: its
// values point into them.
func TestOperatorGivesBuffersBack(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var csvIn, quotedIn, jsonIn strings.Builder
	for i := range 20000 {
		amount, name := fmt.Sprint(r.IntN(10000)), fmt.Sprintf("n%d", r.IntN(7))
		ts := fmt.Sprintf("2026-01-01 10:%02d:%02d.%03d", i/1000, i%60, i%1000)
		eol := "\n"
		if i%3 == 0 {
			eol = "\r\n"
		}
		fmt.Fprintf(&csvIn, "%d,%s,%s,%s%s", i, name, amount, ts, eol)
		if i%5 == 0 {
			name = `"a ""quoted"",\nname"`
		}
		fmt.Fprintf(&quotedIn, "%d,%s,%s,%s%s", i, name, amount, ts, eol)
		fmt.Fprintf(&jsonIn, `{"id":%d,"name":"n%d","amount":%s,"ts":"%s"}`+"\n", i, i%7, amount, ts)
	}
	// Quoted fields (a line break in one) are cut record by record,
	// across buffers: their read reuses none, what the query reads.
	for _, in := range []struct {
		name, data, format string
		lines              bool
	}{
		{"csv", csvIn.String(), "csv", true},
		{"csv quoted", quotedIn.String(), "csv", false},
		{"json", jsonIn.String(), "json", true},
	} {
		for _, q := range []struct {
			name, sql string
			reuse     bool
		}{
			{"numbers", "SELECT CAST(window_start AS STRING) AS ws, COUNT(*) AS n, SUM(amount) AS s FROM TABLE(HOP(TABLE s, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end", true},
			{"string key", "SELECT name, CAST(window_start AS STRING) AS ws, COUNT(*) AS n, MAX(name) AS m FROM TABLE(TUMBLE(TABLE s, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end", false},
		} {
			t.Run(in.name+"/"+q.name, func(t *testing.T) {
				dir := t.TempDir()
				options := "    format: " + in.format + "\n    watermark: ts - INTERVAL '1' SECOND"
				run := func() string {
					t.Helper()
					out, _, err := runFusedIn(t, dir, in.data, "execution: streaming",
						"[id BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3)]", options, q.sql, "")
					if err != "" {
						t.Fatal(err)
					}
					return out
				}
				file.SetReader(t, -1, 0, 0)
				want := run()
				if strings.Count(want, "\n") < 10 {
					t.Fatalf("the serial run wrote %d rows", strings.Count(want, "\n"))
				}
				file.SetReader(t, 2, 97, 512)
				bufs := file.ReusedBuffers()
				if got := run(); got != want {
					t.Fatalf("parallel run:\n%.1000s\nserial:\n%.1000s", got, want)
				}
				if reused := file.ReusedBuffers() != bufs; reused != (q.reuse && in.lines) {
					t.Errorf("read buffers used again: %v, want %v", reused, q.reuse)
				}
			})
		}
	}
}
