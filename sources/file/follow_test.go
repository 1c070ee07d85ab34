package file

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const lineSchema = "[line STRING]"

// followOpts follows path as raw lines, looking around every 10ms, and
// lets go of a rotated file quiet for 50ms.
func followOpts(path string) string {
	return "path: " + path + "\nformat: raw\nfollow: true\nmonitor_interval: 10ms\nrotate_wait: 50ms"
}

// readLines reads until it has n more lines, failing after 10 s.
func readLines(t *testing.T, s *Source, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	for len(got) < n {
		b, err := s.Read(ctx, 100)
		if b != nil {
			for _, c := range b.Changes {
				got = append(got, c.Row[0].Str())
			}
		}
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
	}
	return got
}

// nothingMore checks that Read has nothing within a few intervals: it
// must return the context's error and no row.
func nothingMore(t *testing.T, s *Source) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	b, err := s.Read(ctx, 100)
	if b != nil && b.Len() > 0 {
		t.Fatalf("read %d more changes, first %s", b.Len(), b.Changes[0])
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read with nothing to read: %v, want the context's deadline", err)
	}
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func TestFollowReadsLinesAsTheyComplete(t *testing.T) {
	h := newHarness(t)
	path := h.write("app.log", "a\nb\npart")
	s := h.open(followOpts(path), lineSchema)
	if s.Bounded() {
		t.Error("a followed source says it is bounded")
	}
	if got := readLines(t, s, 2); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("read %q", got)
	}
	// The last line has no newline yet: it is held back.
	nothingMore(t, s)
	appendTo(t, path, "ial\nc\n")
	if got := readLines(t, s, 2); !slices.Equal(got, []string{"partial", "c"}) {
		t.Fatalf("read %q, want the completed line and the next", got)
	}
	nothingMore(t, s)
}

func TestFollowWaitsForTheFile(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.dir, "later.log")
	s := h.open(followOpts(path), lineSchema)
	nothingMore(t, s)
	appendTo(t, path, "first\n")
	if got := readLines(t, s, 1); got[0] != "first" {
		t.Fatalf("read %q", got)
	}
}

// TestFollowRotation: the writer keeps writing the old file for a while
// after the rename, then a new file takes the name. Every line is read
// once, the old file's first, but for its last line, which has no
// newline: it is read once the file has been quiet for rotate_wait.
func TestFollowRotation(t *testing.T) {
	h := newHarness(t)
	path := h.write("app.log", "1\n2\n")
	s := h.open(followOpts(path), lineSchema)
	readLines(t, s, 2)
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path+".1", "3\n4")
	appendTo(t, path, "5\n")
	got := readLines(t, s, 3)
	if want := []string{"3", "5", "4"}; !slices.Equal(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	nothingMore(t, s)
	if n := len(s.fl.files); n != 1 {
		t.Errorf("%d files followed, want the old one dropped", n)
	}
	// A second rotation, by delete and create.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "6\n")
	if got := readLines(t, s, 1); got[0] != "6" {
		t.Fatalf("read %q", got)
	}
}

