package runtime

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// lineSource reads lines as a file source does: one that is an integer
// becomes a BIGINT row, marked with its line, byte offset and the file's
// identity; any other is a bad record, handed to reject with its bytes.
// It stops before each line of pauses (counted from 1) until that
// pause's resume is closed, closing its paused, and asks for checkpoints
// when the test does (ask). Its position is the number of lines read.
type lineSource struct {
	lines  []string
	next   int
	reject func(connector.BadRecord) error
	pauses map[int]pause
	ask    func()
}

type pause struct{ paused, resume chan struct{} }

func newPause() pause { return pause{make(chan struct{}), make(chan struct{})} }

func (s *lineSource) Bounded() bool               { return false }
func (s *lineSource) Open(context.Context) error  { return nil }
func (s *lineSource) Close(context.Context) error { return nil }
func (s *lineSource) AskCheckpoints(ask func())   { s.ask = ask }
func (s *lineSource) Position() ([]byte, error)   { return binary.AppendVarint(nil, int64(s.next)), nil }
func (s *lineSource) Restore(pos []byte) (err error) {
	v, _ := binary.Varint(pos)
	s.next = int(v)
	return nil
}

func (s *lineSource) offset(i int) int64 {
	var n int64
	for _, l := range s.lines[:i] {
		n += int64(len(l)) + 1
	}
	return n
}

func (s *lineSource) Read(ctx context.Context, max int) (*row.Batch, error) {
	b := &row.Batch{}
	pos := row.NewPositions(max, ":")
	b.Origin = pos
	for b.Len() < max && s.next < len(s.lines) {
		if p, ok := s.pauses[s.next+1]; ok {
			if b.Len() > 0 {
				return b, nil
			}
			select {
			case <-p.paused:
			default:
				close(p.paused)
			}
			select {
			case <-p.resume:
				delete(s.pauses, s.next+1)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		i := s.next
		s.next++
		line := s.lines[i]
		v, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			bad := connector.BadRecord{Position: fmt.Sprintf("in.log:%d", i+1), Raw: []byte(line), Err: err,
				Location: &row.Location{File: "in.log", ID: "8:9", Line: int64(i + 1), Offset: s.offset(i)}}
			if err := s.reject(bad); err != nil {
				return nil, err
			}
			continue
		}
		b.Append(row.Insert, row.Row{row.BigIntValue(v)})
		pos.MarkAt(b.Len(), "in.log", "8:9", int64(i+1), s.offset(i))
	}
	if s.next == len(s.lines) {
		return b, io.EOF
	}
	return b, nil
}

// deadLetterGraph is lines -> Calc (fails on 13 and 27, as a CAST would)
// -> sink, with the source's on_error dead-letter into d.
func deadLetterGraph(t *testing.T, src *lineSource, d *DeadLetterNode, logger *slog.Logger) (*Graph, *memSink) {
	t.Helper()
	policy, err := NewPolicy("source", "logs", "dead-letter", d, logger)
	if err != nil {
		t.Fatal(err)
	}
	sf, cf := policy.Feed(), policy.Feed()
	src.reject = sf.Reject
	calc := &Calc{Name: "Calc(v)", Transform: "q", Input: row.NewSchema(row.Field{Name: "v", Type: row.Of(row.BigInt)}), Reject: cf.Reject,
		Project: []func(row.Row) (row.Value, error){func(r row.Row) (row.Value, error) {
			if v := r[0].Int64(); v == 13 || v == 27 {
				return row.NullValue, fmt.Errorf("cannot divide %d", v)
			}
			return r[0], nil
		}}}
	g := &Graph{Name: "p", BatchSize: 4}
	sn := &SourceNode{Node: Node{Name: "logs", Kind: "source", Fingerprint: "lines", Feed: sf}, Source: src}
	op := &OpNode{Node: Node{Name: "calc", Kind: "transform", Fingerprint: "calc", Feed: cf}, Input: &sn.Node, Op: calc}
	sink := &memSink{}
	g.Sources, g.Ops, g.DeadLetters = []*SourceNode{sn}, []*OpNode{op}, []*DeadLetterNode{d}
	g.Sinks = []*SinkNode{{Node: Node{Name: "out", Kind: "sink", Fingerprint: "mem"}, Input: &op.Node, Sink: sink, Mode: connector.Append}}
	return g, sink
}

// testLines: 40 lines, bad ones at 3, 9, 21, 30 (one not UTF-8), and 13
// and 27 on which the Calc fails.
func testLines() []string {
	var lines []string
	for i := 1; i <= 40; i++ {
		switch i {
		case 3, 9, 21:
			lines = append(lines, fmt.Sprintf("x%d", i))
		case 30:
			lines = append(lines, "\xff\xfe")
		default:
			lines = append(lines, strconv.Itoa(i))
		}
	}
	return lines
}

type deadLetterLine struct {
	ID, Source, Transform, Position, File, Error string
	FileID                                       string `json:"file_id"`
	Offset                                       *int64
	Checkpoint                                   int64
	Record                                       *string
	RecordBase64                                 string          `json:"record_base64"`
	Row                                          json.RawMessage `json:"row"`
}

func readDeadLetterFile(t *testing.T, path string) ([]deadLetterLine, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []deadLetterLine
	var texts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var d deadLetterLine
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("dead letter %q: %v", sc.Text(), err)
		}
		out = append(out, d)
		// The line without its checkpoint, which a restored run numbers
		// anew.
		texts = append(texts, strings.Replace(sc.Text(), fmt.Sprintf(`"checkpoint":%d,`, d.Checkpoint), "", 1))
	}
	// A source's entries and its transforms' are made on goroutines of
	// their own: their order varies from run to run.
	slices.Sort(texts)
	return out, texts
}

