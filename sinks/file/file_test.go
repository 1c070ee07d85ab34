package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

var statsSchema = row.NewSchema(
	row.Field{Name: "id", Type: row.Of(row.String)},
	row.Field{Name: "cnt", Type: row.Of(row.BigInt)},
)

// build makes a sink the way the runtime does, from the options of a sink
// entry (YAML, without name, type and from).
func build(t *testing.T, options string) (*Sink, error) {
	t.Helper()
	sink, err := buildAny(t, options)
	if err != nil {
		return nil, err
	}
	return sink.(*Sink), nil
}

// buildAny builds the file sink the options make: a *Sink or a *DirSink.
func buildAny(t *testing.T, options string) (connector.Sink, error) {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(options), "\n") {
		b.WriteString("\n    " + line)
	}
	doc := "version: 1\nname: t\nsources:\n  - {name: s, type: datagen}\nsinks:\n  - name: out\n    type: file\n    from: s" + b.String() + "\n"
	pl, err := spec.Parse("p.yaml", []byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("pipeline file: %v\n%s", err, doc)
	}
	r := connector.NewRegistry()
	formats.Register(r)
	Register(r)
	return r.NewSink("p.yaml", pl.Sinks[0], connector.SinkEnv{Name: "out", Formats: r})
}

// open builds, binds and opens a sink writing path.
func open(t *testing.T, path, options string, mode connector.Mode) *Sink {
	t.Helper()
	s, err := build(t, "path: "+path+"\n"+options)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(connector.SinkInput{Schema: statsSchema, Mode: mode}); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func batch(changes ...row.Change) *row.Batch {
	b := row.NewBatch(len(changes), statsSchema.Len())
	for _, c := range changes {
		r := b.NewRow()
		copy(r, c.Row)
		b.Append(c.Kind, r)
	}
	return b
}

func change(k row.Kind, id string, cnt int64) row.Change {
	return row.Change{Kind: k, Row: row.Row{row.StringValue(id), row.BigIntValue(cnt)}}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestWrite(t *testing.T) {
	inserts := []row.Change{change(row.Insert, "a", 1), change(row.Insert, "b,c", 2)}
	updates := []row.Change{change(row.Insert, "a", 1), change(row.UpdateBefore, "a", 1), change(row.UpdateAfter, "a", 2), change(row.Delete, "a", 2)}
	tests := []struct {
		name    string
		options string
		mode    connector.Mode
		changes []row.Change
		want    string
	}{{
		name:    "csv by default",
		mode:    connector.Append,
		changes: inserts,
		want:    "a,1\n\"b,c\",2\n",
	}, {
		name:    "csv header",
		options: "format: {type: csv, header: true}",
		mode:    connector.Append,
		changes: inserts,
		want:    "id,cnt\na,1\n\"b,c\",2\n",
	}, {
		name:    "header of an empty output",
		options: "format: {type: csv, header: true}",
		mode:    connector.Append,
		want:    "id,cnt\n",
	}, {
		name:    "json",
		options: "format: json",
		mode:    connector.Append,
		changes: inserts,
		want:    "{\"id\":\"a\",\"cnt\":1}\n{\"id\":\"b,c\",\"cnt\":2}\n",
	}, {
		name:    "retract csv",
		options: "format: {type: csv, header: true}",
		mode:    connector.Retract,
		changes: updates,
		want:    "op,id,cnt\n+I,a,1\n-U,a,1\n+U,a,2\n-D,a,2\n",
	}, {
		name:    "retract json",
		options: "format: json",
		mode:    connector.Retract,
		changes: updates[1:3],
		want:    "{\"op\":\"-U\",\"id\":\"a\",\"cnt\":1}\n{\"op\":\"+U\",\"id\":\"a\",\"cnt\":2}\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.csv")
			s := open(t, path, tt.options, tt.mode)
			if err := s.Write(context.Background(), batch(tt.changes...)); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			// Flush made it durable: the file holds it before Close.
			if got := readFile(t, path); got != tt.want {
				t.Errorf("after Flush the file holds\n%q\nwant\n%q", got, tt.want)
			}
			if got := s.Bytes(); got != int64(len(tt.want)) {
				t.Errorf("Bytes %d, want %d", got, len(tt.want))
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); got != tt.want {
				t.Errorf("after Close the file holds %q, want %q", got, tt.want)
			}
		})
	}
}

