package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/redact"
	"github.com/etld/etld/pipeline"
)

// One pipeline's status: a bar with bytes and ETA when its sources know
// their size, else the rows so far; the rate; the rows of each sink.
func TestProgressLine(t *testing.T) {
	const gib = 1 << 30
	for _, tt := range []struct {
		name string
		s    pipeline.Summary
		want string
	}{{
		name: "file source, part way",
		s: pipeline.Summary{
			Pipeline: "sensors", Elapsed: 10 * time.Second,
			Sources: []pipeline.Count{{Name: "f", Out: 12_000_000, Read: 13 * gib / 10, Size: 31 * gib / 10}},
			Sinks:   []pipeline.Count{{Name: "archive", Out: 1_000_000}, {Name: "search", Out: 512_000}},
		},
		// 1.3 of 3.1 GiB in 10s: 1.8 GiB to go takes 13.8s more.
		want: "sensors [=======>            ]  42% 1.3 GiB/3.1 GiB ETA 0:14 1.2M rows/s | archive 1.0M, search 512.0k",
	}, {
		name: "file source, not started",
		s: pipeline.Summary{
			Pipeline: "p",
			Sources:  []pipeline.Count{{Name: "f", Size: 2048}},
			Sinks:    []pipeline.Count{{Name: "out"}},
		},
		want: "p [>                   ]   0% 0 B/2.0 KiB ETA -:-- 0 rows/s | out 0",
	}, {
		name: "file source, at the end",
		s: pipeline.Summary{
			Pipeline: "p", Elapsed: time.Second,
			Sources: []pipeline.Count{{Name: "f", Out: 10, Read: 2048, Size: 2048}},
		},
		want: "p [====================] 100% 2.0 KiB/2.0 KiB ETA 0:00 10 rows/s",
	}, {
		name: "sized and unsized sources: the bar counts the sized ones, the rows all",
		s: pipeline.Summary{
			Pipeline: "j", Elapsed: 2 * time.Second,
			Sources: []pipeline.Count{{Name: "f", Out: 100, Read: 512, Size: 1024}, {Name: "gen", Out: 300}},
			Sinks:   []pipeline.Count{{Name: "out", Out: 50}},
		},
		want: "j [=========>          ]  50% 512 B/1.0 KiB ETA 0:02 200 rows/s | out 50",
	}, {
		name: "no size known",
		s: pipeline.Summary{
			Pipeline: "gen", Elapsed: 2 * time.Second,
			Sources: []pipeline.Count{{Name: "d", Out: 3_000_000}},
			Sinks:   []pipeline.Count{{Name: "console", Out: 2_999_000}},
		},
		want: "gen 3.0M rows, 1.5M rows/s | console 3.0M",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			if got := progressLine(tt.s); got != tt.want {
				t.Errorf("line\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// On a terminal, the lines are redrawn in place: each update goes back
// to the first line shown and clears to the end of the screen; what is
// written through the progress (logs, summaries, errors) goes above
// them; a line longer than the terminal is cut.
func TestProgressRedraw(t *testing.T) {
	var w strings.Builder
	p := newProgress(&w, true, 40, nil)
	sized := pipeline.Summary{Pipeline: "a", Elapsed: time.Second, Sources: []pipeline.Count{{Out: 1, Read: 1, Size: 2}}}
	p.update(0, sized)
	first := "a [=========>          ]  50% 1 B/2 B …" // 39 columns of 40
	if got, want := w.String(), "\r\033[J"+first; got != want {
		t.Fatalf("first draw %q, want %q", got, want)
	}
	w.Reset()
	p.update(1, pipeline.Summary{Pipeline: "b", Elapsed: time.Second})
	if got, want := w.String(), "\r\033[J"+first+"\nb 0 rows, 0 rows/s"; got != want {
		t.Fatalf("second pipeline %q, want %q", got, want)
	}
	w.Reset()
	p.update(0, sized)
	if got := w.String(); !strings.HasPrefix(got, "\033[1A\r\033[J"+first+"\n") {
		t.Fatalf("redraw of two lines %q: want the cursor moved up one line first", got)
	}
	// A log line goes above the lines, which are drawn again below it.
	w.Reset()
	fmt.Fprint(p, "level=INFO msg=hello\n")
	if got, want := w.String(), "\033[1A\r\033[Jlevel=INFO msg=hello\n\r\033[J"+first+"\nb 0 rows, 0 rows/s"; got != want {
		t.Fatalf("log line %q, want %q", got, want)
	}
	// A finished pipeline's summary replaces its line.
	w.Reset()
	p.done(0)
	fmt.Fprint(p, "pipeline a: 1s\n")
	if got, want := w.String(), "\033[1A\r\033[Jpipeline a: 1s\n\r\033[Jb 0 rows, 0 rows/s"; got != want {
		t.Fatalf("summary %q, want %q", got, want)
	}
	// The last one leaves nothing behind, and a text without a newline
	// gets one, so that no redraw wipes it.
	w.Reset()
	p.done(1)
	fmt.Fprint(p, "error: x")
	fmt.Fprint(p, "pipeline b: 1s\n")
	if got, want := w.String(), "\r\033[Jerror: x\npipeline b: 1s\n"; got != want {
		t.Fatalf("end %q, want %q", got, want)
	}
}

// Not on a terminal (or with --quiet), nothing is drawn, and what goes
// through Write is written as it is.
func TestProgressOffWritesNothing(t *testing.T) {
	var w strings.Builder
	p := newProgress(&w, false, 80, nil)
	p.update(0, pipeline.Summary{Pipeline: "a"})
	fmt.Fprint(p, "level=INFO msg=hello\n")
	p.done(0)
	fmt.Fprint(p, "pipeline a: 1s\n")
	if got, want := w.String(), "level=INFO msg=hello\npipeline a: 1s\n"; got != want {
		t.Errorf("wrote %q, want the log line and summary as they are", got)
	}
}

// A pipeline or sink name that holds a ${VAR} value never shows it.
func TestProgressRedactsSecrets(t *testing.T) {
	var w strings.Builder
	s := redact.NewSet()
	s.Add(redact.Secret{Name: "SINK_SUFFIX", Value: "hunter22"})
	p := newProgress(&w, true, 0, s)
	p.update(0, pipeline.Summary{Pipeline: "p", Sinks: []pipeline.Count{{Name: "to-hunter22"}}})
	if strings.Contains(w.String(), "hunter22") {
		t.Errorf("the line shows the secret: %q", w.String())
	}
}

// The live lines list the pipelines in the order they were named, so
// that they do not reshuffle on every update.
func TestProgressLineOrder(t *testing.T) {
	var w strings.Builder
	p := newProgress(&w, true, 0, nil)
	names := []string{"a", "b", "c", "d"}
	for round := 0; round < 50; round++ {
		for i, name := range names {
			p.update(i, pipeline.Summary{Pipeline: name})
		}
		w.Reset()
		p.update(0, pipeline.Summary{Pipeline: "a"})
		lines := strings.Split(w.String(), "\n")
		if len(lines) != len(names) {
			t.Fatalf("round %d: %q, want %d lines", round, w.String(), len(names))
		}
		for i, name := range names {
			if !strings.HasPrefix(strings.TrimLeft(lines[i], "\033[]3AJ\r"), name+" ") {
				t.Fatalf("round %d: %q lists the pipelines out of order", round, w.String())
			}
		}
	}
}