// A dead letter keeps the record as read (a source's bad line, its bytes
// in base64 when they are not UTF-8) or the row a transform failed on as
// an object of named columns, and where the record is in its file: name,
// identity and byte offset besides the line.
func TestDeadLetterEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dlq", "bad.jsonl")
	var log strings.Builder
	src := &lineSource{lines: testLines()}
	g, sink := deadLetterGraph(t, src, NewDeadLetterFile(path), slog.New(slog.NewTextHandler(&log, nil)))
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(sink.changes) != 34 {
		t.Errorf("sink got %d rows, want 34", len(sink.changes))
	}
	got, _ := readDeadLetterFile(t, path)
	if len(got) != 6 {
		t.Fatalf("%d dead letters, want 6: %+v", len(got), got)
	}
	byPos := map[string]deadLetterLine{}
	for _, d := range got {
		byPos[d.Position] = d
		if d.Source != "logs" || d.File != "in.log" || d.FileID != "8:9" || d.Offset == nil || d.ID == "" || d.Checkpoint < 1 {
			t.Errorf("dead letter %+v: want source logs, file in.log, its identity and offset, an id and a checkpoint", d)
		}
	}
	if d := byPos["in.log:3"]; d.Record == nil || *d.Record != "x3" || d.Row != nil || d.Transform != "" || *d.Offset != src.offset(2) {
		t.Errorf("bad line 3: %+v, want the raw record x3 at offset %d", d, src.offset(2))
	}
	if d := byPos["in.log:30"]; d.Record != nil || d.RecordBase64 != "//4=" {
		t.Errorf("bad line 30 (not UTF-8): %+v, want its bytes in record_base64", d)
	}
	if d := byPos["in.log:13"]; d.Transform != "q" || string(d.Row) != `{"v":13}` || d.Record != nil || !strings.Contains(d.Error, "cannot divide 13") || *d.Offset != src.offset(12) {
		t.Errorf("row 13: %+v, want transform q, the row as {\"v\":13} and the offset of line 13", d)
	}
	if !strings.Contains(log.String(), `msg="dead-lettered a bad record"`) || strings.Contains(log.String(), "skipped") {
		t.Errorf("the log does not say the records were dead-lettered:\n%s", log.String())
	}
}

