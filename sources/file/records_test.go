package file

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/etld/etld/formats/csv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// quotedSplit cuts at a newline outside double quotes, dropping "\n" or
// "\r\n", and fails on a quote left open at the end: the shape of a CSV
// splitter, independent of formats/csv.
func quotedSplit(data []byte, atEOF bool) (int, []byte, error) {
	quoted := false
	for i, ch := range data {
		switch {
		case ch == '"':
			quoted = !quoted
		case ch == '\n' && !quoted:
			return i + 1, bytes.TrimSuffix(data[:i], []byte{'\r'}), nil
		}
	}
	switch {
	case !atEOF || len(data) == 0:
		return 0, nil, nil
	case quoted:
		return 0, nil, errors.New("unclosed quote")
	}
	return len(data), bytes.TrimSuffix(data, []byte{'\r'}), nil
}

type record struct {
	text string
	line int64
}

// readRecords returns every record of data read in chunks of at most
// chunk bytes through a buffer of bufSize, checking offsets on the way and
// that unread gives back each record.
func readRecords(t *testing.T, data string, split splitFunc, bufSize, chunk int) ([]record, error) {
	recs, err := readRecordsAt(t, data, split, bufSize, chunk)
	out := make([]record, len(recs))
	for i, r := range recs {
		out[i] = r.record
	}
	return out, err
}

// placedRecord is a record with the offset it starts at and, for a bad
// record the splitter cut, its error.
type placedRecord struct {
	record
	offset int64
	bad    error
}

func readRecordsAt(t *testing.T, data string, split splitFunc, bufSize, chunk int) ([]placedRecord, error) {
	rd := &records{split: split, buf: make([]byte, bufSize), maxBuf: maxRecordSize}
	rd.reset(&chunkReader{data: []byte(data), n: chunk}, 0, 1)
	var out []placedRecord
	lines := int64(1)
	for {
		before := rd.offset
		rec, line, err := rd.next()
		if err == io.EOF {
			if !rd.stopped && rd.offset != int64(len(data)) {
				t.Errorf("offset at the end %d, want %d", rd.offset, len(data))
			}
			return out, nil
		}
		if err != nil {
			return out, err
		}
		got, bad := string(rec), rd.bad
		after, afterLine := rd.offset, rd.line
		// rd.line is checked against a count of its own, kept as it goes
		// so that long fuzz inputs do not make this quadratic.
		lines += int64(strings.Count(data[before:after], "\n"))
		if afterLine != lines {
			t.Errorf("after %q line %d, want %d", got, afterLine, lines)
		}
		rd.unread()
		if rd.offset != before {
			t.Errorf("unread of %q: offset %d, want %d", got, rd.offset, before)
		}
		again, againLine, err := rd.next()
		if err != nil || string(again) != got || againLine != line || rd.offset != after || rd.line != afterLine || fmt.Sprint(rd.bad) != fmt.Sprint(bad) {
			t.Errorf("after unread: %q line %d (%v, bad %v), want %q line %d (bad %v)", again, againLine, err, rd.bad, got, line, bad)
		}
		out = append(out, placedRecord{record{got, line}, before, bad})
	}
}

