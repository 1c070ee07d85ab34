package csv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
)

// splitRecord is one token a split function cut: its text, the line it
// starts on, and for a bad record its error ("" for a record).
type splitRecord struct {
	text string
	line int
	bad  string
}

func (r splitRecord) String() string {
	if r.bad != "" {
		return fmt.Sprintf("%d:BAD(%q: %s)", r.line, r.text, r.bad)
	}
	return fmt.Sprintf("%d:%q", r.line, r.text)
}

// splitAll cuts input with split as a reader does: chunk bytes at a time,
// asking for more while split wants more, atEOF once the input is all
// there. It checks on the way that every byte of input belongs to exactly
// one token (tokens and what is between them, the line breaks, cover the
// input in order) and that lines only grow.
func splitAll(t *testing.T, split bufio.SplitFunc, input string, chunk int) []splitRecord {
	t.Helper()
	var out []splitRecord
	var buf []byte
	fed, consumed, line := 0, 0, 1
	for {
		atEOF := fed == len(input)
		adv, tok, err := split(buf, atEOF)
		var de *connector.DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("split(%q, %v) failed: %v", buf, atEOF, err)
		}
		if err != nil && tok == nil {
			t.Fatalf("split(%q, %v) = a DecodeError without a token", buf, atEOF)
		}
		if adv < 0 || adv > len(buf) {
			t.Fatalf("split(%q, %v) advanced %d", buf, atEOF, adv)
		}
		if adv == 0 {
			if tok != nil {
				t.Fatalf("split(%q, %v) = token %q without advancing", buf, atEOF, tok)
			}
			if atEOF {
				if len(buf) > 0 {
					t.Fatalf("%q left over at the end", buf)
				}
				if consumed != len(input) {
					t.Fatalf("consumed %d bytes of %d", consumed, len(input))
				}
				return out
			}
			n := min(chunk, len(input)-fed)
			buf = append(buf, input[fed:fed+n]...)
			fed += n
			continue
		}
		// The token is the start of what it advanced over; the rest of
		// the advance is its line break.
		if !bytes.HasPrefix(buf, tok) {
			t.Fatalf("token %q is not a prefix of %q", tok, buf)
		}
		end := atEOF && adv == len(buf)
		if rest := string(buf[len(tok):adv]); rest != "\n" && rest != "\r\n" && !(end && (rest == "" || rest == "\r")) {
			t.Fatalf("token %q advanced over %q more", tok, rest)
		}
		r := splitRecord{text: string(tok), line: line}
		if err != nil {
			r.bad = err.Error()
		}
		out = append(out, r)
		line += bytes.Count(buf[:adv], []byte{'\n'})
		consumed += adv
		buf = buf[adv:]
	}
}

