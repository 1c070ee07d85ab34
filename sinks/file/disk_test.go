package file

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// A full disk never leaves the output cut mid-record, a commit needs no more
// room than it adds, and the error names the file and the bytes needed. Every
// test runs on a real, small tmpfs.

const (
	diskSize    = 1 << 20
	diskBatches = 40
)

// wide is the i-th batch of a full-disk run: 40 rows of about 60 bytes.
func wide(i int) *row.Batch {
	changes := make([]row.Change, 40)
	for j := range changes {
		changes[j] = change(row.Insert, fmt.Sprintf("row-%04d-%02d-abcdefghijklmnopqrstuvwxyz-0123456789", i, j), int64(i*100+j))
	}
	return batch(changes...)
}

// step is one call the runtime makes on a sink: write batch i, flush,
// snapshot (a checkpoint's barrier, covering batches up to i) or commit
// the newest snapshot.
type step struct {
	op string // write, flush, snapshot, commit
	i  int
}

// diskSteps is a run of diskBatches batches, each written and flushed,
// with a checkpoint every `every` batches (never if 0).
func diskSteps(every int) []step {
	var steps []step
	for i := range diskBatches {
		steps = append(steps, step{"write", i}, step{"flush", i})
		if every > 0 && (i+1)%every == 0 {
			steps = append(steps, step{"snapshot", i}, step{"commit", i})
		}
	}
	return steps
}

// runner plays steps on a sink and remembers what a restore needs.
type runner struct {
	s *Sink
	// snap is the newest snapshot, stored is the newest one the runtime
	// would have stored (every snapshot that returned), storedAt the last
	// batch it covers (-1 for none).
	snap     []byte
	stored   []byte
	storedAt int
}

func (r *runner) do(st step) error {
	ctx := context.Background()
	switch st.op {
	case "write":
		return r.s.Write(ctx, wide(st.i))
	case "flush":
		return r.s.Flush(ctx)
	case "snapshot":
		snap, err := r.s.Snapshot(ctx)
		if err != nil {
			return err
		}
		r.snap, r.stored, r.storedAt = snap, snap, st.i
		return nil
	case "commit":
		return r.s.Commit(ctx, r.snap)
	}
	panic(st.op)
}

// reference is the output of steps without faults.
func reference(t *testing.T, steps []step, run connector.RunInfo) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.csv")
	var log testenv.Buffer
	s, err := startSink(t, path, headerCSV, run, nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{s: s, storedAt: -1}
	for _, st := range steps {
		if err := r.do(st); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return readFile(t, path)
}

// untilFull plays steps until one fails, which must be for want of room,
// and checks what a full disk must leave: the output as it was before
// the failing step (nothing of a failed write in it, so whole records),
// a prefix of the reference, and an error that names the file and the
// bytes needed. It returns the failing step's index.
func untilFull(t *testing.T, r *runner, path string, steps []step, want string) int {
	t.Helper()
	for k, st := range steps {
		before := readFile(t, path)
		err := r.do(st)
		if err == nil {
			continue
		}
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("step %d (%s of batch %d): %v, want no space left on device", k, st.op, st.i, err)
		}
		t.Logf("step %d (%s of batch %d) failed: %v", k, st.op, st.i, err)
		for _, w := range []string{path, "no space left on device", "bytes needed", "free)", "last whole record"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("the error %q does not say %q", err, w)
			}
		}
		if got := readFile(t, path); got != before {
			t.Fatalf("the failed %s changed the output from %d to %d bytes; its tail: %q", st.op, len(before), len(got), excerptEnd(got))
		}
		if !strings.HasPrefix(want, before) || !strings.HasSuffix(before, "\n") {
			t.Fatalf("the output (%d bytes) is not whole records of the reference; its tail: %q", len(before), excerptEnd(before))
		}
		return k
	}
	t.Fatal("the disk never filled: the test tested nothing")
	return 0
}

func excerptEnd(s string) string { return s[max(0, len(s)-80):] }

