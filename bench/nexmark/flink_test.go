package nexmark_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/etld/etld/conformance"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
)

// The recordings of Flink 2.3's final tables live in flink/EVENTS/qN.txt,
// one per query and event count, made by scripts/nexmark/flink.sh (make nexmark-flink): the
// nexmark project's own SQL run by Flink over the events etld's nexmark
// source writes (as json, the DDL's columns), its sink printing. A
// recording holds the final table's row count, the SHA-256 of its sorted
// rows (Flink's print text, one a line) and a sample of them, or Flink's
// error. TestMatchesFlink runs etld's file of the query over the same
// events and compares; Flink runs only when recording.

var (
	record   = flag.Bool("record", false, "run Flink 2.3 over the nexmark events and store its final tables in flink/EVENTS/ (make nexmark-flink)")
	queryDir = flag.String("queries", "", "with -record: the nexmark project's queries directory (nexmark-flink/src/main/resources/queries)")
	udfJar   = flag.String("udf-jar", "", "with -record: a jar holding the project's user functions (q14's count_char)")
	only     = flag.String("only", "", "with -record: record only these queries (q3,q5)")
	// make test checks the 100k recordings: etld under the race detector
	// takes minutes for the 1M ones, which a run without it checks
	// (-events 1000000) in about one.
	eventsN = flag.Int("events", 100000, "the recordings to check (or make, with -record): those over this many events")
)

// recordingPath is where the recording of a query over n events lives.
func recordingPath(name string, n int) string {
	return filepath.Join("flink", strconv.Itoa(n), name+".txt")
}

// sampleRows is how many rows of a final table a recording keeps, spread
// evenly over the sorted table, to name a difference the digest finds.
const sampleRows = 24

// recording is Flink's final table of one query, or why Flink gave none.
type recording struct {
	events int
	rows   int
	sha256 string
	sample map[int]string // index in the sorted table -> row
	err    string
	// changes: Flink's changelog is not its final table's rows alone
	// (an updating query): the kinds it printed, for the reader.
	kinds string
}

// notCompared lists the queries whose recordings are not compared, with
// the reason the test logs.
var notCompared = map[string]string{
	"q12": "processing-time windows: the rows depend on the wall clock of each run (only the row count is bounded)",
}

func TestMatchesFlink(t *testing.T) {
	if *record {
		t.Skip("recording")
	}
	for i := range 24 {
		name := fmt.Sprintf("q%d", i)
		t.Run(name, func(t *testing.T) {
			rec, err := readRecording(name, *eventsN)
			if err != nil {
				t.Fatal(err)
			}
			if rec.err != "" {
				t.Skipf("Flink cannot run %s: %s", name, firstLine(rec.err))
			}
			if why, ok := notCompared[name]; ok {
				t.Skipf("%s is not compared: %s", name, why)
			}
			if q := queries[name]; q.refused != "" {
				t.Skipf("etld refuses %s (TestQueries checks the refusal); Flink's table has %d rows", name, rec.rows)
			}
			got := etldFinal(t, name, rec.events)
			compareRecording(t, name, rec, got)
		})
	}
}

// etldFinal runs the query's file over n events and returns its sink's
// final table in Flink's print text, sorted.
func etldFinal(t *testing.T, name string, n int) []string {
	t.Helper()
	p, err := loadEvents(t, name, n)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return runFinal(t, name, p)
}

// runFinal runs p, the query's pipeline, and returns its sink's final
// table in Flink's print text, sorted.
func runFinal(t *testing.T, name string, p *pipeline.Pipeline) []string {
	t.Helper()
	var mu sync.Mutex
	var lines []string
	var line []byte
	tap := func(_ string, b *row.Batch) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range b.Changes {
			line = row.AppendPrint(line[:0], c.Kind, c.Row)
			lines = append(lines, string(line))
		}
	}
	if _, err := p.Run(context.Background(), pipeline.RunOptions{Tap: tap}); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	folded := conformance.Fold(lines, row.Schema{})
	if len(folded.Problems) > 0 {
		t.Fatalf("%s: %d problems in etld's changelog, the first %s", name, len(folded.Problems), folded.Problems[0])
	}
	return folded.Final
}

