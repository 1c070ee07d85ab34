package nexmark

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// fixed names a run that starts over the same: the reference test's seed
// and base time.
const fixed = "seed: 42\nbase_time: '2023-11-14 22:13:20'\n"

// build makes a nexmark source from its options' YAML, as the pipeline
// does: through a registry, over the nexmark DDL's columns unless cols
// names others.
func build(tb testing.TB, opts string, cols ...string) (*Source, error) {
	tb.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("type: nexmark\n"+opts), &doc); err != nil {
		tb.Fatalf("test YAML: %v", err)
	}
	if cols == nil {
		cols = Columns
	}
	r := connector.NewRegistry()
	Register(r)
	s, err := r.NewSource("p.yaml", &spec.Source{Type: "nexmark", Options: doc.Content[0], Path: "sources[0]"},
		connector.SourceEnv{Name: "nx", Schema: testenv.Schema(tb, cols...)})
	if err != nil {
		return nil, err
	}
	return s.(*Source), nil
}

func mustOpen(tb testing.TB, opts string) *Source {
	tb.Helper()
	s, err := build(tb, opts)
	if err != nil {
		tb.Fatalf("build: %v", err)
	}
	if err := s.Open(context.Background()); err != nil {
		tb.Fatalf("open: %v", err)
	}
	return s
}

// read reads n rows (all of a bounded source when n < 0) in reads of at
// most max, and reports whether the source ended.
func read(tb testing.TB, s *Source, n, max int) ([]row.Row, bool) {
	tb.Helper()
	var out []row.Row
	for n < 0 || len(out) < n {
		m := max
		if n >= 0 {
			m = min(max, n-len(out))
		}
		b, err := s.Read(context.Background(), m)
		if b != nil {
			if b.Len() > m || b.Len() == 0 {
				tb.Fatalf("Read(%d) returned %d rows", m, b.Len())
			}
			for _, c := range b.Changes {
				out = append(out, c.Row)
			}
		}
		if errors.Is(err, io.EOF) {
			return out, true
		}
		if err != nil {
			tb.Fatalf("read: %v", err)
		}
	}
	return out, false
}

