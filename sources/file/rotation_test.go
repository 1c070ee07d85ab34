package file

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// collector gathers the lines a reader goroutine reads, for a writer that
// waits until they have arrived.
type collector struct {
	mu    sync.Mutex
	lines []string
	// more is closed, and replaced, whenever lines grows.
	more chan struct{}
}

func newCollector() *collector { return &collector{more: make(chan struct{})} }

func (c *collector) add(lines []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, lines...)
	close(c.more)
	c.more = make(chan struct{})
}

func (c *collector) snapshot() ([]string, chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.lines), c.more
}

// waitFor waits until n lines have arrived, failing after 10 s with what
// did.
func (c *collector) waitFor(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		got, more := c.snapshot()
		if len(got) >= n {
			return
		}
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("%d lines of %d read after 10 s; the last: %q", len(got), n, got[max(0, len(got)-5):])
		}
	}
}

// logFile is one generation of the log as the application writes it: the
// handle it keeps, and the lines written through it.
type logFile struct {
	f     *os.File
	gen   int
	lines int
}

func createLog(t *testing.T, path string, gen int) *logFile {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &logFile{f: f, gen: gen}
}

// write writes n lines "g<gen> <i>" through the handle.
func (l *logFile) write(t *testing.T, n int) {
	t.Helper()
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "g%d %d\n", l.gen, l.lines)
		l.lines++
	}
	if _, err := l.f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
}

// checkEachOnceInOrder checks that got holds every line of every
// generation exactly once, each generation's in the order written.
func checkEachOnceInOrder(t *testing.T, got []string, written map[int]int) {
	t.Helper()
	next := map[int]int{}
	total := 0
	for _, line := range got {
		var gen, i int
		if _, err := fmt.Sscanf(line, "g%d %d", &gen, &i); err != nil {
			t.Fatalf("read %q, which no writer wrote", line)
		}
		if i != next[gen] {
			t.Fatalf("generation %d: read line %d, want %d (lost or duplicated lines)", gen, i, next[gen])
		}
		next[gen]++
	}
	for gen, n := range written {
		if next[gen] != n {
			t.Errorf("generation %d: read %d lines of %d", gen, next[gen], n)
		}
		total += n
	}
	if len(got) != total {
		t.Errorf("read %d lines, %d written", len(got), total)
	}
}

// TestFollowLiveRotation rotates a live log a dozen times over: the log is
// renamed (or deleted) while the application still holds it; the application
// goes on writing the old file, opens a new one under the name and writes
// both for a while, the old one last. Every line must reach the reader
// exactly once, each file's in order.
func TestFollowLiveRotation(t *testing.T) {
	const rotations = 12
	h := newHarness(t)
	log := filepath.Join(h.dir, "app.log")
	cur := createLog(t, log, 0)
	cur.write(t, 5)
	s := h.open("path: "+log+"\nformat: raw\nfollow: true\nmonitor_interval: 5ms\nrotate_wait: 2s", lineSchema)

	col := newCollector()
	// followed is how many files the source holds open, as the reader saw
	// between two Reads.
	var followed atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	readerDone := make(chan error, 1)
	go func() {
		for {
			// A Read waits while there is nothing to read: a short one
			// lets the count below be taken while the source is idle.
			rctx, rcancel := context.WithTimeout(ctx, 20*time.Millisecond)
			b, err := s.Read(rctx, 7)
			rcancel()
			if b != nil && b.Len() > 0 {
				var lines []string
				for _, c := range b.Changes {
					lines = append(lines, c.Row[0].Str())
				}
				col.add(lines)
			}
			followed.Store(int64(len(s.fl.files)))
			if ctx.Err() != nil {
				readerDone <- nil
				return
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				readerDone <- err
				return
			}
		}
	}()
	stopReader := func() {
		cancel()
		if err := <-readerDone; err != nil {
			t.Fatalf("Read: %v", err)
		}
	}
	defer func() {
		if ctx.Err() == nil {
			stopReader()
		}
	}()

	written := map[int]int{}
	total := func() int {
		n := 0
		for _, w := range written {
			n += w
		}
		return n
	}
	for gen := range rotations {
		old := cur
		rotated := fmt.Sprintf("%s.%d", log, gen)
		if gen%3 == 2 {
			// Deleted while the application holds it open.
			if err := os.Remove(log); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Rename(log, rotated); err != nil {
			t.Fatal(err)
		}
		old.write(t, 4)
		cur = createLog(t, log, gen+1)
		cur.write(t, 3)
		written[old.gen], written[cur.gen] = old.lines, cur.lines
		col.waitFor(t, total())
		// The application flushes to the old file for a while yet, in
		// bursts; the source has long seen the rotation by now.
		for range 3 {
			old.write(t, 2)
			written[old.gen] = old.lines
			col.waitFor(t, total())
			cur.write(t, 1)
			written[cur.gen] = cur.lines
			col.waitFor(t, total())
		}
		old.write(t, 1)
		written[old.gen] = old.lines
		col.waitFor(t, total())
		old.f.Close()
	}

	// Quiet for rotate_wait, the rotated files are let go of; the new one
	// stays.
	deadline := time.Now().Add(15 * time.Second)
	for followed.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // polling the reader's count with a deadline
	}
	if n := followed.Load(); n != 1 {
		t.Errorf("%d files still open after the rotated ones were quiet for rotate_wait, want 1", n)
	}
	stopReader()
	got, _ := col.snapshot()
	checkEachOnceInOrder(t, got, written)
}

