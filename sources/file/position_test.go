package file

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreKeepsLineNumbers: errors after a resume name the right line.
func TestRestoreKeepsLineNumbers(t *testing.T) {
	h := newHarness(t)
	path := h.write("a.csv", "s1,1,1\n\"s\n2\",2,2\ns3,3,oops\n")
	s := h.open("path: "+path, sensorSchema)
	if _, err := s.Read(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	pos, _ := s.Position()
	resumed, _ := h.build("path: "+path, sensorSchema)
	if err := resumed.Restore(pos); err != nil {
		t.Fatal(err)
	}
	if err := resumed.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer resumed.Close(context.Background())
	_, err := readAll(resumed, 10)
	if err == nil || !strings.Contains(err.Error(), path+":4") {
		t.Errorf("error %v, want it at %s:4", err, path)
	}
}

// TestFailedRecordIsNotSkippedByAPosition: after a policy failure the
// position names the bad record, so a checkpoint cannot step over it.
func TestFailedRecordIsNotSkippedByAPosition(t *testing.T) {
	h := newHarness(t)
	path := h.write("a.csv", "s1,1,1\ns2,2,bad\ns3,3,3\n")
	s := h.open("path: "+path, sensorSchema)
	b, err := s.Read(context.Background(), 10)
	if err != nil || b.Len() != 1 {
		t.Fatalf("first Read: %v, %v; want the row before the bad one", b, err)
	}
	if _, err := s.Read(context.Background(), 10); err == nil {
		t.Fatal("no error for the bad record")
	}
	pos, _ := s.Position()
	if want := `"offset":7,"line":2`; !strings.Contains(string(pos), want) {
		t.Errorf("position %s, want %s", pos, want)
	}
}

func TestRestoreRefusesAChangedFile(t *testing.T) {
	tests := []struct {
		name    string
		before  string
		after   string
		wantErr string
	}{
		{"shorter", "id,ts,temperature\ns1,1,1\ns2,2,2\n", "id,ts,temperature\n", "past the end"},
		{"not at a record start", "id,ts,temperature\ns1,1,1\ns2,2,2\n", "id,ts,temperature\ns10,1,1\ns2,2,2\n", "not at the start of a record"},
		{"header gone", "id,ts,temperature\ns1,1,1\n", strings.Repeat("\n", 30), "header is gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			path := h.write("a.csv", tt.before)
			opts := "path: " + path + "\nformat: {type: csv, header: true}"
			s := h.open(opts, sensorSchema)
			if _, err := s.Read(context.Background(), 1); err != nil && err != io.EOF {
				t.Fatal(err)
			}
			pos, _ := s.Position()
			if err := os.WriteFile(path, []byte(tt.after), 0o644); err != nil {
				t.Fatal(err)
			}
			resumed, _ := h.build(opts, sensorSchema)
			defer resumed.Close(context.Background())
			if err := resumed.Restore(pos); err != nil {
				t.Fatal(err)
			}
			err := resumed.Open(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Open: %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestRestoreRefusesAFileTheGlobNoLongerNames(t *testing.T) {
	h := newHarness(t)
	h.write("a.csv", "s1,1,1\n")
	s, _ := h.build("path: "+filepath.Join(h.dir, "*.csv"), sensorSchema)
	if err := s.Restore([]byte(`{"v":1,"file":"gone.csv","offset":7,"line":2}`)); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if err := s.Open(context.Background()); err == nil || !strings.Contains(err.Error(), "gone.csv") {
		t.Errorf("Open: %v, want an error naming gone.csv", err)
	}
}

func TestDecodePosition(t *testing.T) {
	tests := []struct {
		pos     string
		wantErr string
	}{
		{`{"v":1,"file":"a.csv","offset":7,"line":2}`, ""},
		{`{"v":1,"offset":0,"line":1}`, ""},
		{``, "not a file source position"},
		{`{"v":1,"offset":0,"line":1} {}`, "data after"},
		{`{"v":2,"file":"a","offset":0,"line":1}`, "version 2"},
		{`{"v":1,"file":"a","offset":-1,"line":1}`, "negative offset"},
		{`{"v":1,"file":"a","offset":0,"line":0}`, "line 0"},
		{`{"v":1,"offset":5,"line":1}`, "without a file"},
		{`{"v":1,"file":"a","offset":0,"line":1,"partition":3}`, "unknown field"},
		{`{"v":1,"file":"a","offset":"7","line":1}`, "cannot unmarshal"},
		{`{"v":3,"file":"a.avro","group":2,"row":5,"file_row":305}`, ""},
		{`{"v":3,"file":"a.avro","group":2,"row":5}`, ""},
		{`{"v":3,"file":"a.avro","file_row":-1}`, "version 3"},
		{`{"v":3,"file_row":4}`, "version 3"},
		{`{"v":1,"file":"a","offset":0,"line":1,"file_row":4}`, "a row group in version 1"},
	}
	for _, tt := range tests {
		_, err := decodePosition([]byte(tt.pos))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.pos, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want %q", tt.pos, err, tt.wantErr)
		}
	}
}

func FuzzDecodePosition(f *testing.F) {
	f.Add([]byte(`{"v":1,"file":"a.csv","offset":7,"line":2}`))
	f.Add([]byte(`{"v":1,"offset":0,"line":1}`))
	f.Add([]byte(`{"v":1,"file":"a","offset":-1,"line":1}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"v":2,"files":[{"path":"app.log","dev":1,"ino":2,"offset":2,"line":2,"head":"87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7","head_len":2}]}`))
	f.Add([]byte(`{"v":2,"files":[]}`))
	f.Add([]byte(`{"v":3,"file":"a.avro","group":2,"row":5,"file_row":305}`))
	f.Fuzz(func(t *testing.T, pos []byte) {
		p, err := decodePosition(pos)
		if err != nil {
			if !strings.Contains(err.Error(), "position") {
				t.Errorf("error %q does not say it is about a position", err)
			}
			return
		}
		if p.V == followPositionVersion {
			for _, f := range p.Files {
				if f.Path == "" || f.Offset <= 0 || f.Line < 1 || f.HeadLen != min(f.Offset, headLen) {
					t.Errorf("accepted %+v", p)
				}
			}
			return
		}
		if p.V == bulkPositionVersion {
			if p.Group < 0 || p.Row < 0 || p.FileRow < 0 || p.Offset != 0 || p.Line != 0 || (p.File == "" && p.FileRow != 0) {
				t.Errorf("accepted %+v", p)
			}
			return
		}
		if p.Offset < 0 || p.Line < 1 {
			t.Errorf("accepted %+v", p)
		}
	})
}