// chunkReader returns at most n bytes per Read, and sometimes none.
type chunkReader struct {
	data  []byte
	n     int
	calls int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	r.calls++
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	if r.calls%3 == 0 {
		return 0, nil
	}
	n := copy(p[:min(len(p), r.n)], r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestLines(t *testing.T) {
	tests := []struct {
		data string
		want []record
	}{
		{"", nil},
		{"a", []record{{"a", 1}}},
		{"a\n", []record{{"a", 1}}},
		{"a\r\nb\r\n", []record{{"a", 1}, {"b", 2}}},
		{"\n\nc", []record{{"", 1}, {"", 2}, {"c", 3}}},
		{"a\rb\n", []record{{"a\rb", 1}}},
		{"0123456789abcdef0123\nx", []record{{"0123456789abcdef0123", 1}, {"x", 2}}},
	}
	for _, tt := range tests {
		for _, size := range []int{4, 7, 64} {
			for _, chunk := range []int{1, 3, 100} {
				got, err := readRecords(t, tt.data, nil, size, chunk)
				if err != nil {
					t.Fatalf("%q: %v", tt.data, err)
				}
				if !equalRecords(got, tt.want) {
					t.Errorf("%q (buffer %d, chunk %d): %v, want %v", tt.data, size, chunk, got, tt.want)
				}
			}
		}
	}
}

func equalRecords(a, b []record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSplitter(t *testing.T) {
	csv := quotedSplit
	// skipBlank steps over blank lines itself and returns the record after
	// them, as some splitters do.
	skipBlank := func(data []byte, atEOF bool) (int, []byte, error) {
		start := 0
		for start < len(data) && data[start] == '\n' {
			start++
		}
		adv, tok, err := csv(data[start:], atEOF)
		if adv == 0 && tok == nil {
			return 0, nil, err
		}
		return start + adv, tok, err
	}
	final := func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := csv(data, atEOF)
		if string(tok) == "end" {
			return adv, tok, bufio.ErrFinalToken
		}
		return adv, tok, err
	}
	tests := []struct {
		name    string
		split   splitFunc
		data    string
		want    []record
		wantErr string
	}{
		{"quoted newlines", csv, "\"a\nb\",1\nc\r\n\"d\n\ne\"", []record{{"\"a\nb\",1", 1}, {"c", 3}, {"\"d\n\ne\"", 4}}, ""},
		{"blank lines inside the advance", skipBlank, "a\n\n\nb\n\"x\ny\"\n\nz", []record{{"a", 1}, {"b", 4}, {"\"x\ny\"", 5}, {"z", 8}}, ""},
		{"final token", final, "a\nend\nnot read\n", []record{{"a", 1}, {"end", 2}}, ""},
		{"error", csv, "a\n\"b\n", []record{{"a", 1}}, "unclosed quote"},
		{"left over at eof", func(data []byte, atEOF bool) (int, []byte, error) {
			if i := bytes.IndexByte(data, ';'); i >= 0 {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil
		}, "a;b", []record{{"a", 1}}, "incomplete record at end of file"},
		{"bad advance", func(data []byte, atEOF bool) (int, []byte, error) {
			return len(data) + 1, nil, nil
		}, "a", nil, "splitter advanced 1 bytes of 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{4, 64} {
				for _, chunk := range []int{1, 100} {
					got, err := readRecords(t, tt.data, tt.split, size, chunk)
					if !equalRecords(got, tt.want) {
						t.Errorf("buffer %d, chunk %d: %v, want %v", size, chunk, got, tt.want)
					}
					if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
						t.Errorf("buffer %d, chunk %d: error %v, want %q", size, chunk, err, tt.wantErr)
					}
				}
			}
		})
	}
}

// TestSplitterBadRecord: a token that comes with a *DecodeError is a bad
// record: returned with its line, its error kept for the caller, and
// reading goes on after it; any other error stops the reader.
func TestSplitterBadRecord(t *testing.T) {
	// strayQuote cuts lines, a line holding a quote as a bad record.
	strayQuote := func(data []byte, atEOF bool) (int, []byte, error) {
		i := bytes.IndexByte(data, '\n')
		switch {
		case i >= 0:
		case !atEOF || len(data) == 0:
			return 0, nil, nil
		default:
			i = len(data)
		}
		if bytes.IndexByte(data[:i], '"') >= 0 {
			return min(i+1, len(data)), data[:i], &connector.DecodeError{Err: errors.New("stray quote")}
		}
		return min(i+1, len(data)), data[:i], nil
	}
	for _, size := range []int{4, 64} {
		for _, chunk := range []int{1, 100} {
			got, err := readRecordsAt(t, "a\n\"b\nc\n\"d\n", strayQuote, size, chunk)
			if err != nil {
				t.Fatal(err)
			}
			want := []record{{"a", 1}, {"\"b", 2}, {"c", 3}, {"\"d", 4}}
			if len(got) != len(want) {
				t.Fatalf("buffer %d, chunk %d: %v, want %v", size, chunk, got, want)
			}
			for i, r := range got {
				var de *connector.DecodeError
				if wantBad := i%2 == 1; r.record != want[i] || (r.bad != nil) != wantBad || wantBad && !errors.As(r.bad, &de) {
					t.Errorf("buffer %d, chunk %d: record %d is %v (bad %v), want %v (bad %v)", size, chunk, i, r.record, r.bad, want[i], wantBad)
				}
			}
		}
	}
}

// TestRecordsBufferHoldsTheBound: a bound on records spanning lines above
// the reader's own limit lets the buffer grow to it.
func TestRecordsBufferHoldsTheBound(t *testing.T) {
	defer func(old int) { maxRecordSize = old }(maxRecordSize)
	maxRecordSize = 2 * bufferSize
	bound := 3 * bufferSize
	// Waits for a quote to close, as csv does, up to the bound.
	split := func(data []byte, atEOF bool) (int, []byte, error) {
		if len(data) > bound {
			return 2, data[:1], &connector.DecodeError{Err: errors.New("past the bound")}
		}
		return quotedSplit(data, atEOF)
	}
	rd := newRecords(split, bound)
	rd.reset(strings.NewReader("\"\n"+strings.Repeat("x", 4*bufferSize)), 0, 1)
	if rec, _, err := rd.next(); err != nil || string(rec) != "\"" || rd.bad == nil {
		t.Errorf("record %.10q, %v, bad %v; want the quote as a bad record", rec, err, rd.bad)
	}
}

