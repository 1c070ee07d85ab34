package pipeline_test

import (
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline"
)

// The summary is a table: a header, a row per source and sink, names
// and modes aligned left, counts right, whatever the names' lengths.
func TestSummaryTable(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    pipeline.Summary
		want string
	}{{
		name: "with a sized source",
		s: pipeline.Summary{
			Pipeline: "p", Elapsed: 2 * time.Second,
			Sources: []pipeline.Count{{Name: "a", In: 5, Out: 5, Skipped: 1, Read: 3 << 20, Size: 3 << 20, Time: pipeline.Time{Busy: time.Second, Backpressure: 500 * time.Millisecond}},
				{Name: "a_source_with_a_long_name", In: 1234567, Out: 1234567, Skipped: 12, Time: pipeline.Time{Watermark: time.Date(2024, 1, 1, 0, 0, 7, 0, time.UTC)}}},
			Sinks:       []pipeline.Count{{Name: "out", Mode: "append", In: 5, Out: 5, Time: pipeline.Time{Busy: 20 * time.Millisecond}}, {Name: "s", Mode: "upsert", In: 1234567, Out: 1000, Skipped: 123}},
			Operators:   []pipeline.Operator{{ID: "win/window_aggregate#1", Time: pipeline.Time{Watermark: time.Date(2024, 1, 1, 0, 0, 5, 0, time.UTC), WatermarkEnded: true, Busy: 1500 * time.Millisecond}}},
			Dropped:     []pipeline.Count{{Name: "win/window_aggregate#1", Skipped: 7}},
			Checkpoints: pipeline.Checkpoints{Count: 2, LastSize: 3 << 20, LastDuration: 178400 * time.Microsecond},
			State: []pipeline.StateSize{
				{Operator: "per_key/group_aggregate#1", Plan: "GroupAggregate(groupBy=[k], select=[COUNT(*)])", Transform: "per_key", Entries: 1000, Bytes: 20 << 10},
				{Operator: "win/window_aggregate#1", Plan: "WindowAggregate(window=[TUMBLE(ts, INTERVAL '1' MINUTE)])", Transform: "win", Entries: 3},
			},
		},
		want: `pipeline p: 2s, 617286 rows/s, 2 checkpoints (the last 3.0 MiB, in 178ms)
  KIND    NAME                       MODE         IN      OUT  SKIPPED     READ
  source  a                          -             5        5        1  3.0 MiB
  source  a_source_with_a_long_name  -       1234567  1234567       12
  sink    out                        append        5        5        0
  sink    s                          upsert  1234567     1000      123
  NODE                              WATERMARK                                    BUSY  BACKPRESSURE
  source a                                                                   1s (50%)   500ms (25%)
  source a_source_with_a_long_name  2024-01-01 00:00:07.000                   0s (0%)       0s (0%)
  win/window_aggregate#1            2024-01-01 00:00:05.000 (input ended)  1.5s (75%)       0s (0%)
  sink out                                                                  20ms (1%)
  sink s                                                                      0s (0%)
  dropped 7 rows in win/window_aggregate#1
  state of per_key/group_aggregate#1: 1000 entries, 20.0 KiB checkpointed
  state of win/window_aggregate#1: 3 entries
`,
	}, {
		name: "stopped before the end, one checkpoint",
		s: pipeline.Summary{
			Pipeline: "q", Elapsed: time.Second,
			Sources:     []pipeline.Count{{Name: "f", In: 10, Out: 10, Read: 1 << 30, Size: 3 << 30}},
			Sinks:       []pipeline.Count{{Name: "console", Mode: "retract", In: 10, Out: 10}},
			Checkpoints: pipeline.Checkpoints{Count: 1},
		},
		want: `pipeline q: 1s, 10 rows/s, 1 checkpoint
  KIND    NAME     MODE     IN  OUT  SKIPPED             READ
  source  f        -        10   10        0  1.0 GiB/3.0 GiB
  sink    console  retract  10   10        0
`,
	}, {
		name: "no source knows its size",
		s: pipeline.Summary{
			Pipeline: "gen", Elapsed: time.Second,
			Sources: []pipeline.Count{{Name: "d", In: 3, Out: 3}},
			Sinks:   []pipeline.Count{{Name: "p", Mode: "append", In: 3, Out: 3}},
		},
		want: `pipeline gen: 1s, 3 rows/s
  KIND    NAME  MODE    IN  OUT  SKIPPED
  source  d     -        3    3        0
  sink    p     append   3    3        0
`,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.String(); got != tt.want {
				t.Errorf("summary:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// Every line of the table ends where its longest cell ends: no trailing
// spaces, and the counts' last digits in one column.
func TestSummaryColumnsAlign(t *testing.T) {
	s := pipeline.Summary{
		Pipeline: "p", Elapsed: time.Second,
		Sources: []pipeline.Count{{Name: "x", In: 1}, {Name: "yyyyyyyyyyyyyyyyyyyyyyy", In: 123456789012}},
		Sinks:   []pipeline.Count{{Name: "z", Mode: "append", Out: 42}},
	}
	lines := strings.Split(strings.TrimSuffix(s.String(), "\n"), "\n")[1:]
	end := len(lines[0])
	for _, l := range lines {
		if len(l) != end || strings.HasSuffix(l, " ") {
			t.Errorf("line %q does not end at column %d:\n%s", l, end, s)
		}
	}
}
