package windowop

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// runSessionTable feeds steps to a SESSION TVF read as a table, keyed by
// column 1, snapshotting and restoring into a fresh operator after step
// restoreAfter (-1: never), and returns its output with "-- wm" lines
// before each watermark's, and the late count.
func runSessionTable(t *testing.T, gap int64, batch bool, steps []sessionStep, restoreAfter int) ([]string, int64) {
	t.Helper()
	mk := func() *SessionTable {
		return optest.Must(NewSessionTable(WindowTable{Spec: WindowSpec{Kind: Session, TimeCol: 0, Gap: gap}, Keys: []int{1}, Batch: batch}))
	}
	g := mk()
	out := &optest.Out{}
	var log []string
	for i, s := range steps {
		if s.key == "" {
			if err := g.Watermark(hhmm(s.at), out); err != nil {
				t.Fatal(err)
			}
			if lines := out.Take(); len(lines) > 0 {
				log = append(log, "-- wm "+s.at)
				log = append(log, lines...)
			}
		} else {
			if err := g.Process(optest.Batch(optest.Change(row.Insert, row.TimestampValue(hhmm(s.at)), s.key, s.v)), out); err != nil {
				t.Fatal(err)
			}
			if len(out.Lines) > 0 {
				t.Fatalf("output on a row: %q", out.Lines)
			}
		}
		if i == restoreAfter {
			state, err := g.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			g = mk()
			if err := g.Restore(state); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	if lines := out.Take(); len(lines) > 0 {
		log = append(log, "-- end")
		log = append(log, lines...)
	}
	if g.set.live != 0 || g.set.keyCount() != 0 || g.rows != 0 || len(g.free) != len(g.Held) {
		t.Fatalf("state left at the end: %d sessions, %d keys, %d rows, %d of %d ids in use", g.set.live, g.set.keyCount(), g.rows, len(g.Held)-len(g.free), len(g.Held))
	}
	n, _ := g.Dropped()
	return log, n
}

func TestSessionTable(t *testing.T) {
	const gap = 5 * optest.Minute
	row := func(at, key string, v int, start, end string) string {
		return fmt.Sprintf("+I[2020-04-15T%s, %s, %d, 2020-04-15T%s, 2020-04-15T%s, %s]", at, key, v, start, end, endMinus1ms(end))
	}
	tests := []struct {
		name  string
		steps []sessionStep
		want  []string
		late  int64
	}{{
		name:  "a row in the gap merges two sessions: every row gets the merged bounds",
		steps: []sessionStep{{"u", "08:00", 1}, {"u", "08:08", 2}, wmStep("08:04"), {"u", "08:04", 4}, wmStep("08:12"), wmStep("08:13")},
		want:  []string{"-- wm 08:13", row("08:00", "u", 1, "08:00", "08:13"), row("08:04", "u", 4, "08:00", "08:13"), row("08:08", "u", 2, "08:00", "08:13")},
	}, {
		name:  "the watermark closes a session before the gap-closing row arrives",
		steps: []sessionStep{{"u", "08:00", 1}, {"u", "08:08", 2}, wmStep("08:05"), {"u", "08:04", 4}},
		want: []string{
			"-- wm 08:05", row("08:00", "u", 1, "08:00", "08:05"),
			"-- end", row("08:08", "u", 2, "08:04", "08:13"), row("08:04", "u", 4, "08:04", "08:13"),
		},
	}, {
		name:  "a late row alone is dropped, one reaching an open session joins it",
		steps: []sessionStep{{"u", "08:18", 1}, wmStep("08:20"), {"u", "08:10", 2}, {"u", "08:14", 4}, {"v", "08:10", 8}},
		want:  []string{"-- end", row("08:18", "u", 1, "08:14", "08:23"), row("08:14", "u", 4, "08:14", "08:23")},
		late:  2,
	}, {
		name: "keys have their own sessions; those ending together come in opening order",
		steps: []sessionStep{{"b", "08:00", 1}, {"a", "08:00", 2}, {"a", "08:03", 4}, {"b", "08:20", 8},
			wmStep("08:08"), wmStep("09:00")},
		want: []string{
			"-- wm 08:08", row("08:00", "b", 1, "08:00", "08:05"), row("08:00", "a", 2, "08:00", "08:08"), row("08:03", "a", 4, "08:00", "08:08"),
			"-- wm 09:00", row("08:20", "b", 8, "08:20", "08:25"),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, late := runSessionTable(t, gap, false, tt.steps, -1)
			sortWithinWatermarks(got)
			want := slices.Clone(tt.want)
			sortWithinWatermarks(want)
			if !slices.Equal(got, want) || late != tt.late {
				t.Fatalf("got (late %d)\n%s\nwant (late %d)\n%s", late, strings.Join(got, "\n"), tt.late, strings.Join(want, "\n"))
			}
			// A snapshot anywhere gives the same output, in the same order.
			for restore := range tt.steps {
				again, _ := runSessionTable(t, gap, false, tt.steps, restore)
				sortWithinWatermarks(again)
				if !slices.Equal(again, got) {
					t.Fatalf("restore after step %d:\n%s\nwant\n%s", restore, strings.Join(again, "\n"), strings.Join(got, "\n"))
				}
			}
		})
	}
}

// TestSessionTableBatch: in batch mode no row is late and sessions merge
// over the whole input.
func TestSessionTableBatch(t *testing.T) {
	steps := []sessionStep{{"u", "08:00", 1}, {"u", "08:08", 2}, wmStep("08:30"), {"u", "08:04", 4}}
	got, late := runSessionTable(t, 5*optest.Minute, true, steps, -1)
	if len(got) != 4 || late != 0 || !strings.Contains(got[1], "08:00, 2020-04-15T08:13") {
		t.Fatalf("got (late %d)\n%s", late, strings.Join(got, "\n"))
	}
}

func TestSessionTableErrors(t *testing.T) {
	if _, err := NewSessionTable(WindowTable{Spec: WindowSpec{Kind: Session}}); err == nil || !strings.Contains(err.Error(), "gap must be positive") {
		t.Fatalf("zero gap: %v", err)
	}
	g := optest.Must(NewSessionTable(WindowTable{Spec: WindowSpec{Kind: Session, Gap: optest.Minute}}))
	err := g.Process(optest.Batch(optest.Change(row.Delete, row.TimestampValue(hhmm("08:00")))), &optest.Out{})
	if err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Fatalf("a -D: %v", err)
	}
	if err := g.Restore([]byte{9}); err == nil {
		t.Fatal("a bad state version restored")
	}
}

func endMinus1ms(hm string) string {
	return row.TimestampValue(hhmm(hm) - 1000).String()
}

// sortWithinWatermarks sorts the lines between two "--" markers: rows of
// one session come in the order of their sessions' merging.
func sortWithinWatermarks(lines []string) {
	start := 0
	for i := 0; i <= len(lines); i++ {
		if i == len(lines) || strings.HasPrefix(lines[i], "--") {
			slices.Sort(lines[start:i])
			start = i + 1
		}
	}
}
