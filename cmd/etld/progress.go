package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/etld/etld/internal/human"
	"github.com/etld/etld/internal/redact"
	"github.com/etld/etld/pipeline"
)

// progress keeps live status lines on a terminal while a one-shot run
// goes, one per running pipeline, in the order the pipelines were named:
//
//	sensors [=======>            ]  42% 1.3 GiB/3.1 GiB ETA 0:12 1.2M rows/s | archive 1.0M, search 512.0k
//	gen 3.0M rows, 1.2M rows/s | console 3.0M
//
// The bar is there for a pipeline whose sources know their size (file
// sources: bytes read of the files' total); the rows after "|" are those
// each sink wrote. Written by hand rather than with a progress bar
// module: one line of text per pipeline redrawn in place is all it does,
// several bars at once included, which such modules do not all offer.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	// width is the terminal's width in columns: a longer line would
	// wrap, and the redraw would leave its start behind. 0 if unknown.
	width   int
	secrets *redact.Set // names may come from ${VAR}
	lines   map[int]pipeline.Summary
	shown   int // lines on the screen now
}

// newProgress draws on w when enabled (w is a terminal and not --quiet).
func newProgress(w io.Writer, enabled bool, width int, secrets *redact.Set) *progress {
	return &progress{w: w, enabled: enabled, width: width, secrets: secrets, lines: map[int]pipeline.Summary{}}
}

// update redraws the lines with pipeline i's new counters.
func (p *progress) update(i int, s pipeline.Summary) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines[i] = s
	p.draw()
}

// draw replaces the lines shown with those of the running pipelines.
func (p *progress) draw() {
	// In the order the pipelines were named: a map's order would
	// reshuffle the lines on every update.
	var lines []string
	for _, i := range slices.Sorted(maps.Keys(p.lines)) {
		lines = append(lines, p.fit(p.secrets.Redact(progressLine(p.lines[i]))))
	}
	if len(lines) == 0 && p.shown == 0 {
		return
	}
	fmt.Fprint(p.w, p.erase()+strings.Join(lines, "\n"))
	p.shown = len(lines)
}

// Write writes b above the lines: they are erased, b is written, and
// they are drawn again below it. Log lines, summaries and errors go
// through it, so that none lands in the middle of a progress line, and
// none is wiped by the next redraw.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown == 0 {
		return p.w.Write(b)
	}
	if _, err := io.WriteString(p.w, p.erase()); err != nil {
		return 0, err
	}
	p.shown = 0
	n, err := p.w.Write(b)
	if err != nil {
		return n, err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		// The redraw starts by clearing the cursor's line.
		if _, err := io.WriteString(p.w, "\n"); err != nil {
			return n, err
		}
	}
	p.draw()
	return n, nil
}

// done forgets pipeline i: its summary follows, written through Write.
func (p *progress) done(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.lines, i)
}

// erase is what takes the cursor back to the start of the first line
// shown and clears from there to the end of the screen.
func (p *progress) erase() string {
	up := ""
	if p.shown > 1 {
		up = fmt.Sprintf("\033[%dA", p.shown-1)
	}
	return up + "\r\033[J"
}

// fit cuts line to the terminal's width, one column spare: a line that
// fills the last column moves the cursor on some terminals.
func (p *progress) fit(line string) string {
	if p.width <= 1 || utf8.RuneCountInString(line) < p.width {
		return line
	}
	r := []rune(line)
	return string(r[:p.width-2]) + "…"
}

// barWidth is the number of cells between the bar's brackets.
const barWidth = 20

// progressLine is one pipeline's status.
func progressLine(s pipeline.Summary) string {
	var b strings.Builder
	b.WriteString(s.Pipeline)
	var read, size, rows int64
	for _, c := range s.Sources {
		rows += c.Out
		if c.Size > 0 {
			read += c.Read
			size += c.Size
		}
	}
	rate := human.Count(s.RowsPerSecond()) + " rows/s"
	if size > 0 {
		frac := min(float64(read)/float64(size), 1)
		eta := "-:--"
		if read > 0 && s.Elapsed > 0 {
			eta = human.Clock(time.Duration(float64(s.Elapsed) * float64(size-read) / float64(read)))
		}
		fmt.Fprintf(&b, " %s %3.0f%% %s/%s ETA %s %s", bar(frac), 100*frac, human.Bytes(read), human.Bytes(size), eta, rate)
	} else {
		fmt.Fprintf(&b, " %s rows, %s", human.Count(float64(rows)), rate)
	}
	for i, c := range s.Sinks {
		sep := ", "
		if i == 0 {
			sep = " | "
		}
		fmt.Fprintf(&b, "%s%s %s", sep, c.Name, human.Count(float64(c.Out)))
	}
	return b.String()
}

// bar draws frac (0 to 1) as [=====>     ].
func bar(frac float64) string {
	n := int(frac * barWidth)
	switch {
	case n >= barWidth:
		return "[" + strings.Repeat("=", barWidth) + "]"
	case n == 0:
		return "[>" + strings.Repeat(" ", barWidth-1) + "]"
	}
	return "[" + strings.Repeat("=", n-1) + ">" + strings.Repeat(" ", barWidth-n) + "]"
}