func TestExistingFile(t *testing.T) {
	tests := []struct {
		name     string
		existing *string // nil: no file
		options  string
		want     string
	}{
		{"truncate", ptr("id,cnt\nold,0\n"), "", "id,cnt\nnew,1\n"},
		{"append", ptr("id,cnt\nold,0\n"), "append: true", "id,cnt\nold,0\nnew,1\n"},
		{"append to an empty file", ptr(""), "append: true", "id,cnt\nnew,1\n"},
		{"append to a new file", nil, "append: true", "id,cnt\nnew,1\n"},
		{"new file in new directories", nil, "", "id,cnt\nnew,1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a", "b", "out.csv")
			if tt.existing != nil {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(*tt.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s := open(t, path, "format: {type: csv, header: true}\n"+tt.options, connector.Append)
			if err := s.Write(context.Background(), batch(change(row.Insert, "new", 1))); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); got != tt.want {
				t.Errorf("file holds %q, want %q", got, tt.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestBind(t *testing.T) {
	withOp := row.NewSchema(row.Field{Name: "OP", Type: row.Of(row.String)})
	tests := []struct {
		name    string
		options string
		in      connector.SinkInput
		wantErr string
	}{
		{"append", "", connector.SinkInput{Schema: statsSchema, Mode: connector.Append}, ""},
		{"retract", "", connector.SinkInput{Schema: statsSchema, Mode: connector.Retract}, ""},
		{"upsert", "", connector.SinkInput{Schema: statsSchema, Mode: connector.Upsert, Key: []int{0}}, "cannot run in upsert mode"},
		{"no mode", "", connector.SinkInput{Schema: statsSchema}, "cannot run in auto mode"},
		{"op column taken", "", connector.SinkInput{Schema: withOp, Mode: connector.Retract}, `a column "op", and the input has one already`},
		{"op column in append mode", "", connector.SinkInput{Schema: withOp, Mode: connector.Append}, ""},
		{"format refuses the schema", "format: raw", connector.SinkInput{Schema: statsSchema, Mode: connector.Append}, "p.yaml:10:13: sinks[0].format: the raw format needs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := build(t, "path: out.csv\n"+tt.options)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Bind(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Bind: %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	s, err := build(t, "path: out.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := connector.Capabilities{Append: true, Retract: true}
	if got := s.Capabilities(); got != want {
		t.Errorf("capabilities %+v, want %+v", got, want)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		options string
		wantErr string
	}{
		{"format: csv", "p.yaml:6:5: sinks[0].path: missing required key"},
		{"path: ''", "p.yaml:9:11: sinks[0].path: must name the file to write"},
		{"path: a.csv\nappend: maybe", `p.yaml:10:13: sinks[0].append: want true or false, got "maybe"`},
		{"path: a.csv\ntruncate: true", "p.yaml:10:5: sinks[0].truncate: unknown key"},
	}
	for _, tt := range tests {
		_, err := build(t, tt.options)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%q: error %v, want %q", tt.options, err, tt.wantErr)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name    string
		changes []row.Change
		wantErr []string
		want    string // file content after Close
	}{{
		name:    "update in append mode",
		changes: []row.Change{change(row.Insert, "a", 1), change(row.UpdateAfter, "a", 2)},
		wantErr: []string{"out.csv: change 1", "+U in append mode", "mode: retract"},
		want:    "a,1\n",
	}, {
		name:    "row the encoder refuses",
		changes: []row.Change{change(row.Insert, "a", 1), {Kind: row.Insert, Row: row.Row{row.StringValue("x")}}},
		wantErr: []string{"out.csv: change 1", "+I[x]"},
		want:    "a,1\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.csv")
			s := open(t, path, "", connector.Append)
			b := &row.Batch{Changes: tt.changes}
			err := s.Write(context.Background(), b)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); got != tt.want {
				t.Errorf("file holds %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLargeOutput writes past the buffer: full chunks reach the file as
// Write goes, the rest with Flush.
func TestLargeOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.csv")
	s := open(t, path, "", connector.Append)
	var want strings.Builder
	const n = 100000
	for i := 0; i < n; i += 1000 {
		b := row.NewBatch(1000, 2)
		for j := i; j < i+1000; j++ {
			r := b.NewRow()
			r[0], r[1] = row.StringValue(fmt.Sprintf("sensor-%d", j)), row.BigIntValue(int64(j))
			b.Append(row.Insert, r)
			fmt.Fprintf(&want, "sensor-%d,%d\n", j, j)
		}
		if err := s.Write(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(readFile(t, path)); got == 0 || got >= want.Len() {
		t.Errorf("before Flush the file holds %d bytes, want some of %d", got, want.Len())
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != want.String() {
		t.Errorf("file holds %d bytes, want %d", len(got), want.Len())
	}
	if got := s.Bytes(); got != int64(want.Len()) {
		t.Errorf("Bytes %d, want %d", got, want.Len())
	}
}

// TestFailedWriteKeepsData: a write that fails (a full disk) loses
// nothing: what was not written is written by a later Flush.
func TestFailedWriteKeepsData(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full to fill:", err)
	}
	s := open(t, "/dev/full", "format: {type: csv, header: true}", connector.Append)
	if err := s.Write(context.Background(), batch(change(row.Insert, "a", 1))); err != nil {
		t.Fatal(err)
	}
	err := s.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "write /dev/full: no space left") {
		t.Fatalf("Flush to a full disk: %v", err)
	}
	// The disk frees up: the same sink, now over a file with room.
	path := filepath.Join(t.TempDir(), "out.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	s.f.Close()
	s.f = f
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), "id,cnt\na,1\n"; got != want {
		t.Errorf("file holds %q, want %q", got, want)
	}
}

func TestLifecycleErrors(t *testing.T) {
	dir := t.TempDir()
	s, err := build(t, "path: "+dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(context.Background()); err == nil || !strings.Contains(err.Error(), "before bind") {
		t.Errorf("Open before Bind: %v", err)
	}
	if err := s.Bind(connector.SinkInput{Schema: statsSchema, Mode: connector.Append}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), batch()); err == nil {
		t.Error("Write before Open succeeded")
	}
	err = s.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Open of a directory: %v, want an error naming it", err)
	}
	for i := range 2 {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close %d after a failed Open: %v", i, err)
		}
	}
	if err := s.Flush(context.Background()); err == nil {
		t.Error("Flush after Close succeeded")
	}
}

func TestNewEntries(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "old.csv"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want []string
	}{
		{"old.csv", nil},
		{"new.csv", []string{"."}},
		{"a/b/new.csv", []string{"a/b", "a", "."}},
	}
	for _, tt := range tests {
		got, err := newEntries(filepath.Join(dir, tt.path))
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i], err = filepath.Rel(dir, got[i]); err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: %v, want %v", tt.path, got, tt.want)
		}
	}
	// Open and Flush sync them all and forget them.
	s := open(t, filepath.Join(dir, "x", "y", "out.csv"), "", connector.Append)
	if len(s.syncDirs) != 3 {
		t.Fatalf("Open recorded %v, want 3 directories", s.syncDirs)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s.syncDirs) != 0 {
		t.Errorf("after Flush %v are still to sync", s.syncDirs)
	}
}