// logged builds a source over options whose logs go to the returned
// buffer, restored at pos when it is not nil, and opens it.
func logged(t *testing.T, h *harness, options string, pos []byte) (*Source, *testenv.Buffer) {
	t.Helper()
	s, err := h.build(options, lineSchema)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testenv.Buffer{}
	s.logger = slog.New(slog.NewTextHandler(logs, nil))
	if pos != nil {
		if err := s.Restore(pos); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, logs
}

// TestFollowRotationWhileStopped: the source is checkpointed and stopped;
// the log is rotated and both the old and the new file are written before
// it starts again from the checkpoint. The old file's unread tail is
// found by its identity under its new name, where path or rotated_path
// covers it, and read; then the new file. Nothing is lost or read twice.
// Where the old file cannot be found, the loss is logged with its size.
func TestFollowRotationWhileStopped(t *testing.T) {
	tests := []struct {
		name string
		// path and rotated are the options relative to the dir; the log is
		// app.log, rotated to app.log.1.
		path, rotated string
		// remove deletes the rotated file before the restart.
		remove bool
		want   []string
		// warn is what the restart must log, if anything: every part.
		warn []string
	}{{
		name: "rotated within the path",
		path: "app.log*",
		want: []string{"b", "old tail 1", "old tail 2", "new 1", "new 2"},
	}, {
		name:    "rotated out of the path into rotated_path",
		path:    "app.log",
		rotated: "app.log.*",
		want:    []string{"b", "old tail 1", "old tail 2", "new 1", "new 2"},
	}, {
		name:    "rotated_path in another directory",
		path:    "app.log",
		rotated: "old/app.log.*",
		want:    []string{"b", "old tail 1", "old tail 2", "new 1", "new 2"},
	}, {
		name: "rotated out of sight",
		path: "app.log",
		want: []string{"new 1", "new 2"},
		warn: []string{"level=WARN", "is gone", "lost", "unread_bytes_at_checkpoint=2", "rotated_path"},
	}, {
		name:    "rotated and deleted",
		path:    "app.log",
		rotated: "app.log.*",
		remove:  true,
		want:    []string{"new 1", "new 2"},
		warn:    []string{"level=WARN", "is gone", "lost", "unread_bytes_at_checkpoint=2", "offset=2"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			log := h.write("app.log", "a\nb\n")
			rotatedName := log + ".1"
			opts := "path: " + filepath.Join(h.dir, tt.path) + "\nformat: raw\nfollow: true\nmonitor_interval: 5ms\nrotate_wait: 50ms"
			if tt.rotated != "" {
				opts += "\nrotated_path: " + filepath.Join(h.dir, tt.rotated)
				if strings.HasPrefix(tt.rotated, "old/") {
					rotatedName = filepath.Join(h.dir, "old", "app.log.1")
					if err := os.Mkdir(filepath.Dir(rotatedName), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The application holds the log open across the stop.
			app, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer app.Close()
			s, _ := logged(t, h, opts, nil)
			if b, err := s.Read(context.Background(), 1); err != nil || b.Len() != 1 || b.Changes[0].Row[0].Str() != "a" {
				t.Fatalf("read %v, %v", b, err)
			}
			pos, err := s.Position()
			if err != nil {
				t.Fatal(err)
			}
			s.Close(context.Background())

			if err := os.Rename(log, rotatedName); err != nil {
				t.Fatal(err)
			}
			if _, err := app.WriteString("old tail 1\nold tail 2\n"); err != nil {
				t.Fatal(err)
			}
			// The new file is written last, even on a file system whose
			// clock ticks coarsely.
			old := time.Now().Add(-time.Minute)
			if err := os.Chtimes(rotatedName, old, old); err != nil {
				t.Fatal(err)
			}
			appendTo(t, log, "new 1\nnew 2\n")
			if tt.remove {
				if err := os.Remove(rotatedName); err != nil {
					t.Fatal(err)
				}
			}

			r, logs := logged(t, h, opts, pos)
			if got := readLines(t, r, len(tt.want)); !slices.Equal(got, tt.want) {
				t.Fatalf("resumed: read %q, want %q", got, tt.want)
			}
			nothingMore(t, r)
			for _, w := range tt.warn {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("the restart's logs lack %q:\n%s", w, logs)
				}
			}
			if tt.warn == nil && strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("the restart warned:\n%s", logs)
			}
			if tt.path != "app.log" {
				return // rotated files the path matches are followed as any other
			}
			// The rotated file is let go of once quiet; the new one is still
			// followed.
			if _, err := app.WriteString("after\n"); err != nil {
				t.Fatal(err)
			}
			appendTo(t, log, "new 3\n")
			if got := readLines(t, r, 1); got[0] != "new 3" {
				t.Fatalf("read %q, want only the new file's line: the rotated file was quiet for rotate_wait", got)
			}
		})
	}
}

func TestRotationOptionErrors(t *testing.T) {
	tests := []struct {
		name    string
		options string
		wantErr string
	}{
		{"rotate_wait without follow", "path: a.log\nrotate_wait: 5s", "p.yaml:8:18: sources[0].rotate_wait: applies only with follow: true"},
		{"zero rotate_wait", "path: a.log\nfollow: true\nrotate_wait: 0s", "p.yaml:9:18: sources[0].rotate_wait: must be positive, such as 5s"},
		{"negative rotate_wait", "path: a.log\nfollow: true\nrotate_wait: -1s", "p.yaml:9:18: sources[0].rotate_wait: duration \"-1s\" is negative"},
		{"bad rotate_wait", "path: a.log\nfollow: true\nrotate_wait: soon", "p.yaml:9:18: sources[0].rotate_wait"},
		{"rotate_wait below monitor_interval", "path: a.log\nfollow: true\nmonitor_interval: 1s\nrotate_wait: 500ms", "p.yaml:10:18: sources[0].rotate_wait: 500ms is shorter than monitor_interval (1s)"},
		{"rotated_path without follow", "path: a.log\nrotated_path: a.log.*", "p.yaml:8:19: sources[0].rotated_path: applies only with follow: true"},
		{"bad rotated_path", "path: a.log\nfollow: true\nrotated_path: 'a.log.[1'", "p.yaml:9:19: sources[0].rotated_path: bad glob \"a.log.[1\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newHarness(t).build(tt.options, lineSchema)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestRotateWaitDefault: 5s unless given, and never below the interval.
func TestRotateWaitDefault(t *testing.T) {
	tests := []struct {
		options string
		want    time.Duration
	}{
		{"follow: true", defaultRotateWait},
		{"follow: true\nmonitor_interval: 10s", 10 * time.Second},
		{"follow: true\nrotate_wait: 30s", 30 * time.Second},
	}
	for _, tt := range tests {
		s, err := newHarness(t).build("path: a.log\nformat: raw\n"+tt.options, lineSchema)
		if err != nil {
			t.Fatal(err)
		}
		if s.fl.rotateWait != tt.want {
			t.Errorf("%q: rotate_wait %v, want %v", tt.options, s.fl.rotateWait, tt.want)
		}
	}
}
