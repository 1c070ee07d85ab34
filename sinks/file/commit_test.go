package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

const headerCSV = "format: {type: csv, header: true}"

// numbered is the i-th batch of a run: three rows, so that batches differ.
func numbered(i int) *row.Batch {
	return batch(
		change(row.Insert, fmt.Sprintf("b%d-a", i), int64(i)),
		change(row.Insert, fmt.Sprintf("b%d-b", i), int64(10*i)),
		change(row.Insert, fmt.Sprintf("b%d-c", i), int64(100*i)),
	)
}

// parts lists the in-progress files beside path.
func parts(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"+partSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkpoint does what the runtime does at a barrier: Flush, then Snapshot.
func checkpoint(t *testing.T, s *Sink) []byte {
	t.Helper()
	ctx := context.Background()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func commit(t *testing.T, s *Sink, st []byte) {
	t.Helper()
	if err := s.Commit(context.Background(), st); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, s *Sink, b *row.Batch) {
	t.Helper()
	if err := s.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// crash drops s as a killed process would: no Close, no publishing.
func crash(s *Sink) {
	if s.f != nil && s.f != s.out {
		s.f.Close()
	}
	s.out.Close()
	s.f, s.out = nil, nil
}

// restoreSink builds a sink over path, restores st when not nil, opens it.
func restoreSink(t *testing.T, path, options string, st []byte) (*Sink, error) {
	t.Helper()
	s, err := build(t, "path: "+path+"\n"+options)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(connector.SinkInput{Schema: statsSchema, Mode: connector.Append}); err != nil {
		t.Fatal(err)
	}
	if st != nil {
		if err := s.Restore(st); err != nil {
			return nil, err
		}
	}
	if err := s.Open(context.Background()); err != nil {
		s.Close(context.Background())
		return nil, err
	}
	return s, nil
}

func TestCommitPublishesAtCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.csv")
	s := open(t, path, headerCSV, connector.Append)
	write(t, s, batch(change(row.Insert, "a", 1)))
	// Before the first checkpoint the sink writes the file directly.
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), "id,cnt\na,1\n"; got != want {
		t.Fatalf("after the first Flush: %q, want %q", got, want)
	}
	st1 := checkpoint(t, s)
	commit(t, s, st1)
	if got := parts(t, path); len(got) != 0 {
		t.Errorf("in-progress files after the first checkpoint: %v", got)
	}

	write(t, s, batch(change(row.Insert, "b", 2)))
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), "id,cnt\na,1\n"; got != want {
		t.Errorf("a Flush after a checkpoint published: %q, want %q", got, want)
	}
	if got := parts(t, path); len(got) != 1 {
		t.Fatalf("in-progress files: %v, want one", got)
	}
	st2 := checkpoint(t, s)
	if got, want := readFile(t, path), "id,cnt\na,1\n"; got != want {
		t.Errorf("a Snapshot published: %q, want %q", got, want)
	}
	want := "id,cnt\na,1\nb,2\n"
	commit(t, s, st2)
	if got := readFile(t, path); got != want {
		t.Errorf("after Commit: %q, want %q", got, want)
	}
	if got := parts(t, path); len(got) != 0 {
		t.Errorf("in-progress files after Commit: %v", got)
	}
	// Commit is idempotent, an older one too.
	commit(t, s, st2)
	commit(t, s, st1)
	if got := readFile(t, path); got != want {
		t.Errorf("after repeated Commits: %q, want %q", got, want)
	}

	// Two checkpoints before a Commit: the second state names both parts,
	// and committing the first publishes only its own.
	write(t, s, batch(change(row.Insert, "c", 3)))
	st3 := checkpoint(t, s)
	write(t, s, batch(change(row.Insert, "d", 4)))
	st4 := checkpoint(t, s)
	commit(t, s, st3)
	if got, want := readFile(t, path), want+"c,3\n"; got != want {
		t.Errorf("after Commit of the older checkpoint: %q, want %q", got, want)
	}
	commit(t, s, st4)
	want += "c,3\nd,4\n"
	if got := readFile(t, path); got != want {
		t.Errorf("after Commit of the newer checkpoint: %q, want %q", got, want)
	}

	// Close publishes what no checkpoint covered.
	write(t, s, batch(change(row.Insert, "e", 5)))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), want+"e,5\n"; got != want {
		t.Errorf("after Close: %q, want %q", got, want)
	}
	if got := parts(t, path); len(got) != 0 {
		t.Errorf("in-progress files after Close: %v", got)
	}
}

