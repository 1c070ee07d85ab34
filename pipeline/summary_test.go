package pipeline_test

import (
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline"
)

// The summary's columns line up: the counts, and the skipped counts,
// end at the same column on every source and sink line, whatever the
// names' lengths.
func TestSummaryColumnsAlign(t *testing.T) {
	s := pipeline.Summary{
		Pipeline: "p",
		Elapsed:  time.Second,
		Sources:  []pipeline.Count{{Name: "a", In: 5, Skipped: 1}, {Name: "a_source_with_a_long_name", In: 1234567, Skipped: 12}},
		Sinks:    []pipeline.Count{{Name: "out", Out: 5}, {Name: "s", Out: 1234567, Skipped: 123}},
	}
	lines := strings.Split(strings.TrimSpace(s.String()), "\n")[1:]
	if len(lines) != 4 {
		t.Fatalf("summary:\n%s", s)
	}
	col := func(line, word string) int {
		i := strings.Index(line, word)
		if i < 0 {
			t.Fatalf("%q lacks %q", line, word)
		}
		return i
	}
	skipped, rows := col(lines[0], " skipped"), col(lines[0], " rows ")
	for _, l := range lines[1:] {
		if col(l, " skipped") != skipped || col(l, " rows ") != rows {
			t.Errorf("columns do not line up:\n%s", s)
			break
		}
	}
}