func TestSourceKit(t *testing.T) {
	conntest.RunSource(t, conntest.Source{
		Max:     37,
		Ordered: true,
		Input: func(t *testing.T) func(t *testing.T) connector.Source {
			return func(t *testing.T) connector.Source {
				s, err := build(t, fixed+"events: 500\n")
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
		},
	})
}

// dumpRow is appendDump of a row the source made: what the reference's
// dump prints of the event.
func dumpRow(tb testing.TB, id int64, r row.Row) string {
	tb.Helper()
	e := event{typ: int32(r[0].Int64())}
	part := r[1+e.typ]
	for i, v := range r[1:] {
		if v.IsNull() != (int32(i) != e.typ) {
			tb.Fatalf("event %d of type %d: column %d null=%v", id, e.typ, i+1, v.IsNull())
		}
	}
	f := part.ItemSlice()
	ms := func(v row.Value) int64 { return v.Micros() / 1000 }
	switch e.typ {
	case typePerson:
		e.ts = ms(f[6])
		e.person = person{id: f[0].Int64(), name: f[1].Str(), email: f[2].Str(), creditCard: f[3].Str(),
			city: f[4].Str(), state: f[5].Str(), extra: f[7].Str()}
	case typeAuction:
		e.ts = ms(f[5])
		e.auction = auction{id: f[0].Int64(), itemName: f[1].Str(), desc: f[2].Str(), initialBid: f[3].Int64(),
			reserve: f[4].Int64(), expires: ms(f[6]), seller: f[7].Int64(), category: f[8].Int64(), extra: f[9].Str()}
	default:
		e.ts = ms(f[5])
		e.bid = bid{auction: f[0].Int64(), bidder: f[1].Int64(), price: f[2].Int64(), channel: f[3].Str(),
			url: f[4].Str(), extra: f[6].Str()}
		if !strings.HasPrefix(e.bid.url, "https://www.nexmark.com/") {
			tb.Fatalf("event %d: url %q", id, e.bid.url)
		}
	}
	return strings.TrimSuffix(string(appendDump(nil, id, &e)), "\n")
}

// TestRowsAreTheReferenceEvents: the source's rows, read in uneven
// batches, are the reference generator's first events, field by field.
func TestRowsAreTheReferenceEvents(t *testing.T) {
	_, _, head := readReference(t)
	s := mustOpen(t, "seed: 42\nbase_time: '2023-11-14 22:13:20'\n")
	if got := s.gen.baseTime; got != refBaseTime {
		t.Fatalf("base time %d, want %d", got, refBaseTime)
	}
	rows, ended := read(t, s, len(head), 333)
	if ended {
		t.Fatal("an unbounded source ended")
	}
	for i, r := range rows {
		if got := dumpRow(t, int64(i), r); got != head[i] {
			t.Fatalf("event %d:\n got  %s\n want %s", i, got, head[i])
		}
	}
}

func TestBounded(t *testing.T) {
	s := mustOpen(t, fixed+"events: 120\n")
	if !s.Bounded() {
		t.Fatal("events: 120 is not bounded")
	}
	rows, ended := read(t, s, -1, 50)
	if !ended || len(rows) != 120 {
		t.Fatalf("%d rows, ended %v; want 120 and the end", len(rows), ended)
	}
	if b, err := s.Read(context.Background(), 10); b != nil || !errors.Is(err, io.EOF) {
		t.Fatalf("Read after the end = %v, %v; want nil, EOF", b, err)
	}
}

func TestUnbounded(t *testing.T) {
	for _, opts := range []string{"", "events: 0\n"} {
		s := mustOpen(t, fixed+opts)
		if s.Bounded() {
			t.Fatalf("%q is bounded", opts)
		}
		// Past the default limit of a bounded source of any size we test.
		if rows, ended := read(t, s, 20000, 4096); ended || len(rows) != 20000 {
			t.Fatalf("%q: %d rows, ended %v", opts, len(rows), ended)
		}
	}
}

// TestRestoreFromPosition: a source restored from a position taken mid
// run makes the rest of the stream, event times included, even when the
// restored run's options would start elsewhere (no seed, another base).
func TestRestoreFromPosition(t *testing.T) {
	whole, _ := read(t, mustOpen(t, fixed), 1000, 1000)
	first := mustOpen(t, fixed)
	head, _ := read(t, first, 437, 100)
	pos, err := first.Position()
	if err != nil {
		t.Fatal(err)
	}
	second, err := build(t, "base_time: '2030-01-01 00:00:00'\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Restore(pos); err != nil {
		t.Fatal(err)
	}
	if err := second.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	tail, _ := read(t, second, 1000-len(head), 64)
	got := printedRows(append(head, tail...))
	want := printedRows(whole)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d after a restore at 437:\n got  %s\n want %s", i, got[i], want[i])
		}
	}
}

func printedRows(rows []row.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = row.Change{Kind: row.Insert, Row: r}.String()
	}
	return out
}

func TestRestoreRejectsBadPositions(t *testing.T) {
	s := mustOpen(t, fixed)
	read(t, s, 10, 10)
	good, _ := s.Position()
	for name, pos := range map[string][]byte{
		"empty":    nil,
		"version":  append([]byte{9}, good[1:]...),
		"cut":      good[:len(good)-3],
		"trailing": append(append([]byte{}, good...), 0),
	} {
		fresh, _ := build(t, fixed)
		if err := fresh.Restore(pos); err == nil {
			t.Errorf("%s: Restore(%x) succeeded", name, pos)
		} else if !strings.Contains(err.Error(), "nexmark nx: restore:") {
			t.Errorf("%s: error %q does not name the source", name, err)
		}
		if fresh.emitted != 0 || fresh.restored {
			t.Errorf("%s: a failed Restore changed the source", name)
		}
	}
}

func TestReplays(t *testing.T) {
	for opts, want := range map[string]string{
		fixed:                              "",
		"seed: 1\n":                        "without base_time a run",
		"base_time: '2024-01-01 00:00:00'": "without seed a run",
		"":                                 "without seed and base_time a run",
	} {
		s, err := build(t, opts)
		if err != nil {
			t.Fatalf("%q: %v", opts, err)
		}
		got := s.Replays()
		if (want == "") != (got == "") || !strings.HasPrefix(got, want) {
			t.Errorf("%q: Replays() = %q, want %q...", opts, got, want)
		}
	}
}

