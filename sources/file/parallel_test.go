package file

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// withReader sets the parallel reader's tuning for one test: workers (-1
// reads serially), block bytes and the size of a fresh read buffer.
func withReader(t testing.TB, workers, block, buffer int) {
	w, b, f := parallelWorkers, blockBytes, freshBufferSize
	parallelWorkers, blockBytes, freshBufferSize = workers, block, buffer
	t.Cleanup(func() { parallelWorkers, blockBytes, freshBufferSize = w, b, f })
}

// trace is everything a read shows: each change with the position of its
// record, the source's position after each batch, the records set
// aside, and the error that ended the read with the position then.
type trace struct {
	changes, batches, rejects []string
	// counts is the number of changes read after each batch.
	counts []int
	end    string
}

func (tr trace) String() string {
	return fmt.Sprintf("changes %q\nrejects %q\nend %s", tr.changes, tr.rejects, tr.end)
}

// same reports whether two traces show the same rows, records set aside
// and end; batch boundaries may differ.
func (tr trace) same(o trace) bool {
	return slices.Equal(tr.changes, o.changes) && slices.Equal(tr.rejects, o.rejects) && tr.end == o.end
}

func readTrace(t testing.TB, h *harness, s *Source, max int) trace {
	t.Helper()
	var tr trace
	h.rejects = nil
	for range 1 << 20 {
		b, err := s.Read(context.Background(), max)
		if b != nil {
			if b.Len() > max {
				t.Fatalf("batch of %d changes, max %d", b.Len(), max)
			}
			for i, c := range b.Changes {
				tr.changes = append(tr.changes, c.String()+" @"+b.Origin.Position(i))
			}
			pos, perr := s.Position()
			if perr != nil {
				t.Fatal(perr)
			}
			tr.batches = append(tr.batches, string(pos))
			tr.counts = append(tr.counts, len(tr.changes))
		}
		if err != nil {
			pos, perr := s.Position()
			if perr != nil {
				t.Fatal(perr)
			}
			tr.end = err.Error() + " at " + string(pos)
			break
		}
	}
	for _, r := range h.rejects {
		tr.rejects = append(tr.rejects, fmt.Sprintf("%s %q %v", r.Position, r.Raw, r.Err))
	}
	return tr
}