func TestSplitStrayQuote(t *testing.T) {
	// A file of 18 lines with a stray quote opening line 2.
	var file18, want18 = strings.Builder{}, []splitRecord{}
	for i := 1; i <= 18; i++ {
		l := fmt.Sprintf("s%d,%d,%d.5", i, i, i)
		r := splitRecord{text: l, line: i}
		if i == 2 {
			l, r = `"bad quote,2,2.5`, splitRecord{text: `"bad quote,2,2.5`, line: 2, bad: "quoted field starting at byte 0 has no closing quote before the end of the input"}
		}
		file18.WriteString(l + "\n")
		want18 = append(want18, r)
	}
	long := strings.Repeat("x", 40)
	tests := []struct {
		name  string
		max   int // max_record_bytes; 0 for the default
		input string
		want  []splitRecord
	}{
		{"unbalanced quote on line 2 of 18", 0, file18.String(), want18},
		{"unbalanced quote on the last line", 0, "a,1\n\"b,2\n",
			[]splitRecord{{"a,1", 1, ""}, {`"b,2`, 2, "before the end of the input"}}},
		{"unbalanced quote on the last line, no final break", 0, "a,1\n\"b,2",
			[]splitRecord{{"a,1", 1, ""}, {`"b,2`, 2, "before the end of the input"}}},
		{"quoted line breaks that close", 0, "\"a\nb\",1\n\"c\r\n\r\nd\",2\r\ne,3\n",
			[]splitRecord{{"\"a\nb\",1", 1, ""}, {"\"c\r\n\r\nd\",2", 3, ""}, {"e,3", 6, ""}}},
		{"closes within max_record_bytes", 16, "\"a\nbcdefghijk\",1\nc,2\n",
			[]splitRecord{{"\"a\nbcdefghijk\",1", 1, ""}, {"c,2", 3, ""}}},
		{"exceeds max_record_bytes", 16, "\"a\n" + long + "\",1\nc,2\n",
			[]splitRecord{{`"a`, 1, "no closing quote within 16 bytes (max_record_bytes)"}, {long + "\",1", 2, ""}, {"c,2", 3, ""}}},
		{"a long line is not bound by max_record_bytes", 16, "\"" + long + "\",1\n" + long + "\n",
			[]splitRecord{{"\"" + long + "\",1", 1, ""}, {long, 2, ""}}},
		{"a long line with an open quote", 16, "\"" + long + "\nc,2\n",
			[]splitRecord{{"\"" + long, 1, "within 16 bytes"}, {"c,2", 2, ""}}},
		{"CRLF: unbalanced quote", 0, "a,1\r\n\"b,2\r\nc,3\r\n",
			[]splitRecord{{"a,1", 1, ""}, {`"b,2`, 2, "before the end"}, {"c,3", 3, ""}}},
		{"CRLF: exceeds max_record_bytes", 16, "\"b,2\r\n" + long + "\r\nc,3\r\n",
			[]splitRecord{{`"b,2`, 1, "within 16 bytes"}, {long, 2, ""}, {"c,3", 3, ""}}},
		{"a later quote closes it, followed by text", 0, "\"a,1\nb\"x,2\nc,3\n",
			[]splitRecord{{`"a,1`, 1, `the quote on a later line is followed by "x"`}, {`b"x,2`, 2, ""}, {"c,3", 3, ""}}},
		{"a later quote closes it, followed by a delimiter", 0, "\"a,1\nb\",2\nc,3\n",
			[]splitRecord{{"\"a,1\nb\",2", 1, ""}, {"c,3", 3, ""}}},
		{"a later quote closes it, followed by CRLF", 0, "\"a,1\r\nb\"\r\nc,3\r\n",
			[]splitRecord{{"\"a,1\r\nb\"", 1, ""}, {"c,3", 3, ""}}},
		{"a later quote closes it at the end", 0, "\"a,1\nb\"",
			[]splitRecord{{"\"a,1\nb\"", 1, ""}}},
		{"a later doubled quote does not close it", 0, "\"a,1\nb\"\"c\n",
			[]splitRecord{{`"a,1`, 1, "before the end"}, {`b""c`, 2, ""}}},
		{"the stray quote opens on the record's second line", 0, "\"a\nb\",\"c\nd,1\n",
			[]splitRecord{{"\"a\nb\",\"c", 1, "byte 6 has no closing quote"}, {"d,1", 3, ""}}},
		{"a quote inside an unquoted field opens nothing", 0, "ab\"c,1\nd,2\n",
			[]splitRecord{{"ab\"c,1", 1, ""}, {"d,2", 2, ""}}},
		{"a byte order mark before a quoted field", 0, "\uFEFF\"a\nb\",1\nc,2\n",
			[]splitRecord{{"\uFEFF\"a\nb\",1", 1, ""}, {"c,2", 3, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			d, err := NewDecoder(Options{}, testenv.Schema(t, "a STRING", "b STRING"))
			if err != nil {
				t.Fatal(err)
			}
			split := d.Split
			if tt.max > 0 {
				split = d.SplitFunc(tt.max)
			}
			for _, chunk := range []int{1, 3, 1 << 20} {
				got := splitAll(t, split, tt.input, chunk)
				if len(got) != len(want) {
					t.Fatalf("chunk %d: got %v, want %v", chunk, got, want)
				}
				for i := range got {
					g, w := got[i], want[i]
					if g.text != w.text || g.line != w.line || (g.bad == "") != (w.bad == "") || !strings.Contains(g.bad, w.bad) {
						t.Fatalf("chunk %d: record %d is %v, want %v\nall: %v", chunk, i, g, w, got)
					}
				}
			}
		})
	}
}

// TestSplitWaitsForTheQuote: before the end of the input, a quote still
// open within max_record_bytes waits for more data (a followed file that
// is still being written), and is cut once the data passes the bound.
func TestSplitWaitsForTheQuote(t *testing.T) {
	d, err := NewDecoder(Options{}, testenv.Schema(t, "a STRING", "b STRING"))
	if err != nil {
		t.Fatal(err)
	}
	split := d.SplitFunc(32)
	for _, data := range []string{"\"a,1\nb", "\"a,1\nb\"", "\"a,1\nb\"\r", "\"a\r\n"} {
		if adv, tok, err := split([]byte(data), false); adv != 0 || tok != nil || err != nil {
			t.Errorf("split(%q) = %d, %q, %v; want to wait for more", data, adv, tok, err)
		}
	}
	data := "\"a,1\n" + strings.Repeat("b", 40)
	adv, tok, err := split([]byte(data), false)
	var de *connector.DecodeError
	if adv != 5 || string(tok) != `"a,1` || !errors.As(err, &de) || de.Column != "a" {
		t.Errorf("split(%q) = %d, %q, %v; want the first line as a bad record of column a", data, adv, tok, err)
	}
}

// TestSplitBadRecordNamesTheColumn: the error of a stray quote names the
// column its field is in, as Decode's errors do.
func TestSplitBadRecordNamesTheColumn(t *testing.T) {
	d, err := NewDecoder(Options{}, testenv.Schema(t, "a STRING", "b STRING"))
	if err != nil {
		t.Fatal(err)
	}
	for input, want := range map[string]string{
		"\"x,1\n":     "column a: quoted field starting at byte 0",
		"x,\"1\n":     "column b: quoted field starting at byte 2",
		"x,y,\"1\n":   "field 3: quoted field starting at byte 4",
		"\"x\ny\",\"": "column b: quoted field starting at byte 6",
	} {
		_, _, err := d.Split([]byte(input), true)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("split(%q): %v, want %q", input, err, want)
		}
	}
}
