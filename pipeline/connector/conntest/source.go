package conntest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Source describes a source connector to the kit.
type Source struct {
	// Input makes a fresh, bounded input for one definition (a file, a
	// topic, a table, a generator's settings) and returns a builder of
	// sources that read it: a new source each call, not yet opened.
	Input func(t *testing.T) func(t *testing.T) connector.Source
	// Broken builds a source whose Open fails (a file that is not there,
	// a server that is away); nil when nothing makes its Open fail.
	Broken func(t *testing.T) connector.Source
	// Max is the most changes the kit asks one Read for: small enough
	// that an input takes several Reads.
	Max int
	// Ordered: the source reads its inputs in the same order every time
	// (a file source, its files by name), so the kit compares the order
	// of all changes, not only of each input's.
	Ordered bool
}

type sourceDef struct {
	name string
	skip func(k Source, s connector.Source) string
	run  func(t *testing.T, k Source)
}

var sourceDefs = []sourceDef{
	{"open-read-close", func(Source, connector.Source) string { return "" }, openReadClose},
	{"close-after-failed-open", func(k Source, _ connector.Source) string {
		if k.Broken == nil {
			return "nothing makes its Open fail"
		}
		return ""
	}, sourceCloseAfterFailedOpen},
	{"resume-from-position", func(_ Source, s connector.Source) string {
		if _, ok := s.(connector.Positioner); !ok {
			return "not a connector.Positioner"
		}
		if r, ok := s.(connector.Replayer); ok && r.Replays() != "" {
			return "a restored run reads other records: " + r.Replays()
		}
		return ""
	}, resumeFromPosition},
}

// RunSource runs every definition that applies to the source k
// describes, each as a subtest of t.
func RunSource(t *testing.T, k Source) {
	t.Helper()
	if k.Max < 1 {
		t.Fatalf("conntest.Source.Max is %d: want at least 1", k.Max)
	}
	probe := k.Input(t)(t)
	t.Cleanup(func() { _ = probe.Close(context.Background()) })
	for _, d := range sourceDefs {
		if why := d.skip(k, probe); why != "" {
			t.Logf("%s does not apply: %s", d.name, why)
			continue
		}
		t.Run(d.name, func(t *testing.T) { d.run(t, k) })
	}
}

