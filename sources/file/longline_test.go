package file

import (
	"fmt"
	"strings"
	"testing"
)

// withMaxRecord lowers the bound on one line for one test.
func withMaxRecord(t testing.TB, n int) {
	old := maxRecordSize
	maxRecordSize = n
	t.Cleanup(func() { maxRecordSize = old })
}

// A line longer than a record may be is one bad record at its line, for
// on_error: with skip the lines after it are read, serially and in
// parallel, in line and splitter formats, also when it is the last line
// without a line break; with fail the rows before it are delivered and
// the error and the position name its line.
func TestOverlongLineIsOneBadRecord(t *testing.T) {
	withMaxRecord(t, 4*bufferSize)
	long := strings.Repeat("x", 4*bufferSize+4096)
	content := "a,1\nb," + long + "\nc,3\nd," + long
	for _, format := range []string{"csv", "raw"} {
		for _, workers := range []int{-1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", format, workers), func(t *testing.T) {
				withReader(t, workers, 64<<10, 64<<10)
				schema, want := "[k STRING, v INT]", "+I[a, 1] +I[c, 3]"
				if format == "raw" {
					schema, want = lineSchema, "+I[a,1] +I[c,3]"
				}
				h := newHarness(t)
				h.skip = true
				path := h.write("in.txt", content)
				s := h.open("path: "+path+"\nformat: "+format, schema)
				got, err := readAll(s, 10)
				if err != nil {
					t.Fatalf("read: %v (rows %q)", err, got)
				}
				if strings.Join(got, " ") != want {
					t.Errorf("rows %q, want %s", got, want)
				}
				if len(h.rejects) != 2 {
					t.Fatalf("%d records set aside, want the 2 long lines", len(h.rejects))
				}
				for i, line := range []int{2, 4} {
					bad := h.rejects[i]
					if bad.Position != fmt.Sprintf("%s:%d", path, line) || !strings.Contains(bad.Err.Error(), "too long") ||
						!strings.HasPrefix(string(bad.Raw), []string{"b,xxx", "d,xxx"}[i]) || len(bad.Raw) > longSample {
						t.Errorf("set aside %.20q (%d bytes) at %s: %v; want its first bytes at line %d", bad.Raw, len(bad.Raw), bad.Position, bad.Err, line)
					}
				}
				pos, err := s.Position()
				if err != nil || !strings.Contains(string(pos), fmt.Sprintf(`"offset":%d`, len(content))) {
					t.Errorf("position at the end %s (%v), want the offset %d", pos, err, len(content))
				}
			})
		}
	}
}

func TestOverlongLineFails(t *testing.T) {
	withMaxRecord(t, 4*bufferSize)
	h := newHarness(t)
	path := h.write("in.csv", "a,1\nb,"+strings.Repeat("x", 4*bufferSize+4096)+"\nc,3\n")
	s := h.open("path: "+path, "[k STRING, v INT]")
	got, err := readAll(s, 10)
	if strings.Join(got, " ") != "+I[a, 1]" {
		t.Errorf("rows %q, want the row before the long line", got)
	}
	if err == nil || !strings.Contains(err.Error(), path+":2") || !strings.Contains(err.Error(), "too long") {
		t.Fatalf("err = %v, want the long line's position", err)
	}
	if pos, _ := s.Position(); !strings.Contains(string(pos), `"offset":4`) {
		t.Errorf("position %s, want the long line's start (offset 4)", pos)
	}
}

// A followed file's long line is set aside once its line break arrives;
// until then nothing after it is read and the position stays at its
// start.
func TestFollowOverlongLine(t *testing.T) {
	withMaxRecord(t, 4*bufferSize)
	h := newHarness(t)
	h.skip = true
	path := h.write("app.log", "a\n"+strings.Repeat("x", 4*bufferSize+10))
	s := h.open(followOpts(path), lineSchema)
	if got := readLines(t, s, 1); strings.Join(got, " ") != "a" {
		t.Fatalf("read %q", got)
	}
	nothingMore(t, s)
	appendTo(t, path, strings.Repeat("y", 4*bufferSize)+"\nb\n")
	if got := readLines(t, s, 1); strings.Join(got, " ") != "b" {
		t.Fatalf("read %q after the long line, want b", got)
	}
	if len(h.rejects) != 1 || h.rejects[0].Position != path+":2" || !strings.HasPrefix(string(h.rejects[0].Raw), "xxx") {
		t.Fatalf("set aside %d records, first at %v, want the long line at line 2", len(h.rejects), h.rejects)
	}
}