// TestFullDiskOneShot: a run without a state directory (etld run on a
// bounded input) that fills the disk, before its first checkpoint (rows
// written straight into the output) or after (rows in parts, appended at
// each commit). Then either the same sink is retried once there is room
// again, or the run ends (Close, the way a failed run does) and is run
// again from the start: both give the output of a run without a fault.
func TestFullDiskOneShot(t *testing.T) {
	for _, every := range []int{0, 5} {
		for _, then := range []string{"retry", "rerun"} {
			t.Run(fmt.Sprintf("checkpoint every %d/%s", every, then), func(t *testing.T) {
				steps := diskSteps(every)
				want := reference(t, steps, connector.RunInfo{})
				dir := testenv.Tmpfs(t, diskSize)
				path := filepath.Join(dir, "out.csv")
				fill := testenv.Fill(t, dir, int64(len(want)/2))
				var log testenv.Buffer
				s, err := startSink(t, path, headerCSV, connector.RunInfo{}, nil, &log)
				if err != nil {
					t.Fatal(err)
				}
				r := &runner{s: s, storedAt: -1}
				k := untilFull(t, r, path, steps, want)
				if then == "rerun" {
					if err := s.Close(context.Background()); err == nil {
						t.Error("Close published everything on a full disk")
					}
					got := readFile(t, path)
					if !strings.HasPrefix(want, got) || !strings.HasSuffix(got, "\n") {
						t.Fatalf("after Close the output (%d bytes) is not whole records of the reference; its tail: %q", len(got), excerptEnd(got))
					}
					if p := parts(t, path); len(p) != 0 {
						t.Errorf("a failed run without state left in-progress files holding the disk: %v", p)
					}
				}
				if err := os.Remove(fill); err != nil {
					t.Fatal(err)
				}
				if then == "rerun" {
					s, err = startSink(t, path, headerCSV, connector.RunInfo{}, nil, &log)
					if err != nil {
						t.Fatal(err)
					}
					r, k = &runner{s: s, storedAt: -1}, 0
				}
				for _, st := range steps[k:] {
					if err := r.do(st); err != nil {
						t.Fatalf("%s of batch %d with room again: %v", st.op, st.i, err)
					}
				}
				if err := s.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
				if got := readFile(t, path); got != want {
					t.Errorf("output (%d bytes) differs from the run without a fault (%d bytes)", len(got), len(want))
				}
				if p := parts(t, path); len(p) != 0 {
					t.Errorf("in-progress files left: %v", p)
				}
			})
		}
	}
}

// TestFullDiskWithState: a run with a state directory fills the disk (a
// write to a part or a commit fails) and ends, by a crash or a Close; the
// next run, with room again, restores the newest stored checkpoint and
// replays the batches after it, as the sources would.
func TestFullDiskWithState(t *testing.T) {
	resumable := connector.RunInfo{Resumable: true}
	steps := diskSteps(3)
	want := reference(t, steps, resumable)
	for _, leave := range []int{len(want) / 3, len(want) / 2, 2 * len(want) / 3} {
		for _, end := range []string{"crash", "close"} {
			t.Run(fmt.Sprintf("%d bytes free/%s", leave, end), func(t *testing.T) {
				dir := testenv.Tmpfs(t, diskSize)
				path := filepath.Join(dir, "out.csv")
				fill := testenv.Fill(t, dir, int64(leave))
				var log testenv.Buffer
				s, err := startSink(t, path, headerCSV, resumable, nil, &log)
				if err != nil {
					t.Fatal(err)
				}
				r := &runner{s: s, storedAt: -1}
				untilFull(t, r, path, steps, want)
				if end == "crash" {
					crash(s)
				} else {
					s.Close(context.Background())
				}
				if err := os.Remove(fill); err != nil {
					t.Fatal(err)
				}
				run := resumable
				run.Restored = r.stored != nil
				s, err = startSink(t, path, headerCSV, run, r.stored, &log)
				if err != nil {
					t.Fatal(err)
				}
				r = &runner{s: s, snap: r.stored, storedAt: r.storedAt}
				for _, st := range steps {
					if st.i <= r.storedAt {
						continue
					}
					if err := r.do(st); err != nil {
						t.Fatalf("%s of batch %d after the restore: %v", st.op, st.i, err)
					}
				}
				if err := s.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
				if got := readFile(t, path); got != want {
					t.Errorf("output (%d bytes) differs from the run without a fault (%d bytes)", len(got), len(want))
				}
				if p := parts(t, path); len(p) != 0 {
					t.Errorf("in-progress files left: %v", p)
				}
			})
		}
	}
}