func TestFollowTruncation(t *testing.T) {
	h := newHarness(t)
	path := h.write("app.log", "first line\nsecond line\n")
	s := h.open(followOpts(path), lineSchema)
	readLines(t, s, 2)
	// copytruncate: the content is copied away and the file emptied; the
	// writer goes on at the start.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "x\n")
	if got := readLines(t, s, 1); got[0] != "x" {
		t.Fatalf("read %q after truncation", got)
	}
	nothingMore(t, s)
	// Truncated and written past the old length before the source
	// looked: the first bytes tell.
	if err := os.WriteFile(path, []byte("y: longer than what was read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readLines(t, s, 1); got[0] != "y: longer than what was read" {
		t.Fatalf("read %q after a rewrite", got)
	}
	nothingMore(t, s)
}

func TestFollowGlobPicksUpNewFiles(t *testing.T) {
	h := newHarness(t)
	h.write("logs/a.log", "a1\n")
	h.write("logs/skip.txt", "not matched\n")
	s := h.open(followOpts(filepath.Join(h.dir, "logs", "*.log")), lineSchema)
	readLines(t, s, 1)
	h.write("logs/b.log", "b1\n")
	appendTo(t, filepath.Join(h.dir, "logs", "a.log"), "a2\n")
	got := readLines(t, s, 2)
	slices.Sort(got)
	if want := []string{"a2", "b1"}; !slices.Equal(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	nothingMore(t, s)
}

func TestFollowCSVHeader(t *testing.T) {
	h := newHarness(t)
	path := h.write("s.csv", "id,ts,temperature\n")
	opts := "path: " + path + "\nformat: {type: csv, header: true}\nfollow: true\nmonitor_interval: 10ms"
	s := h.open(opts, sensorSchema)
	appendTo(t, path, "s1,1,1.5\n")
	b, err := s.Read(context.Background(), 10)
	if err != nil || b.Len() != 1 || b.Changes[0].String() != "+I[s1, 1, 1.5]" {
		t.Fatalf("read %v, %v", b, err)
	}
	// A resumed source reads the header again to map the columns.
	pos, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "s2,2,2.5\n")
	r, err := h.build(opts, sensorSchema)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(pos); err != nil {
		t.Fatal(err)
	}
	if err := r.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	b, err = r.Read(context.Background(), 10)
	if err != nil || b.Len() != 1 || b.Changes[0].String() != "+I[s2, 2, 2.5]" {
		t.Fatalf("resumed read %v, %v", b, err)
	}
}

// resume builds a source over opts restored at pos, and opens it.
func resume(t *testing.T, h *harness, opts string, pos []byte) *Source {
	t.Helper()
	r, err := h.build(opts, lineSchema)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(pos); err != nil {
		t.Fatal(err)
	}
	if err := r.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

func TestFollowRestore(t *testing.T) {
	tests := []struct {
		name string
		// glob is the path option relative to the dir; the log is app.log.
		glob string
		// change happens between the checkpoint and the restart.
		change func(t *testing.T, log string)
		want   []string
	}{{
		name:   "appended",
		glob:   "app.log",
		change: func(t *testing.T, log string) { appendTo(t, log, "c\n") },
		want:   []string{"b", "c"},
	}, {
		// The rotated file is out of sight: what was left in it is lost,
		// but the new file is read from its start, not at the old offset.
		name: "rotated out of the pattern",
		glob: "app.log",
		change: func(t *testing.T, log string) {
			if err := os.Rename(log, log+".1"); err != nil {
				t.Fatal(err)
			}
			appendTo(t, log, "new line 1, longer than the old offset\nnew line 2\n")
		},
		want: []string{"new line 1, longer than the old offset", "new line 2"},
	}, {
		// The rotated file still matches: found by its identity, it is
		// resumed where it was, then the new one is read.
		name: "rotated within the pattern",
		glob: "app.log*",
		change: func(t *testing.T, log string) {
			if err := os.Rename(log, log+".1"); err != nil {
				t.Fatal(err)
			}
			// The rotated file was written last before the new one, even
			// on a file system whose clock ticks coarsely.
			old := time.Now().Add(-time.Minute)
			if err := os.Chtimes(log+".1", old, old); err != nil {
				t.Fatal(err)
			}
			appendTo(t, log, "new\n")
		},
		want: []string{"b", "new"},
	}, {
		// Replaced by a file of the same size at the same path (maybe
		// the same inode): the fingerprint differs, so it is read from 0.
		name: "rewritten",
		glob: "app.log",
		change: func(t *testing.T, log string) {
			if err := os.WriteFile(log, []byte("A\nB\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		want: []string{"A", "B"},
	}, {
		name: "truncated",
		glob: "app.log",
		change: func(t *testing.T, log string) {
			if err := os.Truncate(log, 0); err != nil {
				t.Fatal(err)
			}
			appendTo(t, log, "z\n")
		},
		want: []string{"z"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			log := h.write("app.log", "a\nb\n")
			opts := followOpts(filepath.Join(h.dir, tt.glob))
			s := h.open(opts, lineSchema)
			b, err := s.Read(context.Background(), 1)
			if err != nil || b.Len() != 1 {
				t.Fatalf("read %v, %v", b, err)
			}
			pos, err := s.Position()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(pos), `{"v":2,"files":[{"path":`) || !strings.Contains(string(pos), `"offset":2,"line":2,`) {
				t.Errorf("position %s", pos)
			}
			s.Close(context.Background())
			tt.change(t, log)
			r := resume(t, h, opts, pos)
			if got := readLines(t, r, len(tt.want)); !slices.Equal(got, tt.want) {
				t.Fatalf("resumed: read %q, want %q", got, tt.want)
			}
			nothingMore(t, r)
		})
	}
}

// TestFollowRestoreBoundedPosition: a pipeline that read a file bounded
// and now follows it resumes where the bounded run stopped.
func TestFollowRestoreBoundedPosition(t *testing.T) {
	h := newHarness(t)
	a := h.write("d/a.log", "a1\na2\n")
	h.write("d/b.log", "b1\nb2\n")
	pos := []byte(`{"v":1,"file":"` + filepath.Join(h.dir, "d", "b.log") + `","offset":3,"line":2}`)
	r := resume(t, h, followOpts(filepath.Join(h.dir, "d", "*.log")), pos)
	if got := readLines(t, r, 1); got[0] != "b2" {
		t.Fatalf("read %q", got)
	}
	appendTo(t, a, "a3\n")
	if got := readLines(t, r, 1); got[0] != "a3" {
		t.Fatalf("read %q", got)
	}
	// The other way round is refused: a bounded source cannot use it.
	s, err := h.build("path: "+a+"\nformat: raw", lineSchema)
	if err != nil {
		t.Fatal(err)
	}
	fpos, err := r.Position()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(fpos); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(context.Background()); err == nil || !strings.Contains(err.Error(), "taken with follow: true") {
		t.Errorf("bounded Open at a followed position: %v", err)
	}
}

// TestFollowStopsOnCancel: a Read that waits returns when its context
// ends, promptly.
func TestFollowStopsOnCancel(t *testing.T) {
	h := newHarness(t)
	s := h.open("path: "+h.write("app.log", "")+"\nformat: raw\nfollow: true\nmonitor_interval: 1h", lineSchema)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := s.Read(ctx, 10)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Read: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read did not return after its context ended")
	}
}

// TestFollowCancelIsNotSticky: the runtime cancels a busy Read to take a
// checkpoint; the rows read so far come back, and the next Read goes on
// where it stopped, losing nothing.
func TestFollowCancelIsNotSticky(t *testing.T) {
	h := newHarness(t)
	var lines strings.Builder
	const n = 5000
	for i := range n {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	s := h.open("path: "+h.write("app.log", lines.String())+"\nformat: raw\nfollow: true\nmonitor_interval: 10ms", lineSchema)
	b, err := s.Read(&cancelAfter{Context: context.Background(), left: 1}, n)
	if err != nil || b.Len() == 0 || b.Len() == n {
		t.Fatalf("cancelled Read: %d rows, %v; want a part of the file and no error", b.Len(), err)
	}
	got := b.Len()
	for got < n {
		b, err := s.Read(context.Background(), n)
		if err != nil {
			t.Fatalf("Read after a cancelled one: %v", err)
		}
		for i, c := range b.Changes {
			if want := fmt.Sprintf("+I[line %d]", got+i); c.String() != want {
				t.Fatalf("row %d = %s, want %s", got+i, c, want)
			}
		}
		got += b.Len()
	}
}

// cancelAfter is a context that reports itself cancelled once Err has
// been asked left times: a cancellation in the middle of a Read.
type cancelAfter struct {
	context.Context
	left int
}

func (c *cancelAfter) Err() error {
	if c.left > 0 {
		c.left--
		return nil
	}
	return context.Canceled
}

// TestFollowHoldsAnUnfinishedRecord: a CSV record whose quoted field spans
// lines is read once its end arrives, as a line is once its newline does.
func TestFollowHoldsAnUnfinishedRecord(t *testing.T) {
	h := newHarness(t)
	path := h.write("s.csv", "s0,0,0\n\"s\n")
	s := h.open("path: "+path+"\nfollow: true\nmonitor_interval: 10ms", sensorSchema)
	b, err := s.Read(context.Background(), 10)
	if err != nil || b.Len() != 1 {
		t.Fatalf("read %v, %v", b, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if b, err := s.Read(ctx, 10); b != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read an unfinished record: %v, %v", b, err)
	}
	appendTo(t, path, "1\",1,1\n")
	b, err = s.Read(context.Background(), 10)
	if err != nil || b.Len() != 1 || b.Changes[0].String() != "+I[s\n1, 1, 1.0]" {
		t.Fatalf("read %v, %v", b, err)
	}
}

// TestFollowWaitsForAnOpenQuote: a CSV quote still open at the end of a
// growing file waits for the rest of its record rather than being taken
// for a stray; once max_record_bytes pass without its close it is one, a
// bad record at its line, and the lines after it are read.
func TestFollowWaitsForAnOpenQuote(t *testing.T) {
	h := newHarness(t)
	h.skip = true
	path := h.write("in.csv", "s1,1,1.5\n\"s\n")
	s := h.open("path: "+path+"\nfollow: true\nmonitor_interval: 10ms\nmax_record_bytes: 64", sensorSchema)
	if got := readLines(t, s, 1); !slices.Equal(got, []string{"s1"}) {
		t.Fatalf("read %q", got)
	}
	nothingMore(t, s)
	appendTo(t, path, "2\",2,2.5\n")
	if got := readLines(t, s, 1); !slices.Equal(got, []string{"s\n2"}) {
		t.Fatalf("read %q, want the record whose quote closed", got)
	}
	appendTo(t, path, "\"bad,4,4.5\ns5,5,5.5\n")
	nothingMore(t, s)
	if len(h.rejects) != 0 {
		t.Fatalf("rejected %q while its quote could still close", h.rejects[0].Raw)
	}
	var more []string
	for i := 6; i < 12; i++ {
		appendTo(t, path, fmt.Sprintf("s%d,%d,%d.5\n", i, i, i))
		more = append(more, fmt.Sprintf("s%d", i))
	}
	if got := readLines(t, s, 7); !slices.Equal(got, append([]string{"s5"}, more...)) {
		t.Fatalf("read %q, want s5 to s11", got)
	}
	if len(h.rejects) != 1 || h.rejects[0].Position != path+":4" || string(h.rejects[0].Raw) != "\"bad,4,4.5" {
		t.Fatalf("rejected %v, want \"bad,4,4.5 at line 4", h.rejects)
	}
}