// A record longer than the buffer may grow is a bad record holding its
// first longSample bytes, at its line; reading goes on after the line it
// starts on, and unread gives it back as any record.
func TestRecordTooLong(t *testing.T) {
	defer func(old int) { maxRecordSize = old }(maxRecordSize)
	maxRecordSize = 4 * bufferSize
	long := strings.Repeat("x", maxRecordSize+10)
	data := "a\n" + long + "\nc\n" + long
	for name, split := range map[string]splitFunc{"lines": nil, "splitter": quotedSplit} {
		t.Run(name, func(t *testing.T) {
			recs, err := readRecordsAt(t, data, split, bufferSize, 100000)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, fmt.Sprintf("%d:%d@%d:%v", len(r.text), r.line, r.offset, errors.Is(r.bad, errTooLong)))
			}
			want := []string{"1:1@0:false", fmt.Sprintf("%d:2@2:true", longSample), fmt.Sprintf("1:3@%d:false", len(long)+3), fmt.Sprintf("%d:4@%d:true", longSample, len(long)+5)}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("records (length:line@offset:too long) %q, want %q", got, want)
			}
		})
	}
}

func TestReadError(t *testing.T) {
	rd := newRecords(nil, 0)
	boom := errors.New("disk on fire")
	rd.reset(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)), 0, 1)
	if rec, _, err := rd.next(); err != nil || string(rec) != "a" {
		t.Fatalf("first record %q, %v", rec, err)
	}
	if _, _, err := rd.next(); !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
}

// FuzzRecords: lines come out as strings.Split would cut them, with the
// right line numbers and offsets, whatever the buffer and read sizes. With
// the csv splitter (a small bound on records spanning lines, so that it
// is reached), every byte of the input belongs to exactly one record or
// one bad record, in order, and lines only grow.
func FuzzRecords(f *testing.F) {
	f.Add("a\nb\r\n\nc", false, uint8(4), uint8(1))
	f.Add("\"a\nb\",1\nc\r\n\"d", true, uint8(5), uint8(2))
	f.Add("\r\r\n\n\"\"\"\n", true, uint8(1), uint8(200))
	f.Add("s1,1\n\"bad,2\r\ns3,3\n\"x\ny\"z\n", true, uint8(9), uint8(3))
	dec, err := csv.NewDecoder(csv.Options{}, row.NewSchema(row.Field{Name: "a", Type: row.Of(row.String)}, row.Field{Name: "b", Type: row.Of(row.String)}))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string, useSplit bool, size, chunk uint8) {
		if !useSplit {
			got, err := readRecords(t, data, nil, int(size)%64+1, int(chunk)%64+1)
			if err != nil {
				t.Fatal(err)
			}
			var want []record
			if data != "" {
				lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
				for i, l := range lines {
					want = append(want, record{strings.TrimSuffix(l, "\r"), int64(i + 1)})
				}
			}
			if !equalRecords(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
			return
		}
		got, err := readRecordsAt(t, data, dec.SplitFunc(int(size)%32+1), int(size)%64+1, int(chunk)%64+1)
		if err != nil {
			t.Fatal(err)
		}
		// Each record starts where the one before ended, with its line
		// break: nothing lost, nothing read twice.
		at, prevLine := int64(0), int64(0)
		lines, counted := int64(1), int64(0) // lines up to offset counted
		for _, r := range got {
			if r.offset != at || !strings.HasPrefix(data[at:], r.text) {
				t.Fatalf("record %q at offset %d, want one at %d: %q", r.text, r.offset, at, data[at:])
			}
			at += int64(len(r.text))
			switch rest := data[at:]; {
			case strings.HasPrefix(rest, "\n"):
				at++
			case strings.HasPrefix(rest, "\r\n"):
				at += 2
			case rest == "\r":
				at++
			case rest != "":
				t.Fatalf("record %q at offset %d is followed by %q", r.text, r.offset, rest)
			}
			lines += int64(strings.Count(data[counted:r.offset], "\n"))
			counted = r.offset
			if r.line != lines || r.line <= prevLine {
				t.Fatalf("record %q on line %d, want %d, after line %d", r.text, r.line, lines, prevLine)
			}
			prevLine = r.line
		}
		if at != int64(len(data)) {
			t.Fatalf("records end at %d of %d bytes", at, len(data))
		}
	})
}
