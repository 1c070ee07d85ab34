package file

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
)

// startSink builds a sink over path as the runtime starts one: Restore
// when st is not nil, SetRun, then Open. It logs into log.
func startSink(t *testing.T, path, options string, run connector.RunInfo, st []byte, log *testenv.Buffer) (*Sink, error) {
	t.Helper()
	s, err := build(t, "path: "+path+"\n"+options)
	if err != nil {
		t.Fatal(err)
	}
	s.logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := s.Bind(connector.SinkInput{Schema: statsSchema, Mode: connector.Append}); err != nil {
		t.Fatal(err)
	}
	if st != nil {
		if err := s.Restore(st); err != nil {
			t.Fatal(err)
		}
	}
	s.SetRun(run)
	if err := s.Open(context.Background()); err != nil {
		s.Close(context.Background())
		return nil, err
	}
	return s, nil
}

// TestExistingOutput: a fresh start of a run with a state directory never
// destroys a file with data it was not asked to; a one-shot run truncates as
// a shell's > does, and says so.
func TestExistingOutput(t *testing.T) {
	const old = "old,1\nold,2\n"
	resumable := connector.RunInfo{Resumable: true}
	oneShot := connector.RunInfo{}
	tests := []struct {
		name     string
		existing string // "" for no file
		options  string
		run      connector.RunInfo
		wantErr  []string // substrings of Open's error
		want     string   // the file after a checkpoint of one batch and Close
		wantLog  string   // a substring of the log, if any
	}{{
		name:     "state dir refuses a file with data",
		existing: old,
		run:      resumable,
		wantErr:  []string{"out.csv", "holds 12 bytes", "no checkpoint of this pipeline covers", "overwrite: true", "append: true"},
	}, {
		name:     "state dir with overwrite truncates",
		existing: old,
		options:  "overwrite: true",
		run:      resumable,
		want:     "b1-a,1\nb1-b,10\nb1-c,100\n",
		wantLog:  "truncating the existing file",
	}, {
		name:     "state dir with append keeps the data",
		existing: old,
		options:  "append: true",
		run:      resumable,
		want:     old + "b1-a,1\nb1-b,10\nb1-c,100\n",
	}, {
		name:     "state dir takes an empty file",
		existing: "",
		run:      resumable,
		want:     "b1-a,1\nb1-b,10\nb1-c,100\n",
	}, {
		name: "state dir creates the file",
		run:  resumable,
		want: "b1-a,1\nb1-b,10\nb1-c,100\n",
	}, {
		name:     "one-shot truncates and logs it",
		existing: old,
		run:      oneShot,
		want:     "b1-a,1\nb1-b,10\nb1-c,100\n",
		wantLog:  "truncating the existing file",
	}, {
		name:     "one-shot with append keeps the data",
		existing: old,
		options:  "append: true",
		run:      oneShot,
		want:     old + "b1-a,1\nb1-b,10\nb1-c,100\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.csv")
			if tt.name != "state dir creates the file" {
				if err := os.WriteFile(path, []byte(tt.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var log testenv.Buffer
			s, err := startSink(t, path, tt.options, tt.run, nil, &log)
			if tt.wantErr != nil {
				if err == nil {
					s.Close(context.Background())
					t.Fatalf("Open succeeded, want an error containing %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Open error %q does not contain %q", err, w)
					}
				}
				// Opening again meets the same file: retrying cannot help.
				if !retry.IsPermanent(err) {
					t.Errorf("Open error %q is not marked permanent", err)
				}
				if got := readFile(t, path); got != tt.existing {
					t.Errorf("the refused file now holds %q, want it untouched: %q", got, tt.existing)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			write(t, s, numbered(1))
			commit(t, s, checkpoint(t, s))
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); got != tt.want {
				t.Errorf("file holds %q, want %q", got, tt.want)
			}
			if tt.wantLog != "" && !strings.Contains(log.String(), tt.wantLog) {
				t.Errorf("log %q does not contain %q", log.String(), tt.wantLog)
			}
			if tt.wantLog == "" && strings.Contains(log.String(), "truncating") {
				t.Errorf("log %q tells of a truncation that did not happen", log.String())
			}
		})
	}
}

// TestExistingOutputCoveredByCheckpoint: a file this sink's own restored
// checkpoint covers is resumed, not refused, in a run with a state dir.
func TestExistingOutputCoveredByCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.csv")
	var log testenv.Buffer
	s, err := startSink(t, path, "", connector.RunInfo{Resumable: true}, nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	write(t, s, numbered(1))
	st := checkpoint(t, s)
	commit(t, s, st)
	write(t, s, numbered(2)) // after the checkpoint: cut away on restore
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	crash(s)

	s, err = startSink(t, path, "", connector.RunInfo{Resumable: true, Restored: true}, st, &log)
	if err != nil {
		t.Fatalf("a file the restored checkpoint covers was refused: %v", err)
	}
	write(t, s, numbered(3))
	commit(t, s, checkpoint(t, s))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), "b1-a,1\nb1-b,10\nb1-c,100\nb3-a,3\nb3-b,30\nb3-c,300\n"; got != want {
		t.Errorf("file holds %q, want %q", got, want)
	}
}

// TestResumableStopBeforeFirstCheckpoint: with a state dir, rows reach
// the file only through a checkpoint, so that a run that stops (or
// crashes) before its first one leaves an empty file, which the next
// fresh start takes, rather than one it would have to refuse.
func TestResumableStopBeforeFirstCheckpoint(t *testing.T) {
	for _, stop := range []string{"close", "crash"} {
		t.Run(stop, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.csv")
			var log testenv.Buffer
			s, err := startSink(t, path, headerCSV, connector.RunInfo{Resumable: true}, nil, &log)
			if err != nil {
				t.Fatal(err)
			}
			write(t, s, numbered(1))
			if err := s.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); got != "" {
				t.Errorf("before any checkpoint the file holds %q, want nothing", got)
			}
			if stop == "close" {
				if err := s.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(log.String(), "before its first checkpoint") {
					t.Errorf("log %q does not say why nothing was published", log.String())
				}
			} else {
				crash(s)
			}
			if got := readFile(t, path); got != "" {
				t.Errorf("after the %s the file holds %q, want nothing", stop, got)
			}
			s, err = startSink(t, path, headerCSV, connector.RunInfo{Resumable: true}, nil, &log)
			if err != nil {
				t.Fatalf("the next run refused the file the first left: %v", err)
			}
			write(t, s, numbered(1))
			commit(t, s, checkpoint(t, s))
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got, want := readFile(t, path), "id,cnt\nb1-a,1\nb1-b,10\nb1-c,100\n"; got != want {
				t.Errorf("file holds %q, want %q", got, want)
			}
			if p := parts(t, path); len(p) != 0 {
				t.Errorf("in-progress files left: %v", p)
			}
		})
	}
}

func TestOverwriteContradictsAppend(t *testing.T) {
	_, err := build(t, "path: out.csv\nappend: true\noverwrite: true")
	if err == nil || !strings.Contains(err.Error(), "overwrite") || !strings.Contains(err.Error(), "append: true") {
		t.Fatalf("got %v, want an error on overwrite naming append: true", err)
	}
}