// A run killed after a checkpoint, with entries written past it, and
// restored from that checkpoint leaves every entry in the dead-letter
// file once: the file is cut back to the checkpoint's length before the
// records after it are read again.
func TestDeadLettersOnceAfterRestore(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.jsonl")
	g, _ := deadLetterGraph(t, &lineSource{lines: testLines()}, NewDeadLetterFile(ref), slog.New(slog.DiscardHandler))
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	_, want := readDeadLetterFile(t, ref)

	path := filepath.Join(dir, "bad.jsonl")
	store, err := checkpoint.Open(filepath.Join(dir, "state"), "p")
	if err != nil {
		t.Fatal(err)
	}
	cpo := CheckpointOptions{Interval: time.Hour, Store: store} // checkpoints only when asked
	// Life 1: a checkpoint at line 20, then on to line 36, then killed.
	at20, at36 := newPause(), newPause()
	src := &lineSource{lines: testLines(), pauses: map[int]pause{20: at20, 36: at36}}
	d := NewDeadLetterFile(path)
	g, _ = deadLetterGraph(t, src, d, slog.New(slog.DiscardHandler))
	ctx, kill := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, g, Options{Checkpoint: cpo}) }()
	<-at20.paused
	src.ask()
	testenv.Eventually(t, 10*time.Second, "the checkpoint at line 20", func() error {
		if g.Checkpoints.Count.Load() < 1 {
			return errors.New("no checkpoint yet")
		}
		return nil
	})
	close(at20.resume)
	<-at36.paused
	// Entries for lines 3, 9, 13 before the checkpoint; 21, 27, 30 after.
	testenv.Eventually(t, 10*time.Second, "the entries up to line 36", func() error {
		if n := d.Stats.RowsIn.Load(); n < 6 {
			return fmt.Errorf("%d entries written", n)
		}
		return nil
	})
	kill()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("killed run: %v", err)
	}
	if _, lines := readDeadLetterFile(t, path); len(lines) != 6 {
		t.Fatalf("the killed run left %d entries, want 6 (3 past its checkpoint): the test proves nothing", len(lines))
	}

	// Life 2: restored from the checkpoint at line 20, to the end.
	g, _ = deadLetterGraph(t, &lineSource{lines: testLines()}, NewDeadLetterFile(path), slog.New(slog.DiscardHandler))
	if err := Run(context.Background(), g, Options{Checkpoint: cpo}); err != nil {
		t.Fatal(err)
	}
	if g.Checkpoints.Restored.Load() != 1 {
		t.Fatalf("restored checkpoint %d, want 1", g.Checkpoints.Restored.Load())
	}
	_, got := readDeadLetterFile(t, path)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("dead letters after the restore:\n%s\nwant, as a run without a crash:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Dead letters into a sink: the sink gets them as rows of
// DeadLetterSchema, with the checkpoints' barriers after them, and an
// upsert by id.
func TestDeadLettersToASink(t *testing.T) {
	d := NewDeadLetterSink("errors")
	g, _ := deadLetterGraph(t, &lineSource{lines: testLines()}, d, slog.New(slog.DiscardHandler))
	errs := &memSink{}
	g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: "errors", Kind: "sink", Fingerprint: "mem"}, Input: &d.Node, Sink: errs,
		Mode: connector.Upsert, Key: []int{DeadLetterSchema.Index(DeadLetterKey)}})
	store, err := checkpoint.Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), g, Options{Checkpoint: CheckpointOptions{Interval: time.Millisecond, Store: store}}); err != nil {
		t.Fatal(err)
	}
	if len(errs.changes) != 6 || errs.flushed != 6 {
		t.Fatalf("the dead-letter sink got %d rows, flushed %d; want 6", len(errs.changes), errs.flushed)
	}
	col := func(r row.Row, name string) row.Value { return r[DeadLetterSchema.Index(name)] }
	seen := map[string]bool{}
	for _, c := range errs.changes {
		r := c.Row
		seen[col(r, "id").Str()] = true
		if col(r, "pipeline").Str() != "p" || col(r, "source").Str() != "logs" || col(r, "file").Str() != "in.log" || col(r, "checkpoint").IsNull() {
			t.Errorf("dead letter %v: want pipeline p, source logs, file in.log and a checkpoint", r)
		}
		if pos := col(r, "position").Str(); pos == "in.log:27" && (col(r, "row").Str() != `{"v":27}` || col(r, "transform").Str() != "q" || !col(r, "record").IsNull()) {
			t.Errorf("row 27: %v, want its row and transform", r)
		} else if pos == "in.log:9" && col(r, "record").Str() != "x9" {
			t.Errorf("line 9: %v, want the record x9", r)
		}
	}
	if len(seen) != 6 {
		t.Errorf("%d ids for 6 entries", len(seen))
	}
	if g.Checkpoints.Count.Load() < 1 {
		t.Error("no checkpoint completed")
	}
}

// A run with a state directory killed before its first checkpoint leaves
// no checkpoint to say where its entries begin: the state directory's
// note does. The next run cuts the file back to it, and keeps what was in
// the file before (an earlier pipeline's entries).
func TestDeadLettersOnceAfterAKillBeforeTheFirstCheckpoint(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.jsonl")
	g, _ := deadLetterGraph(t, &lineSource{lines: testLines()}, NewDeadLetterFile(ref), slog.New(slog.DiscardHandler))
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	_, want := readDeadLetterFile(t, ref)

	path := filepath.Join(dir, "bad.jsonl")
	const before = `{"id":"x","position":"an earlier run","checkpoint":1,"error":"kept"}` + "\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := checkpoint.Open(filepath.Join(dir, "state"), "p")
	if err != nil {
		t.Fatal(err)
	}
	cpo := CheckpointOptions{Interval: time.Hour, Store: store}
	at20 := newPause()
	src := &lineSource{lines: testLines(), pauses: map[int]pause{20: at20}}
	d := NewDeadLetterFile(path)
	g, _ = deadLetterGraph(t, src, d, slog.New(slog.DiscardHandler))
	ctx, kill := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, g, Options{Checkpoint: cpo}) }()
	<-at20.paused
	testenv.Eventually(t, 10*time.Second, "the entries up to line 20", func() error {
		if n := d.Stats.RowsIn.Load(); n < 3 {
			return fmt.Errorf("%d entries written", n)
		}
		return nil
	})
	kill()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("killed run: %v", err)
	}
	if cp, _ := store.Latest(); cp != nil {
		t.Fatalf("the killed run took checkpoint %d: the test wants none", cp.ID)
	}

	g, _ = deadLetterGraph(t, &lineSource{lines: testLines()}, NewDeadLetterFile(path), slog.New(slog.DiscardHandler))
	if err := Run(context.Background(), g, Options{Checkpoint: cpo}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), before) {
		t.Fatalf("the earlier entries are gone:\n%s", data)
	}
	if err := os.WriteFile(path, data[len(before):], 0o644); err != nil {
		t.Fatal(err)
	}
	_, got := readDeadLetterFile(t, path)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("dead letters after the restart:\n%s\nwant, as a run without a crash:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