func compareRecording(t *testing.T, name string, rec recording, got []string) {
	t.Helper()
	if sum := digest(got); sum == rec.sha256 && len(got) == rec.rows {
		t.Logf("%s: %d rows, the same as Flink's", name, len(got))
		return
	}
	kept := keepTable(t, name, rec.events, got)
	var b strings.Builder
	fmt.Fprintf(&b, "%s over %d events: etld's final table (%d rows, kept in %s) is not Flink's (%d rows)", name, rec.events, len(got), kept, rec.rows)
	shown := 0
	for _, i := range slices.Sorted(maps.Keys(rec.sample)) {
		want := rec.sample[i]
		have := "(none)"
		if i < len(got) {
			have = got[i]
		}
		if have == want {
			continue
		}
		if _, found := slices.BinarySearch(got, want); found {
			fmt.Fprintf(&b, "\n  Flink's row %d is etld's too, at another place: %s", i, want)
		} else {
			fmt.Fprintf(&b, "\n  Flink's row %d is not etld's: %s\n          etld's row %d: %s", i, want, i, have)
		}
		if shown++; shown == 4 {
			break
		}
	}
	t.Error(b.String())
}

// keepTable writes etld's final table where a reader can diff it against
// a recording run's (scripts/nexmark/flink.sh keeps Flink's there).
func keepTable(t *testing.T, name string, events int, rows []string) string {
	dir := filepath.Join("..", ".cache", "nexmark", "etld-"+strconv.Itoa(events))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Log(err)
		return "nowhere"
	}
	path := filepath.Join(dir, name+".txt")
	if err := os.WriteFile(path, []byte(strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Log(err)
		return "nowhere"
	}
	abs, _ := filepath.Abs(path)
	return abs
}

// digest is the SHA-256 of rows, one a line.
func digest(rows []string) string {
	h := sha256.New()
	for _, r := range rows {
		h.Write([]byte(r))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return first
}

// A recording file: comment lines (#), then "key value" lines: events,
// rows, sha256, kinds, sample INDEX ROW (any number), error LINE (any
// number: a failure's condensed causes, one a line).
func readRecording(name string, n int) (recording, error) {
	path := recordingPath(name, n)
	f, err := os.Open(path)
	if err != nil {
		return recording{}, fmt.Errorf("no recording of Flink's %s (make nexmark-flink records them): %w", name, err)
	}
	defer f.Close()
	rec := recording{sample: map[int]string{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		bad := func(err error) error { return fmt.Errorf("%s:%d: %s: %w", path, ln, key, err) }
		switch key {
		case "events":
			if rec.events, err = strconv.Atoi(val); err != nil {
				return rec, bad(err)
			}
		case "rows":
			if rec.rows, err = strconv.Atoi(val); err != nil {
				return rec, bad(err)
			}
		case "sha256":
			rec.sha256 = val
		case "kinds":
			rec.kinds = val
		case "sample":
			at, r, _ := strings.Cut(val, " ")
			i, err := strconv.Atoi(at)
			if err != nil {
				return rec, bad(err)
			}
			rec.sample[i] = unescape(r)
		case "error":
			rec.err += val + "\n"
		default:
			return rec, fmt.Errorf("%s:%d: unknown key %q", path, ln, key)
		}
	}
	if err := sc.Err(); err != nil {
		return rec, err
	}
	if rec.events != n || (rec.err == "" && rec.sha256 == "") {
		return rec, fmt.Errorf("%s: want events %d and either sha256 or error", path, n)
	}
	return rec, nil
}

func writeRecording(name string, rec recording, header string) error {
	var b strings.Builder
	b.WriteString(header)
	fmt.Fprintf(&b, "events %d\n", rec.events)
	if rec.err != "" {
		for _, l := range strings.Split(strings.TrimRight(rec.err, "\n"), "\n") {
			fmt.Fprintf(&b, "error %s\n", l)
		}
	} else {
		fmt.Fprintf(&b, "rows %d\nsha256 %s\nkinds %s\n", rec.rows, rec.sha256, rec.kinds)
		for _, i := range slices.Sorted(maps.Keys(rec.sample)) {
			fmt.Fprintf(&b, "sample %d %s\n", i, escape(rec.sample[i]))
		}
	}
	path := recordingPath(name, rec.events)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// escape keeps a row on one line (a STRING may hold a line break).
func escape(s string) string { return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s) }

func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == 'n' {
				b.WriteByte('\n')
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sampleOf picks sampleRows rows of a sorted table, evenly spread, the
// first and the last among them.
func sampleOf(rows []string) map[int]string {
	s := map[int]string{}
	if len(rows) == 0 {
		return s
	}
	for k := range sampleRows {
		i := k * (len(rows) - 1) / (sampleRows - 1)
		s[i] = rows[i]
	}
	return s
}
