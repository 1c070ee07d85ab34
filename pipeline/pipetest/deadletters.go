package pipetest

// Dead letters in a test: the records a source's on_error: dead-letter
// set aside, read back from the dead-letter file the run wrote in its
// scratch directory, and compared with the test's dead_letters.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/spec"
)

// deadLetterCheck is what one source must have set aside; sink names the
// sink its on_error puts them in, "" for a file.
type deadLetterCheck struct {
	source string
	sink   string
	want   []spec.TestDeadLetter
}

func prepareDeadLetters(d *spec.TestDeadLetters, sources map[string]*plan.Source, names []string, errs *spec.List) *deadLetterCheck {
	src, ok := sources[d.Source]
	if !ok {
		errs.Addf(d.Pos, d.Path, "%q is not a source of this pipeline%s", d.Source, suggest(d.Source, names))
		return nil
	}
	if p := src.Spec.OnError.Policy; p != "dead-letter" {
		if p == "" {
			p = "fail"
		}
		errs.Addf(d.Pos, d.Path, "source %s has on_error: %s, which keeps no bad record: dead_letters needs on_error: dead-letter", d.Source, p)
		return nil
	}
	return &deadLetterCheck{source: d.Source, sink: src.Spec.OnError.Sink, want: d.Records}
}

// deadLetter is an entry of a dead-letter file, as the runtime writes
// it, with the record as a test compares it: the record as read, or the
// row an expression failed on as its JSON object, or the bytes of a
// record that is not UTF-8 in base64.
type deadLetter struct {
	Record       string          `json:"record"`
	RecordBase64 string          `json:"record_base64"`
	Row          json.RawMessage `json:"row"`
	Error        string          `json:"error"`
}

func (d *deadLetter) settle() {
	switch {
	case d.Row != nil:
		d.Record = string(d.Row)
	case d.RecordBase64 != "":
		d.Record = d.RecordBase64
	}
}

// sinkDeadLetters are the dead letters of source among the rows a sink
// taking them received.
func sinkDeadLetters(sink *memSink, source string) []deadLetter {
	col := func(r row.Row, name string) string { return r[runtime.DeadLetterSchema.Index(name)].Str() }
	var out []deadLetter
	for _, c := range sink.changes {
		if col(c.Row, "source") != source {
			continue
		}
		d := deadLetter{Record: col(c.Row, "record"), RecordBase64: col(c.Row, "record_base64"), Error: col(c.Row, "error")}
		if j := col(c.Row, "row"); j != "" {
			d.Row = json.RawMessage(j)
		}
		d.settle()
		out = append(out, d)
	}
	return out
}

// readDeadLetters reads a dead-letter file; one that was never written
// holds none.
func readDeadLetters(path string) ([]deadLetter, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []deadLetter
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		var d deadLetter
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("dead-letter file %s: %w", path, err)
		}
		d.settle()
		out = append(out, d)
	}
	return out, sc.Err()
}

// DeadLetterResult is the comparison of one source's dead letters: a
// diff whose values are the record and the reason (a part of it, for an
// expected entry that gives one).
type DeadLetterResult struct {
	Source string
	Diff   *Diff
}

// Passed reports whether the source set aside what was expected.
func (d DeadLetterResult) Passed() bool { return d.Diff.Equal() }

// compare matches each expected record with one set aside with that
// record and a reason that contains the expected part; the rest of both
// sides are the differences, each expected entry beside the entries of
// its record that were not matched.
func (c *deadLetterCheck) compare(got []deadLetter) DeadLetterResult {
	used := make([]bool, len(got))
	d := &Diff{}
	var missing []spec.TestDeadLetter
	for _, w := range c.want {
		i := indexOf(got, used, func(g deadLetter) bool { return g.Record == w.Record && strings.Contains(g.Error, w.Error) })
		if i < 0 {
			missing = append(missing, w)
			continue
		}
		used[i] = true
		d.Entries = append(d.Entries, Entry{Mark: Same, Values: []string{got[i].Record, got[i].Error}})
	}
	for _, w := range missing {
		d.Entries = append(d.Entries, Entry{Mark: Want, Values: []string{w.Record, wantedError(w.Error)}})
		for {
			i := indexOf(got, used, func(g deadLetter) bool { return g.Record == w.Record })
			if i < 0 {
				break
			}
			used[i] = true
			d.Entries = append(d.Entries, Entry{Mark: Got, Values: []string{got[i].Record, got[i].Error}})
		}
	}
	for i, g := range got {
		if !used[i] {
			d.Entries = append(d.Entries, Entry{Mark: Got, Values: []string{g.Record, g.Error}})
		}
	}
	sortEntries(d.Entries)
	return DeadLetterResult{Source: c.source, Diff: d}
}

func indexOf(got []deadLetter, used []bool, match func(deadLetter) bool) int {
	for i, g := range got {
		if !used[i] && match(g) {
			return i
		}
	}
	return -1
}

// wantedError shows an expected reason as the part of one it is.
func wantedError(part string) string {
	if part == "" {
		return ""
	}
	return "(a part:) " + part
}