// TestEventTimesFollowTheRate: event n is n/first_event_rate seconds
// after base_time; the dateTime of the row's part is that time.
func TestEventTimesFollowTheRate(t *testing.T) {
	s := mustOpen(t, fixed+"first_event_rate: 1000\nnext_event_rate: 1000\n")
	rows, _ := read(t, s, 300, 300)
	base := time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC)
	for i, r := range rows {
		typ := r[0].Int64()
		f := r[1+typ].ItemSlice()
		at := map[int64]int{typePerson: 6, typeAuction: 5, typeBid: 5}[typ]
		if got, want := f[at].Time(), base.Add(time.Duration(i)*time.Millisecond); !got.Equal(want) {
			t.Fatalf("event %d at %v, want %v", i, got, want)
		}
	}
}

// TestProportions: each cycle of person+auction+bid proportion events
// holds that many of each kind, persons first, then auctions, then bids.
func TestProportions(t *testing.T) {
	s := mustOpen(t, fixed+"person_proportion: 2\nauction_proportion: 1\nbid_proportion: 3\n")
	rows, _ := read(t, s, 60, 60)
	var got strings.Builder
	for _, r := range rows {
		got.WriteByte(byte('0' + r[0].Int64()))
	}
	if want := strings.Repeat("001222", 10); got.String() != want {
		t.Fatalf("event types %s, want %s", got.String(), want)
	}
}

func TestRatePacing(t *testing.T) {
	s := mustOpen(t, fixed+"events: 300\nrate: 2000\n")
	start := time.Now()
	rows, ended := read(t, s, -1, 1024)
	if elapsed := time.Since(start); elapsed < 100*time.Millisecond {
		t.Fatalf("300 events at 2000/s took %v, want at least 100ms", elapsed)
	}
	if !ended || len(rows) != 300 {
		t.Fatalf("%d rows, ended %v", len(rows), ended)
	}
}

func TestRateWaitEndsWithContext(t *testing.T) {
	s := mustOpen(t, fixed+"rate: 0.1\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if b, err := s.Read(ctx, 10); b != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read = %v, %v; want nil and the context's error", b, err)
	}
}

func TestOptionErrors(t *testing.T) {
	tests := []struct{ opts, want string }{
		{"events: -1\n", "sources[0].events: must be >= 0 (0: unbounded), got -1"},
		{"rate: -2\n", "sources[0].rate: must be >= 0 events per second (0: as fast as possible), got -2"},
		{"first_event_rate: 0\n", "sources[0].first_event_rate: must be between 1 and 1073741824, got 0"},
		{"first_event_rate: 100\nnext_event_rate: 200\n",
			"sources[0].next_event_rate: 200 differs from first_event_rate 100: the reference generator times events by the first rate only"},
		{"bid_proportion: 0\n", "sources[0].bid_proportion: must be between 1 and 1048576, got 0"},
		{"bid_hot_ratio_bidders: -4\n", "sources[0].bid_hot_ratio_bidders: must be between 1 and 1073741824, got -4"},
		{"base_time: yesterday\n", `sources[0].base_time: "yesterday" is not a timestamp such as 2024-01-01 00:00:00 (UTC) or RFC 3339`},
		{"evnets: 3\n", "evnets"},
	}
	for _, tc := range tests {
		_, err := build(t, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.opts, err, tc.want)
		}
	}
}

func TestSchemaMustBeTheDDLs(t *testing.T) {
	_, err := build(t, "", "event_type INT", "bid STRING")
	if err == nil || !strings.Contains(err.Error(), "nexmark makes the nexmark DDL's columns, in order: event_type INT") ||
		!strings.Contains(err.Error(), "got event_type INT, bid STRING") {
		t.Fatalf("error %v", err)
	}
	// VARCHAR is STRING and the columns may be NOT NULL-free as the DDL's.
	ddl := []string{Columns[0], strings.ReplaceAll(Columns[1], "STRING", "VARCHAR"), Columns[2], Columns[3]}
	if _, err := build(t, fixed, ddl...); err != nil {
		t.Fatalf("the DDL's VARCHAR columns: %v", err)
	}
}

func TestRandomSeedIsLogged(t *testing.T) {
	var buf bytes.Buffer
	s, err := build(t, "events: 1\n")
	if err != nil {
		t.Fatal(err)
	}
	s.log = testLogger(&buf)
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	if !sc.Scan() || !strings.Contains(sc.Text(), "seed=") || !strings.Contains(sc.Text(), "base_time=") {
		t.Fatalf("log %q names no seed and base time", buf.String())
	}
}
