package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

const sensorSchema = "[id STRING, ts BIGINT, temperature DOUBLE]"

// harness builds a file source the way the runtime does: a pipeline file,
// the registry, an on_error policy.
type harness struct {
	t       *testing.T
	dir     string
	rejects []connector.BadRecord
	// skip makes Reject skip records rather than fail.
	skip bool
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, dir: t.TempDir()}
}

// write creates name in the harness dir and returns its path.
func (h *harness) write(name, content string) string {
	h.t.Helper()
	path := filepath.Join(h.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return path
}

// build makes a source from the options of a source entry (YAML, without
// name, type and schema) over schema.
func (h *harness) build(options, schema string) (*Source, error) {
	h.t.Helper()
	doc := fmt.Sprintf("version: 1\nname: t\nsources:\n  - name: s\n    type: file\n    schema: %s\n%s\nsinks:\n  - {name: out, type: print, from: s}\n",
		schema, indent(options))
	pl, err := spec.Parse("p.yaml", []byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		h.t.Fatalf("pipeline file: %v\n%s", err, doc)
	}
	r := connector.NewRegistry()
	formats.Register(r)
	Register(r)
	var fields []row.Field
	for _, c := range pl.Sources[0].Schema {
		fields = append(fields, row.Field{Name: c.Name, Type: c.Type})
	}
	env := connector.SourceEnv{
		Name:    "s",
		Schema:  row.NewSchema(fields...),
		Formats: r,
		Reject: func(b connector.BadRecord) error {
			h.rejects = append(h.rejects, b)
			if h.skip {
				return nil
			}
			return b
		},
	}
	src, err := r.NewSource("p.yaml", pl.Sources[0], env)
	if err != nil {
		return nil, err
	}
	return src.(*Source), nil
}

func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		b.WriteString("    " + line + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// mustBuild is build that fails the test on an error.
func (h *harness) mustBuild(options, schema string) *Source {
	h.t.Helper()
	s, err := h.build(options, schema)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *harness) open(options, schema string) *Source {
	h.t.Helper()
	s := h.mustBuild(options, schema)
	if err := s.Open(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// readAll reads s to the end in batches of max: every change in print
// form, and the first error other than io.EOF.
func readAll(s *Source, max int) ([]string, error) {
	cs, err := conntest.Drain(context.Background(), s, max)
	return conntest.Printed(cs), err
}

func TestRead(t *testing.T) {
	tests := []struct {
		name    string
		content string
		format  string
		schema  string
		max     int // 1 when 0
		want    []string
	}{{
		name:    "csv",
		content: "s1,1,20.5\ns2,2,-3\n",
		want:    []string{"+I[s1, 1, 20.5]", "+I[s2, 2, -3.0]"},
	}, {
		name:    "csv header",
		content: "id,ts,temperature\ns1,1,20.5\n",
		format:  "{type: csv, header: true}",
		want:    []string{"+I[s1, 1, 20.5]"},
	}, {
		name:    "header after blank lines",
		content: "\n\nid,ts,temperature\ns1,1,20.5\n",
		format:  "{type: csv, header: true}",
		want:    []string{"+I[s1, 1, 20.5]"},
	}, {
		name:    "crlf",
		content: "s1,1,20.5\r\ns2,2,21\r\n",
		want:    []string{"+I[s1, 1, 20.5]", "+I[s2, 2, 21.0]"},
	}, {
		name:    "no final newline",
		content: "s1,1,20.5\ns2,2,21",
		want:    []string{"+I[s1, 1, 20.5]", "+I[s2, 2, 21.0]"},
	}, {
		name:    "crlf without final newline",
		content: "s1,1,20.5\r\ns2,2,21\r",
		want:    []string{"+I[s1, 1, 20.5]", "+I[s2, 2, 21.0]"},
	}, {
		name:    "quoted newline",
		content: "\"s\n1\",1,20.5\ns2,2,21\n",
		want:    []string{"+I[s\n1, 1, 20.5]", "+I[s2, 2, 21.0]"},
	}, {
		name:    "blank lines skipped",
		content: "\ns1,1,20.5\n\r\n\ns2,2,21\n\n",
		want:    []string{"+I[s1, 1, 20.5]", "+I[s2, 2, 21.0]"},
	}, {
		name:    "empty file",
		content: "",
		want:    nil,
	}, {
		name:    "null fields",
		content: "s1,,\n",
		format:  `{type: csv, null_literal: ""}`,
		want:    []string{"+I[s1, null, null]"},
	}, {
		name:    "ignore_parse_errors: empty fields of numbers are NULL",
		content: ",,\n",
		format:  `{type: csv, ignore_parse_errors: true}`,
		want:    []string{"+I[, null, null]"},
	}, {
		name:    "one column: a blank line is a NULL with null_literal \"\"",
		content: "a\n\nb\n",
		format:  `{type: csv, null_literal: ""}`,
		schema:  "[v STRING]",
		want:    []string{"+I[a]", "+I[null]", "+I[b]"},
	}, {
		name:    "one column: a blank line is the empty string, as in Flink",
		content: "a\n\nb\n",
		schema:  "[v STRING]",
		want:    []string{"+I[a]", "+I[]", "+I[b]"},
	}, {
		name:    "comments",
		content: "#id,\"ts\n#\"\ns1,1,2\n",
		format:  `{type: csv, allow_comments: true}`,
		want:    []string{"+I[s1, 1, 2.0]"},
	}, {
		name:    "json lines",
		content: "{\"id\": \"s1\", \"ts\": 1}\r\n\n{\"temperature\": 3.5, \"ts\": 2}",
		format:  "json",
		want:    []string{"+I[s1, 1, null]", "+I[null, 2, 3.5]"},
	}, {
		name:    "raw keeps blank lines",
		content: "a\n\n b \r\n\nlast",
		format:  "raw",
		schema:  "[line STRING]",
		want:    []string{"+I[a]", "+I[]", "+I[ b ]", "+I[]", "+I[last]"},
	}, {
		name:    "debezium updates",
		content: `{"before": null, "after": {"id": "s1", "ts": 1}, "op": "c"}` + "\n" + `{"before": {"id": "s1", "ts": 1}, "after": {"id": "s1", "ts": 2}, "op": "u"}`,
		format:  "debezium-json",
		max:     2,
		want:    []string{"+I[s1, 1, null]", "-U[s1, 1, null]", "+U[s1, 2, null]"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			path := h.write("in.txt", tt.content)
			opts := "path: " + path
			if tt.format != "" {
				opts += "\nformat: " + tt.format
			}
			schema := tt.schema
			if schema == "" {
				schema = sensorSchema
			}
			got, err := readAll(h.open(opts, schema), max(tt.max, 1))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestReadFinalBatchComesWithEOF(t *testing.T) {
	h := newHarness(t)
	s := h.open("path: "+h.write("a.csv", "s1,1,1\ns2,2,2\ns3,3,3\n"), sensorSchema)
	b, err := s.Read(context.Background(), 2)
	if err != nil || b.Len() != 2 {
		t.Fatalf("first Read: %v changes, %v; want 2, nil", b.Len(), err)
	}
	b, err = s.Read(context.Background(), 2)
	if err != io.EOF || b == nil || b.Len() != 1 {
		t.Fatalf("second Read: %v, %v; want the last change with io.EOF", b, err)
	}
	if b, err = s.Read(context.Background(), 2); err != io.EOF || b != nil {
		t.Fatalf("Read after the end: %v, %v; want nil, io.EOF", b, err)
	}
}

func TestBadRecords(t *testing.T) {
	// Line 4 holds a record spanning lines 4-5; the bad record is on 6.
	content := "id,ts,temperature\ns1,1,20.5\n\n\"s\n2\",2,21\ns3,3,hot\ns4,4,22\n"
	tests := []struct {
		name    string
		skip    bool
		wantErr []string
		want    []string
	}{{
		name:    "fail",
		wantErr: []string{"in.csv:6", "column temperature", `"hot"`},
		want:    []string{"+I[s1, 1, 20.5]", "+I[s\n2, 2, 21.0]"},
	}, {
		name: "skip",
		skip: true,
		want: []string{"+I[s1, 1, 20.5]", "+I[s\n2, 2, 21.0]", "+I[s4, 4, 22.0]"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.skip = tt.skip
			path := h.write("in.csv", content)
			s := h.open("path: "+path+"\nformat: {type: csv, header: true}", sensorSchema)
			got, err := readAll(s, 10)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("rows %q, want %q", got, tt.want)
			}
			if len(h.rejects) != 1 {
				t.Fatalf("%d records rejected, want 1", len(h.rejects))
			}
			bad := h.rejects[0]
			if bad.Position != path+":6" || string(bad.Raw) != "s3,3,hot" {
				t.Errorf("rejected %q at %q, want %q at %q", bad.Raw, bad.Position, "s3,3,hot", path+":6")
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			var br connector.BadRecord
			if !errors.As(err, &br) {
				t.Errorf("error %v does not wrap the BadRecord", err)
			}
			if _, again := s.Read(context.Background(), 10); again == nil || again.Error() != err.Error() {
				t.Errorf("Read after a failure: %v, want the same error", again)
			}
		})
	}
}

func TestFatalErrors(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		path    string // relative to the harness dir
		options string
		wantErr []string
	}{{
		name:    "missing file",
		path:    "nope.csv",
		wantErr: []string{"nope.csv", "no such file"},
	}, {
		name:    "glob matches nothing",
		files:   map[string]string{"a.txt": ""},
		path:    "*.csv",
		wantErr: []string{"no file matches", "*.csv"},
	}, {
		name:    "directory",
		files:   map[string]string{"d/a.csv": ""},
		path:    "d",
		wantErr: []string{"is a directory", "d/*.csv"},
	}, {
		name:    "unclosed quote",
		files:   map[string]string{"a.csv": "s1,1,1\n\"s2,2,2\ns3,3,3\n"},
		path:    "a.csv",
		wantErr: []string{"a.csv:2", "column id", "no closing quote"},
	}, {
		name:    "bad header",
		files:   map[string]string{"a.csv": "\nid,temperature,ts\ns1,1,1\n"},
		path:    "a.csv",
		options: "format: {type: csv, header: true}",
		wantErr: []string{"a.csv:2", "header"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			for name, content := range tt.files {
				h.write(name, content)
			}
			s, err := h.build("path: "+filepath.Join(h.dir, tt.path)+"\n"+tt.options, sensorSchema)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			if err = s.Open(context.Background()); err == nil {
				_, err = readAll(s, 10)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		options string
		wantErr string
	}{
		{"no path", "format: csv", "p.yaml:4:5: sources[0].path: missing required key"},
		{"unknown key", "path: a.csv\ntail: true", "p.yaml:8:5: sources[0].tail: unknown key"},
		{"interval without follow", "path: a.csv\nmonitor_interval: 1s", "sources[0].monitor_interval: applies only with follow: true"},
		{"negative interval", "path: a.csv\nfollow: true\nmonitor_interval: -1s", "sources[0].monitor_interval: duration \"-1s\" is negative"},
		{"bad interval", "path: a.csv\nfollow: true\nmonitor_interval: often", "sources[0].monitor_interval"},
		{"bad glob", "path: 'data/[a.csv'", "p.yaml:7:11: sources[0].path: bad glob"},
		{"unknown format", "path: a.csv\nformat: xml", "p.yaml:8:13: sources[0].format: unknown input format type \"xml\""},
		{"zero max_record_bytes", "path: a.csv\nmax_record_bytes: 0", "p.yaml:8:23: sources[0].max_record_bytes: must be positive"},
		{"huge max_record_bytes", "path: a.csv\nmax_record_bytes: 4294967296", "p.yaml:8:23: sources[0].max_record_bytes: 4294967296 is more than the 1073741824 (1 GiB)"},
		{"max_record_bytes of a line format", "path: a.csv\nformat: json\nmax_record_bytes: 100", "p.yaml:9:23: sources[0].max_record_bytes: applies only to a format whose records span lines (csv)"},
		{"bad format option", "path: a.csv\nformat: {type: csv, headr: true}", "p.yaml:8:25: sources[0].format.headr: unknown key; did you mean \"header\"?"},
		{"directory", "path: data/", "p.yaml:7:11: sources[0].path: \"data/\" names a directory; name its files with a glob such as data/*.csv"},
		{"several at once", "path: 'data/[a.csv'\nmonitor_interval: 1s\nformat: xml",
			"p.yaml:7:11: sources[0].path: bad glob \"data/[a.csv\": syntax error in pattern\n" +
				"p.yaml:8:23: sources[0].monitor_interval: applies only with follow: true\n" +
				"p.yaml:9:13: sources[0].format: unknown input format type \"xml\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newHarness(t).build(tt.options, sensorSchema)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestGlobReadsFilesInNameOrder(t *testing.T) {
	h := newHarness(t)
	h.write("d/b.csv", "id,ts,temperature\nb1,3,1\n")
	h.write("d/a.csv", "id,ts,temperature\na1,1,1\na2,2,1")
	h.write("d/c.csv", "id,ts,temperature\n")
	h.write("d/z.txt", "not csv\n")
	h.write("d/sub.csv/x.csv", "in a directory the glob matches\n")
	s := h.open("path: "+filepath.Join(h.dir, "d", "*.csv")+"\nformat: {type: csv, header: true}", sensorSchema)
	got, err := readAll(s, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := "+I[a1, 1, 1.0]|+I[a2, 2, 1.0]|+I[b1, 3, 1.0]"
	if strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestReadStopsOnCancel(t *testing.T) {
	h := newHarness(t)
	s := h.open("path: "+h.write("a.csv", "s1,1,1\n"), sensorSchema)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Read(ctx, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("Read on a cancelled context: %v, want context.Canceled", err)
	}
}

func TestCloseIsSafe(t *testing.T) {
	h := newHarness(t)
	s, err := h.build("path: "+filepath.Join(h.dir, "missing.csv"), sensorSchema)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("Close before Open: %v", err)
	}
	if err := s.Open(context.Background()); err == nil {
		t.Error("Open of a missing file succeeded")
	}
	for i := range 2 {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close %d after a failed Open: %v", i, err)
		}
	}
	if _, err := s.Read(context.Background(), 1); err == nil || err == io.EOF {
		t.Errorf("Read after Close: %v, want an error", err)
	}
}

// TestUpdatePairsStayTogether: a record's changes never straddle batches,
// so that every position falls between records.
func TestUpdatePairsStayTogether(t *testing.T) {
	h := newHarness(t)
	u := `{"before": {"v": "old"}, "after": {"v": "new"}, "op": "u"}` + "\n"
	s := h.open("path: "+h.write("a.txt", u+u+u)+"\nformat: debezium-json", "[v STRING]")
	var sizes []int
	for {
		b, err := s.Read(context.Background(), 3)
		if b != nil {
			sizes = append(sizes, b.Len())
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(sizes) != "[2 2 2]" {
		t.Errorf("batch sizes %v, want [2 2 2]", sizes)
	}
	// With max 1 a record's two changes still come together.
	s = h.open("path: "+h.write("b.txt", u+u)+"\nformat: debezium-json", "[v STRING]")
	if b, err := s.Read(context.Background(), 1); err != nil || b.Len() != 2 {
		t.Errorf("Read(1) of a two-change record: %v, %v", b, err)
	}
	// So do the six changes of a Canal message updating three rows: a
	// checkpoint's position is always between records.
	canal := `{"data":[{"v":"a2"},{"v":"b2"},{"v":"c2"}],"old":[{"v":"a"},{"v":"b"},{"v":"c"}],"type":"UPDATE"}` + "\n"
	s = h.open("path: "+h.write("c.txt", canal+canal)+"\nformat: canal-json", "[v STRING]")
	if !s.Updating() {
		t.Error("a canal-json file source is not updating")
	}
	if b, err := s.Read(context.Background(), 2); err != nil || b.Len() != 6 ||
		b.Changes[0].String() != "-U[a]" || b.Changes[5].String() != "+U[c2]" {
		t.Errorf("Read(2) of a six-change record: %v, %v", b, err)
	}
	if s = h.open("path: "+h.write("d.csv", "x\n"), "[v STRING]"); s.Updating() {
		t.Error("a csv file source is updating")
	}
}

func TestLargeFile(t *testing.T) {
	h := newHarness(t)
	var sb strings.Builder
	const n = 60000
	long := strings.Repeat("x", 3*bufferSize/2) // one record larger than the buffer
	for i := range n {
		if i == n/2 {
			fmt.Fprintf(&sb, "\"%s\n\",%d,%d.5\n", long, i, i)
			continue
		}
		fmt.Fprintf(&sb, "sensor-%06d,%d,%d.5\r\n", i, i, i)
	}
	path := h.write("big.csv", sb.String())
	s := h.open("path: "+path, sensorSchema)
	var count, sum int64
	for {
		b, err := s.Read(context.Background(), 1000)
		if b != nil {
			for _, c := range b.Changes {
				if c.Row[1].Int64() != count {
					t.Fatalf("row %d has ts %d", count, c.Row[1].Int64())
				}
				if count == n/2 && c.Row[0].Str() != long+"\n" {
					t.Fatalf("long record is %d bytes, want %d", len(c.Row[0].Str()), len(long)+1)
				}
				count++
				sum += int64(len(c.Row[0].Str()))
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if count != n {
		t.Fatalf("read %d rows, want %d", count, n)
	}
	pos, _ := s.Position()
	if want := fmt.Sprintf(`"offset":%d,"line":%d}`, sb.Len(), n+2); !strings.Contains(string(pos), want) {
		t.Errorf("position at the end %s, want %s", pos, want)
	}
}

// TestGlobFileGoneMidway: a matched file deleted before its turn stops the
// source with its name, and the position stays at the end of the one before.
func TestGlobFileGoneMidway(t *testing.T) {
	h := newHarness(t)
	a := h.write("a.csv", "s1,1,1\n")
	b := h.write("b.csv", "s2,2,2\n")
	s := h.open("path: "+filepath.Join(h.dir, "*.csv"), sensorSchema)
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(s, 10)
	if len(got) != 1 || err == nil || !strings.Contains(err.Error(), b) {
		t.Fatalf("read %q, %v; want one row and an error naming %s", got, err, b)
	}
	pos, _ := s.Position()
	if want := fmt.Sprintf(`"file":%q,"offset":7,"line":2`, a); !strings.Contains(string(pos), want) {
		t.Errorf("position %s, want %s", pos, want)
	}
}
