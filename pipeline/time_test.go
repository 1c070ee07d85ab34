package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// timedRows are events at 00:00:01, 03, 09 and 05 of 2024-01-01 (UTC, as
// epoch milliseconds); with a 2 s delay the largest watermark they give
// is 00:00:07.
const timedRows = "a,1704067201000\nb,1704067203000\na,1704067209000\nb,1704067205000\n"

var timedWatermark = time.Date(2024, 1, 1, 0, 0, 7, 0, time.UTC)

// The watermark of the source and of every operator after it is the
// data's: the largest event time less the delay, and it stays there
// when the bounded input's end closes every window, marked as ended.
func TestSummaryWatermarksAreTheData(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(timedRows), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := runFile(t, dir, fmt.Sprintf(`version: 1
name: timed
sources:
  - name: ev
    type: file
    path: %s
    schema: [k STRING, ms BIGINT, "ts AS TO_TIMESTAMP_LTZ(ms, 3)"]
    watermark: ts - INTERVAL '2' SECOND
transforms:
  - name: w
    sql: SELECT k, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND)) WHERE k <> 'x' GROUP BY k, window_start, window_end
sinks:
  - name: out
    from: w
    type: blackhole
`, in))
	src := sum.Sources[0]
	if !src.Watermark.Equal(timedWatermark) || !src.WatermarkEnded {
		t.Errorf("source watermark %v (ended %v), want %v, ended", src.Watermark, src.WatermarkEnded, timedWatermark)
	}
	if _, ok := src.Lag(time.Now()); ok {
		t.Error("a lag after the input ended")
	}
	if len(sum.Operators) == 0 {
		t.Fatal("no operators")
	}
	for _, o := range sum.Operators {
		if !o.Watermark.Equal(timedWatermark) || !o.WatermarkEnded {
			t.Errorf("%s: watermark %v (ended %v), want %v", o.ID, o.Watermark, o.WatermarkEnded, timedWatermark)
		}
	}
	text := sum.String()
	if !regexp.MustCompile(`\n  source ev +2024-01-01 00:00:07\.000 \(input ended\) +\d`).MatchString(text) {
		t.Errorf("the summary does not show the source's watermark:\n%s", text)
	}
}