// openTrace opens a source over opts, optionally restored at pos, and
// reads it to the end.
func openTrace(t testing.TB, h *harness, opts, schema string, pos []byte, max int) trace {
	t.Helper()
	s, err := h.build(opts, schema)
	if err != nil {
		t.Fatal(err)
	}
	if pos != nil {
		if err := s.Restore(pos); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Open(context.Background()); err != nil {
		return trace{end: "open: " + err.Error()}
	}
	defer s.Close(context.Background())
	return readTrace(t, h, s, max)
}

var parallelCases = []struct {
	name, format, schema string
	files                map[string]string
}{
	{name: "lines", files: map[string]string{"a.csv": "s1,1,1\ns2,2,2\ns3,3,3\ns4,4,4\ns5,5,5\n"}},
	{name: "quoted newlines", files: map[string]string{"a.csv": "\"a\nb\",1,1\ns2,2,2\n\"c\r\nd\",3,3\n\"e\"\"\n\",4,4\ns5,5,5\n"}},
	{name: "crlf", files: map[string]string{"a.csv": "s1,1,1\r\ns2,2,2\r\n\"s\r\n3\",3,3\r\ns4,4,4\r\n"}},
	{name: "last line without newline", files: map[string]string{"a.csv": "s1,1,1\ns2,2,2\ns3,3,3"}},
	{name: "quoted last line without newline", files: map[string]string{"a.csv": "s1,1,1\n\"s\n2\",2,2"}},
	{name: "empty lines", files: map[string]string{"a.csv": "\n\ns1,1,1\n\n\ns2,2,2\n\r\n\n\"s\n3\",3,3\n\n"}},
	{name: "bad values", files: map[string]string{"a.csv": "s1,1,1\ns2,x,2\ns3,3,3\ns4,4\ns5,5,5\ns6,6,y\n"}},
	{name: "stray quote", files: map[string]string{"a.csv": "s1,1,1\n\"s2,2,2\ns3,3,3\ns4,4,4\n"}},
	{name: "incomplete quote at the end", files: map[string]string{"a.csv": "s1,1,1\ns2,2,2\n\"s3,3,3"}},
	{name: "header", format: "format: {type: csv, header: true}", files: map[string]string{"a.csv": "\nid,ts,temperature\ns1,1,1\ns2,2,2\n"}},
	{name: "bad header", format: "format: {type: csv, header: true}", files: map[string]string{"a.csv": "id,ts,temperature\ns1,1,1\n", "b.csv": "id,tx,temperature\ns2,2,2\n"}},
	{name: "files", files: map[string]string{"a.csv": "s1,1,1\ns2,2,2", "b.csv": "", "c.csv": "s3,3,3\n\"s\n4\",4,4\n", "d.csv": "\n"}},
	{name: "one column", schema: "[id STRING]", files: map[string]string{"a.csv": "a\n\nb\n\"c\nd\"\n"}},
	{name: "json", format: "format: json", files: map[string]string{"a.json": "{\"id\":\"s1\",\"ts\":1,\"temperature\":1}\n\n{\"id\":\"s2\",\"ts\":2}\r\n{\"id\":\"s3\",\"ts\":\"x\"}\n{\"id\":\"s4\",\"ts\":4,\"temperature\":4}"}},
}

// TestParallelDecodeMatchesSerial: whatever the block size, read buffer
// and number of workers, a parallel read returns the rows, positions,
// records set aside and errors of a serial one; batches and the
// positions after them do not depend on the number of workers; and a
// restore at any of those positions reads the rest exactly.
func TestParallelDecodeMatchesSerial(t *testing.T) {
	for _, tc := range parallelCases {
		for _, skip := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/skip=%v", tc.name, skip), func(t *testing.T) {
				h := newHarness(t)
				h.skip = skip
				var glob string
				for name, content := range tc.files {
					h.write(name, content)
					glob = filepath.Join(h.dir, "*"+filepath.Ext(name))
				}
				opts := "path: " + glob
				if tc.format != "" {
					opts += "\n" + tc.format
				}
				schema := tc.schema
				if schema == "" {
					schema = sensorSchema
				}
				withReader(t, -1, 0, 0)
				serial := openTrace(t, h, opts, schema, nil, 2)
				for _, block := range []int{1, 2, 3, 5, 8, 13, 1 << 17} {
					for _, buffer := range []int{4, 16, 1 << 16} {
						var one trace
						for _, workers := range []int{1, 3} {
							withReader(t, workers, block, buffer)
							got := openTrace(t, h, opts, schema, nil, 2)
							if !got.same(serial) {
								t.Fatalf("block %d, buffer %d, %d workers:\ngot  %v\nwant %v", block, buffer, workers, got, serial)
							}
							if workers == 1 {
								one = got
								continue
							}
							if !slices.Equal(got.batches, one.batches) {
								t.Fatalf("block %d, buffer %d: positions after batches with %d workers\n%q, with one\n%q", block, buffer, workers, got.batches, one.batches)
							}
						}
						if block != 3 || buffer != 4 {
							continue
						}
						// Resume at every batch boundary: the rows after it
						// are the serial read's rows after the same count.
						for i, pos := range one.batches {
							rest := openTrace(t, h, opts, schema, []byte(pos), 2)
							want := serial.changes[one.counts[i]:]
							if !slices.Equal(rest.changes, want) || (skip && rest.end != serial.end) {
								t.Fatalf("resumed at %s:\ngot  %q (%s)\nwant %q (%s)", pos, rest.changes, rest.end, want, serial.end)
							}
						}
					}
				}
			})
		}
	}
}

