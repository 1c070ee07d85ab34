package main

import (
	"strings"
	"testing"

	"github.com/etld/etld/pipeline"
)

// The live line lists the pipelines in the order they were named, so
// that it does not reshuffle on every update.
func TestProgressLineOrder(t *testing.T) {
	var w strings.Builder
	p := newProgress(&w, true, nil)
	names := []string{"a", "b", "c", "d"}
	for round := 0; round < 50; round++ {
		for i, name := range names {
			p.update(i, pipeline.Summary{Pipeline: name})
		}
		w.Reset()
		p.update(0, pipeline.Summary{Pipeline: "a"})
		line := w.String()
		last := -1
		for _, name := range names {
			at := strings.Index(line, name+": ")
			if at <= last {
				t.Fatalf("round %d: %q lists the pipelines out of order", round, line)
			}
			last = at
		}
	}
}
