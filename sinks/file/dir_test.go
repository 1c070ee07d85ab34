package file

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

var bidSchema = testenv.Schema(&testing.T{}, "id BIGINT", "name STRING", "price DECIMAL(10,2)", "ts TIMESTAMP(3)", "tags ARRAY<STRING>", "dt STRING", "hr STRING")

// bids are n rows, one every 1.7 s of event time from 2026-12-06
// 22:00, so that they cross days and hours.
func bids(n int) []row.Row {
	start := time.Date(2026, 12, 6, 22, 0, 0, 0, time.UTC).UnixMicro()
	rows := make([]row.Row, n)
	for i := range rows {
		ts := start + int64(i)*1_700_000
		t := time.UnixMicro(ts).UTC()
		var tags []row.Value
		for k := range i % 3 {
			tags = append(tags, row.StringValue(fmt.Sprintf("t%d", k)))
		}
		rows[i] = row.Row{
			row.BigIntValue(int64(i)), row.StringValue(fmt.Sprintf("bidder %d", i%17)), row.DecimalValue(int64(i*37%100000), 2),
			row.TimestampValue(ts - ts%1000), row.ArrayValue(tags),
			row.StringValue(t.Format("2006-01-02")), row.StringValue(t.Format("15")),
		}
		if i%11 == 0 {
			rows[i][1] = row.NullValue
		}
	}
	return rows
}

// dirLife drives a directory sink as the runtime does: batches of
// random size, the watermark after each (the batch's last event time
// less 4 s), checkpoints now and then.
type dirLife struct {
	t    *testing.T
	s    *DirSink
	rows []row.Row
	// next is the row to write next; states are the checkpoints taken,
	// each with the row it covers up to.
	next   int
	states [][]byte
	covers []int
	// every: a checkpoint follows a batch with probability 1/every (4
	// when 0).
	every int
}

func newDirSink(t *testing.T, path, options string, resumable bool, state []byte) *DirSink {
	t.Helper()
	sink, err := buildAny(t, "path: "+path+"\n"+options)
	if err != nil {
		t.Fatal(err)
	}
	s := sink.(*DirSink)
	if err := s.Bind(connector.SinkInput{Schema: bidSchema, Mode: connector.Append}); err != nil {
		t.Fatal(err)
	}
	if state != nil {
		if err := s.Restore(state); err != nil {
			t.Fatal(err)
		}
	}
	s.SetRun(connector.RunInfo{Resumable: resumable})
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if state != nil {
		if err := s.Commit(context.Background(), state); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// run writes rows from l.next until stop, checkpointing with probability
// 1/4 after a batch (committing at once unless commitLate).
func (l *dirLife) run(rng *rand.Rand, stop int) {
	ctx := context.Background()
	for l.next < stop {
		n := min(1+rng.IntN(40), stop-l.next)
		b := row.NewBatch(n, bidSchema.Len())
		for _, r := range l.rows[l.next : l.next+n] {
			b.Append(row.Insert, slices.Clone(r))
		}
		if err := l.s.Write(ctx, b); err != nil {
			l.t.Fatal(err)
		}
		l.next += n
		last := l.rows[l.next-1][3].Micros()
		if err := l.s.Watermark(ctx, last-4_000_000); err != nil {
			l.t.Fatal(err)
		}
		if rng.IntN(max(l.every, 4)) == 0 {
			l.checkpoint(rng.IntN(3) > 0)
		}
	}
}

func (l *dirLife) checkpoint(commit bool) {
	ctx := context.Background()
	if err := l.s.Flush(ctx); err != nil {
		l.t.Fatal(err)
	}
	st, err := l.s.Snapshot(ctx)
	if err != nil {
		l.t.Fatal(err)
	}
	l.states, l.covers = append(l.states, st), append(l.covers, l.next)
	if commit {
		if err := l.s.Commit(ctx, st); err != nil {
			l.t.Fatal(err)
		}
	}
}

// finish ends the input as the runtime does: Finish, a final checkpoint
// and its commit, Close.
func (l *dirLife) finish() {
	ctx := context.Background()
	if err := l.s.Finish(ctx); err != nil {
		l.t.Fatal(err)
	}
	l.checkpoint(true)
	if err := l.s.Close(ctx); err != nil {
		l.t.Fatal(err)
	}
}

// crashDir drops s as a killed process would, and scribbles after the
// end of its in-progress files, as writes the checkpoint never covered.
func crashDir(t *testing.T, s *DirSink) {
	for _, p := range s.open {
		p.w.Abort()
		if _, err := p.f.Write([]byte("bytes of a write the checkpoint never covered")); err != nil {
			t.Fatal(err)
		}
		p.f.Close()
	}
}

// tree reads every file under dir: relative name to content.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, got, want map[string][]byte) {
	t.Helper()
	var names []string
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if g, ok := got[n]; !ok {
			t.Errorf("%s is missing", n)
		} else if !bytes.Equal(g, want[n]) {
			t.Errorf("%s differs: %d bytes, want %d", n, len(g), len(want[n]))
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("%s should not be there", n)
		}
	}
}

const partitionedParquet = `format: {type: parquet, row_group_size: 50}
partition_by: [dt, hr]
partition_commit: {trigger: partition-time, delay: 1h, timestamp_pattern: "$dt $hr:00:00"}
rolling: {file_size: 3KiB}`

// TestDirResume writes the same rows once without a state directory and
// in lives killed at random moments, each restored from the last
// checkpoint it stored (committed or not): the directories are
// byte-identical, part for part and success file for success file, and
// no in-progress file is left.
func TestDirResume(t *testing.T) {
	for _, options := range []string{partitionedParquet, "format: {type: parquet, row_group_size: 40}\nrolling: {file_size: 5KiB}", "format: csv\npartition_by: [dt]\npartition_commit: {delay: 1d}\nrolling: {file_size: 2KiB}",
		"format: {type: avro, block_size: 700}\nrolling: {file_size: 5KiB}",
		"format: {type: avro, codec: zstd, block_size: 500}\npartition_by: [dt]\npartition_commit: {delay: 1d}\nrolling: {file_size: 4KiB}"} {
		t.Run(strings.SplitN(options, "\n", 2)[0], func(t *testing.T) {
			rows := bids(3000)
			rng := rand.New(rand.NewPCG(1, 2))
			ref := filepath.Join(t.TempDir(), "ref")
			l := &dirLife{t: t, s: newDirSink(t, ref, options, false, nil), rows: rows}
			l.run(rng, len(rows))
			l.finish()
			want := tree(t, ref)
			if len(want) < 6 {
				t.Fatalf("only %d files: %v", len(want), want)
			}

			out := filepath.Join(t.TempDir(), "out")
			var state []byte
			next, lives := 0, 0
			for done := false; !done; lives++ {
				l := &dirLife{t: t, s: newDirSink(t, out, options, true, state), rows: rows, next: next}
				l.run(rng, min(len(rows), l.next+rng.IntN(900)))
				if l.next == len(rows) && rng.IntN(2) == 0 {
					l.finish()
					done = true
					continue
				}
				crashDir(t, l.s)
				if len(l.states) > 0 {
					state, next = l.states[len(l.states)-1], l.covers[len(l.covers)-1]
				}
			}
			t.Logf("%d lives, %d files", lives, len(want))
			sameTree(t, tree(t, out), want)
		})
	}
}