// TestFullDiskCommitFollowed: a followed source never ends, so a commit
// that fails must not leave a torn output until some next start: the
// output is at its last whole record as soon as Commit returns, the rows
// wait in their part, and a retry with exactly the room the commit adds
// (rounded up to the file system's pages) publishes them.
func TestFullDiskCommitFollowed(t *testing.T) {
	resumable := connector.RunInfo{Resumable: true}
	dir := testenv.Tmpfs(t, diskSize)
	path := filepath.Join(dir, "out.csv")
	var log testenv.Buffer
	s, err := startSink(t, path, headerCSV, resumable, nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{s: s, storedAt: -1}
	ctx := context.Background()
	play := func(steps ...step) {
		t.Helper()
		for _, st := range steps {
			if err := r.do(st); err != nil {
				t.Fatalf("%s of batch %d: %v", st.op, st.i, err)
			}
		}
	}
	play(step{"write", 0}, step{"flush", 0}, step{"snapshot", 0}, step{"commit", 0})
	for i := 1; i <= 6; i++ {
		play(step{"write", i}, step{"flush", i})
	}
	play(step{"snapshot", 6})
	before := readFile(t, path)
	need := 0
	for i := 1; i <= 6; i++ {
		need += encodedLen(t, wide(i))
	}
	fill := testenv.Fill(t, dir, 0)
	err = s.Commit(ctx, r.snap)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Commit on a full disk: %v, want no space left on device", err)
	}
	for _, w := range []string{path, fmt.Sprintf("(%d bytes needed", need), "last whole record"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error %q does not say %q", err, w)
		}
	}
	if got := readFile(t, path); got != before {
		t.Fatalf("the failed commit left the output at %d bytes, not %d; its tail: %q", len(got), len(before), excerptEnd(got))
	}

	// Exactly the room the commit adds, in whole pages, and not one more.
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	page := int64(os.Getpagesize())
	fill = testenv.Fill(t, dir, (int64(need)+page-1)/page*page)
	if err := s.Commit(ctx, r.snap); err != nil {
		t.Fatalf("Commit with the room it adds: %v", err)
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	// The source goes on.
	for i := 7; i < 10; i++ {
		play(step{"write", i}, step{"flush", i})
	}
	play(step{"snapshot", 9}, step{"commit", 9})
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var steps []step
	for i := range 10 {
		steps = append(steps, step{"write", i}, step{"flush", i})
		if i == 0 || i == 6 || i == 9 {
			steps = append(steps, step{"snapshot", i}, step{"commit", i})
		}
	}
	if got, want := readFile(t, path), reference(t, steps, resumable); got != want {
		t.Errorf("output (%d bytes) differs from the run without a fault (%d bytes)", len(got), len(want))
	}
}

// TestFirstCommitRenames: the first commit of a run with a state
// directory publishes into an empty output, which takes no room at all:
// the part is renamed onto it, on a disk with nothing free.
func TestFirstCommitRenames(t *testing.T) {
	dir := testenv.Tmpfs(t, diskSize)
	path := filepath.Join(dir, "out.csv")
	var log testenv.Buffer
	s, err := startSink(t, path, headerCSV, connector.RunInfo{Resumable: true}, nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		write(t, s, wide(i))
	}
	st := checkpoint(t, s)
	testenv.Fill(t, dir, 0)
	commit(t, s, st)
	if p := parts(t, path); len(p) != 0 {
		t.Errorf("in-progress files left: %v", p)
	}
	want := "id,cnt\n"
	for i := range 5 {
		want += encoded(t, wide(i))
	}
	if got := readFile(t, path); got != want {
		t.Errorf("output (%d bytes) is not the rows written (%d bytes)", len(got), len(want))
	}
	// Later commits append to the renamed file, not to the old one.
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// encoded is b as the sink writes it in CSV without a header.
func encoded(t *testing.T, b *row.Batch) string {
	t.Helper()
	var out strings.Builder
	for _, c := range b.Changes {
		fmt.Fprintf(&out, "%s,%d\n", c.Row[0].Str(), c.Row[1].Int64())
	}
	return out.String()
}

func encodedLen(t *testing.T, b *row.Batch) int { return len(encoded(t, b)) }