// TestRestoreIsByteIdentical crashes a run at every step and phase,
// restores the checkpoint the runtime would (the newest one stored), and
// replays the batches after it, as the sources would: the output must be
// byte-identical to a run without crashes.
func TestRestoreIsByteIdentical(t *testing.T) {
	const batches = 5
	for _, options := range []string{headerCSV, "format: json", headerCSV + "\nappend: true"} {
		dir := t.TempDir()
		ref := filepath.Join(dir, "ref.csv")
		s := open(t, ref, options, connector.Append)
		for i := range batches {
			write(t, s, numbered(i))
			commit(t, s, checkpoint(t, s))
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := readFile(t, ref)

		// phase: where the crash happens in step k (after batch k is
		// written). stored: whether checkpoint k was stored before it.
		type crashPoint struct {
			phase  string
			stored bool
		}
		points := []crashPoint{
			{"written", false}, {"flushed", false}, {"snapshot", false},
			{"snapshot", true}, {"half-published", true}, {"committed", true},
		}
		for k := range batches {
			for _, cp := range points {
				name := fmt.Sprintf("%s/step %d %s stored=%v", options, k, cp.phase, cp.stored)
				if k == 0 && !cp.stored && strings.Contains(options, "append") {
					// No checkpoint to restore: the restarted run appends
					// the same rows again, as it must (it cannot know
					// what the file held before the first run).
					continue
				}
				t.Run(name, func(t *testing.T) {
					path := filepath.Join(t.TempDir(), "ref.csv")
					s := open(t, path, options, connector.Append)
					var stored []byte // the newest stored checkpoint
					resume := 0       // the batch the sources resume at
					for i := range k {
						write(t, s, numbered(i))
						stored = checkpoint(t, s)
						commit(t, s, stored)
						resume = i + 1
					}
					write(t, s, numbered(k))
					switch cp.phase {
					case "flushed":
						if err := s.Flush(context.Background()); err != nil {
							t.Fatal(err)
						}
					case "snapshot", "half-published", "committed":
						st := checkpoint(t, s)
						if cp.stored {
							stored, resume = st, k+1
						}
						switch cp.phase {
						case "committed":
							commit(t, s, st)
						case "half-published":
							halfPublish(t, s, st)
						}
					}
					crash(s)

					// Restarted: restore, replay, checkpoint as before.
					s, err := restoreSink(t, path, options, stored)
					if err != nil {
						t.Fatal(err)
					}
					if got := parts(t, path); len(got) != 0 {
						t.Errorf("in-progress files after the restore: %v", got)
					}
					for i := resume; i < batches; i++ {
						write(t, s, numbered(i))
						commit(t, s, checkpoint(t, s))
					}
					if err := s.Close(context.Background()); err != nil {
						t.Fatal(err)
					}
					if got := readFile(t, path); got != want {
						t.Errorf("output differs from the run without a crash:\n%s\nwant:\n%s", got, want)
					}
				})
			}
		}
	}
}

// halfPublish appends half of the first part st names, if any, to the
// output, as a Commit killed midway would have.
func halfPublish(t *testing.T, s *Sink, st []byte) {
	t.Helper()
	p, err := s.decodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Parts) == 0 {
		// The first checkpoint: its rows went to the output directly.
		return
	}
	q := p.Parts[0]
	data, err := os.ReadFile(filepath.Join(filepath.Dir(s.path), q.Name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.out.WriteAt(data[:len(data)/2], q.Off); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreTwice: a run restored from a checkpoint crashes again before
// its next one; the second restore from the same checkpoint still gives
// the output of a run without crashes, though the first restarted run
// wrote different rows after the checkpoint.
func TestRestoreTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.csv")
	s := open(t, path, headerCSV, connector.Append)
	write(t, s, numbered(0))
	st := checkpoint(t, s)
	write(t, s, numbered(1))
	checkpoint(t, s) // not stored
	crash(s)

	s, err := restoreSink(t, path, headerCSV, st)
	if err != nil {
		t.Fatal(err)
	}
	write(t, s, numbered(7))
	// Close publishes the rows written since the checkpoint.
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err = restoreSink(t, path, headerCSV, st)
	if err != nil {
		t.Fatal(err)
	}
	write(t, s, numbered(1))
	commit(t, s, checkpoint(t, s))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "id,cnt\nb0-a,0\nb0-b,0\nb0-c,0\nb1-a,1\nb1-b,10\nb1-c,100\n"
	if got := readFile(t, path); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

func TestFreshStartRemovesOldParts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	stray := filepath.Join(dir, ".out.csv.part-0123-4.inprogress")
	other := filepath.Join(dir, ".other.csv.part-0123-4.inprogress")
	for _, p := range []string{stray, other} {
		if err := os.WriteFile(p, []byte("x,1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	open(t, path, "", connector.Append)
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("a part of an earlier run survived Open: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a part of another output was removed: %v", err)
	}
}

func TestRestoreErrors(t *testing.T) {
	// setup leaves a crashed run with one checkpoint committed and one
	// pending, and returns the output and the pending state.
	setup := func(t *testing.T) (string, []byte) {
		path := filepath.Join(t.TempDir(), "out.csv")
		s := open(t, path, headerCSV, connector.Append)
		write(t, s, numbered(0))
		commit(t, s, checkpoint(t, s))
		write(t, s, numbered(1))
		pending := checkpoint(t, s)
		crash(s)
		return path, pending
	}
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string, pending []byte)
		state   string // %[1]q is the output's path; empty for pending
		want    string
	}{{
		name:  "another output",
		state: `{"v":1,"path":"elsewhere.csv","size":0}`,
		want:  "the checkpoint was taken writing elsewhere.csv",
	}, {
		name:  "not a state",
		state: `{"v":1,"offset":3}`,
		want:  "is not a file sink state",
	}, {
		name:  "a part outside the directory",
		state: `{"v":1,"path":%[1]q,"size":4,"parts":[{"name":"../.out.csv.part-1-1.inprogress","offset":0,"length":4}]}`,
		want:  "is not an in-progress file of",
	}, {
		name:  "parts short of the size",
		state: `{"v":1,"path":%[1]q,"size":9,"parts":[{"name":".out.csv.part-1-1.inprogress","offset":4,"length":4}]}`,
		want:  "the parts end at 8, not at size 9",
	}, {
		name: "output shortened outside etld",
		prepare: func(t *testing.T, path string, _ []byte) {
			if err := os.Truncate(path, 3); err != nil {
				t.Fatal(err)
			}
		},
		want: "it was changed outside etld",
	}, {
		name: "part gone",
		prepare: func(t *testing.T, path string, pending []byte) {
			s := &Sink{path: path}
			p, err := s.decodeState(pending)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(filepath.Dir(path), p.Parts[0].Name)); err != nil {
				t.Fatal(err)
			}
		},
		want: "is gone: the output cannot be completed",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, pending := setup(t)
			if tt.prepare != nil {
				tt.prepare(t, path, pending)
			}
			st := pending
			if strings.Contains(tt.state, "%[1]q") {
				st = []byte(fmt.Sprintf(tt.state, path))
			} else if tt.state != "" {
				st = []byte(tt.state)
			}
			s, err := restoreSink(t, path, headerCSV, st)
			if err == nil {
				s.Close(context.Background())
				t.Fatalf("restored %s", tt.state)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
		})
	}
}

func FuzzDecodeState(f *testing.F) {
	f.Add([]byte(`{"v":1,"path":"out.csv","size":0}`))
	f.Add([]byte(`{"v":1,"path":"out.csv","size":10,"parts":[{"name":".out.csv.part-ab-0.inprogress","offset":4,"length":6}]}`))
	f.Add([]byte(`{"v":1,"path":"out.csv","size":-1}`))
	f.Add([]byte(`{"v":1,"path":"out.csv","size":9223372036854775807,"parts":[{"name":".out.csv.part-ab-0.inprogress","offset":9223372036854775807,"length":1}]}`))
	s := &Sink{path: "out.csv"}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := s.decodeState(data)
		if err != nil {
			return
		}
		end := p.Size
		for i := len(p.Parts) - 1; i >= 0; i-- {
			q := p.Parts[i]
			if q.Len <= 0 || q.Off+q.Len != end || q.Name != filepath.Base(q.Name) {
				t.Fatalf("accepted a bad part %+v in %q", q, data)
			}
			end = q.Off
		}
		if end < 0 {
			t.Fatalf("accepted a negative offset in %q", data)
		}
	})
}