// openSource opens s; the returned close closes it, failing t on an
// error, and runs when the test ends if nothing called it before.
func openSource(t *testing.T, s connector.Source) (close func()) {
	t.Helper()
	if err := s.Open(ctx(t)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	done := false
	close = func() {
		if !done {
			done = true
			if err := s.Close(context.Background()); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
	}
	t.Cleanup(close)
	return close
}

// openReadClose: Close of a source never opened returns nil; a source
// opened reads its input to the end and closes without an error.
func openReadClose(t *testing.T, k Source) {
	input := k.Input(t)
	if err := input(t).Close(ctx(t)); err != nil {
		t.Errorf("Close of a source never opened: %v", err)
	}
	s := input(t)
	if !s.Bounded() {
		t.Fatal("the kit's input must end: the source says it does not")
	}
	if err := s.Open(ctx(t)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	if got := ReadAll(t, s, k.Max); len(got) == 0 {
		t.Error("the input gave no change")
	}
	if err := s.Close(ctx(t)); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// sourceCloseAfterFailedOpen: an Open that cannot reach its input fails
// by its deadline, and Close then returns nil, twice.
func sourceCloseAfterFailedOpen(t *testing.T, k Source) {
	s := k.Broken(t)
	octx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.Open(octx); err == nil {
		t.Fatal("Open succeeded without a way to its input")
	}
	for i := range 2 {
		if err := s.Close(ctx(t)); err != nil {
			t.Errorf("Close %d after a failed Open: %v", i+1, err)
		}
	}
}

// record is a change read, with the record of its input it came from.
type record struct {
	input  string
	num    int64
	change string
}

// readRecords reads one batch of s into recs; with byRecord, every
// change must name its record (a Replayer that replays).
func readRecords(ctx context.Context, s connector.Source, max int, byRecord bool, recs []record) ([]record, error) {
	b, err := s.Read(ctx, max)
	if b != nil {
		if b.Len() > max {
			return recs, fmt.Errorf("Read(%d) returned %d changes", max, b.Len())
		}
		ro, _ := b.Origin.(row.RecordOrigin)
		for i, c := range b.Changes {
			r := record{change: c.String()}
			if byRecord {
				var ok bool
				if ro != nil {
					r.input, r.num, ok = ro.Record(i)
				}
				if !ok {
					return recs, fmt.Errorf("change %s names no record: a Replayer that replays marks each in Batch.Origin", c)
				}
			}
			recs = append(recs, r)
		}
	}
	if err == nil && (b == nil || b.Len() == 0) {
		err = errors.New("the source's Read returned no change and no error")
	}
	return recs, err
}

// readAllRecords reads s to its end.
func readAllRecords(t *testing.T, s connector.Source, max int, byRecord bool) []record {
	t.Helper()
	c := ctx(t)
	var recs []record
	for {
		var err error
		recs, err = readRecords(c, s, max, byRecord, recs)
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatalf("read after %d changes: %v", len(recs), err)
		}
	}
}

// sameRecords compares what two reads gave: the same changes, in the
// same order when ordered, and for a Replayer each input's records in
// the same order.
func sameRecords(got, want []record, byRecord, ordered bool) error {
	key := func(r record) string { return r.change }
	if byRecord {
		key = func(r record) string { return fmt.Sprintf("%s@%d %s", r.input, r.num, r.change) }
	}
	var cmp func(a, b record) int
	switch {
	case ordered:
	case byRecord:
		// Inputs may interleave differently: compare each input's own
		// sequence, which a stable sort by input keeps in order.
		cmp = func(a, b record) int { return strings.Compare(a.input, b.input) }
	default:
		cmp = func(a, b record) int { return strings.Compare(a.change, b.change) }
	}
	if cmp != nil {
		got, want = slices.Clone(got), slices.Clone(want)
		slices.SortStableFunc(got, cmp)
		slices.SortStableFunc(want, cmp)
	}
	for i := range min(len(got), len(want)) {
		if key(got[i]) != key(want[i]) {
			return fmt.Errorf("change %d of %d is %s, want %s", i, len(want), key(got[i]), key(want[i]))
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d changes, want %d", len(got), len(want))
	}
	return nil
}

// resumeFromPosition reads the input to its end, and at positions along
// the way (the first before any Read) restores a new source there, as a
// run restored from a checkpoint does (Restore, then SetRun for a
// RunAware source, then Open), and reads on to the end: what was read
// before the position and what the new source reads are the whole input
// once, each input's records in order for a Replayer. A Committer's
// Commit of each position, twice, returns nil.
func resumeFromPosition(t *testing.T, k Source) {
	input := k.Input(t)
	first := input(t)
	_, byRecord := first.(connector.Replayer)
	closeFirst := openSource(t, first)
	whole := readAllRecords(t, first, k.Max, byRecord)
	closeFirst()
	if len(whole) < 2*k.Max {
		t.Fatalf("the input gave %d changes: want at least 2 reads of %d", len(whole), k.Max)
	}
	every := max(1, len(whole)/k.Max/6)
	s := input(t)
	openSource(t, s)
	c := ctx(t)
	var read []record
	for step := 0; ; step++ {
		if step%every == 0 {
			resumeAt(t, k, input, s.(connector.Positioner), read, whole, byRecord)
		}
		var err error
		read, err = readRecords(c, s, k.Max, byRecord, read)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read after %d changes: %v", len(read), err)
		}
	}
	if err := sameRecords(read, whole, byRecord, k.Ordered); err != nil {
		t.Errorf("a second read of the input: %v", err)
	}
}

// resumeAt restores a new source at the position of s, after read.
func resumeAt(t *testing.T, k Source, input func(t *testing.T) connector.Source, s connector.Positioner, read, whole []record, byRecord bool) {
	t.Helper()
	pos, err := s.Position()
	if err != nil {
		t.Fatalf("Position after %d changes: %v", len(read), err)
	}
	if c, ok := s.(connector.Committer); ok {
		for range 2 {
			if err := c.Commit(ctx(t), pos); err != nil {
				t.Fatalf("Commit of the position after %d changes: %v", len(read), err)
			}
		}
	}
	r := input(t)
	if err := r.(connector.Positioner).Restore(pos); err != nil {
		t.Fatalf("Restore of the position after %d changes: %v", len(read), err)
	}
	if ra, ok := r.(connector.RunAware); ok {
		ra.SetRun(connector.RunInfo{Resumable: true, Restored: true, Pipeline: "conntest", Instance: "i1", Since: time.Now()})
	}
	closeR := openSource(t, r)
	rest := readAllRecords(t, r, k.Max, byRecord)
	closeR()
	if err := sameRecords(append(slices.Clone(read), rest...), whole, byRecord, k.Ordered); err != nil {
		t.Fatalf("resumed after %d changes, then read %d: %v", len(read), len(rest), err)
	}
}