// TestParallelDecodeLargeFile reads a file of many blocks with every
// kind of record and compares with a serial read.
func TestParallelDecodeLargeFile(t *testing.T) {
	h := newHarness(t)
	h.skip = true
	var b strings.Builder
	for i := range 20000 {
		switch i % 97 {
		case 13:
			fmt.Fprintf(&b, "\"s\n%d\",%d,%d\r\n", i, i, i)
		case 41:
			fmt.Fprintf(&b, "s%d,x,%d\n", i, i)
		case 67:
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "s%d,%d,%d.5\n", i, i, i)
		}
	}
	opts := "path: " + h.write("a.csv", b.String())
	withReader(t, -1, 0, 0)
	serial := openTrace(t, h, opts, sensorSchema, nil, 1000)
	withReader(t, 2, 4096, 1<<14)
	got := openTrace(t, h, opts, sensorSchema, nil, 1000)
	if !got.same(serial) {
		t.Fatalf("%d changes, %d rejects, end %s; want %d, %d, %s", len(got.changes), len(got.rejects), got.end, len(serial.changes), len(serial.rejects), serial.end)
	}
	if len(got.batches) < 40 {
		t.Errorf("%d batches: the file should make many blocks", len(got.batches))
	}
}

// FuzzParallelDecode: on any input, a parallel read with small blocks
// and buffers returns what a serial read returns.
func FuzzParallelDecode(f *testing.F) {
	for _, tc := range parallelCases {
		for _, content := range tc.files {
			f.Add([]byte(content), uint8(3), uint8(5), false)
		}
	}
	f.Add([]byte("\"a\n\"\"b,1,1\n\"\n\r\n\"x,2,2\r"), uint8(1), uint8(1), true)
	f.Fuzz(func(t *testing.T, data []byte, block, buffer uint8, skip bool) {
		h := newHarness(t)
		h.skip = skip
		opts := "path: " + h.write("a.csv", string(data)) + "\nmax_record_bytes: 64"
		withReader(t, -1, 0, 0)
		serial := openTrace(t, h, opts, sensorSchema, nil, 3)
		withReader(t, 2, 1+int(block%32), 1+int(buffer%32))
		if got := openTrace(t, h, opts, sensorSchema, nil, 3); !got.same(serial) {
			t.Fatalf("parallel:\n%v\nserial:\n%v", got, serial)
		}
	})
}

// TestParallelCloseMidRead: closing a source whose reader and workers
// are busy ends them; the file is read no further.
func TestParallelCloseMidRead(t *testing.T) {
	h := newHarness(t)
	var b strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&b, "s%d,%d,%d\n", i, i, i)
	}
	withReader(t, 2, 64, 256)
	s, err := h.build("path: "+h.write("a.csv", b.String()), sensorSchema)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(context.Background(), 10); err == nil {
		t.Fatal("Read after Close succeeded")
	}
}

// TestParallelReadCancelled: a Read whose context ends returns its
// error and loses nothing: the next Read goes on where it stopped.
func TestParallelReadCancelled(t *testing.T) {
	h := newHarness(t)
	withReader(t, 2, 8, 16)
	opts := "path: " + h.write("a.csv", "s1,1,1\ns2,2,2\ns3,3,3\ns4,4,4\n")
	s := h.open(opts, sensorSchema)
	if b, err := s.Read(context.Background(), 1); err != nil || b.Len() != 1 {
		t.Fatalf("Read: %v, %v", b, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Read(ctx, 1); err != context.Canceled {
		t.Fatalf("cancelled Read: %v, want context.Canceled", err)
	}
	got := readTrace(t, h, s, 10)
	if want := []string{"+I[s2, 2, 2.0]", "+I[s3, 3, 3.0]", "+I[s4, 4, 4.0]"}; len(got.changes) != 3 || !strings.HasPrefix(got.changes[0], want[0]) || !strings.HasPrefix(got.changes[2], want[2]) {
		t.Fatalf("after the cancelled Read: %q, want %q", got.changes, want)
	}
}