// TestClosePublishesSeveralPendingParts: Close publishes every part of
// checkpoints not yet committed, however many. Publishing them once went
// over the pending list while deleting from it, and then tried to delete
// a part with no name: the output's directory.
func TestClosePublishesSeveralPendingParts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.csv")
	s := open(t, path, headerCSV, connector.Append)
	write(t, s, numbered(0))
	commit(t, s, checkpoint(t, s))
	for i := 1; i <= 3; i++ {
		write(t, s, numbered(i))
		checkpoint(t, s) // stored, its commit not yet run
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "id,cnt\n"
	for i := range 4 {
		want += fmt.Sprintf("b%d-a,%d\nb%d-b,%d\nb%d-c,%d\n", i, i, i, 10*i, i, 100*i)
	}
	if got := readFile(t, path); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	if p := parts(t, path); len(p) != 0 {
		t.Errorf("in-progress files left: %v", p)
	}
}

// A resumable run (a state directory) writes even its first rows through
// a part; killed after its first checkpoint was stored and before the
// commit published it, the output is empty and the restore renames the
// part onto it, reopening the output. Open must then go on with the
// reopened file (it sought the closed one: "file already closed").
func TestRestoreRenamesFirstPartOfResumableRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.csv")
	resumable := func(st []byte) *Sink {
		t.Helper()
		s, err := build(t, "path: "+path+"\nformat: csv")
		if err != nil {
			t.Fatal(err)
		}
		s.SetRun(connector.RunInfo{Resumable: true})
		if err := s.Bind(connector.SinkInput{Schema: statsSchema, Mode: connector.Append}); err != nil {
			t.Fatal(err)
		}
		if st != nil {
			if err := s.Restore(st); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := resumable(nil)
	write(t, s, numbered(0))
	st := checkpoint(t, s) // stored; its commit never comes
	crash(s)
	if got := readFile(t, path); got != "" {
		t.Fatalf("output before any commit holds %q", got)
	}

	s = resumable(st)
	write(t, s, numbered(1))
	commit(t, s, checkpoint(t, s))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "b0-a,0\nb0-b,0\nb0-c,0\nb1-a,1\nb1-b,10\nb1-c,100\n"
	if got := readFile(t, path); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}
