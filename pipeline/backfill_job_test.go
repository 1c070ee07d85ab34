package pipeline_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/formats/parquet"
	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
)

// TestBackfillJobCatchUpKafka: a backfill in steps over a Kafka topic:
// the replay runs up to the checkpoint C1 of a run stopped mid-topic;
// then the unedited pipeline goes on (as the daemon's running version
// does meanwhile) and stops with a checkpoint, which Advance catches up
// with over the partitions' offsets; it goes on and stops again with
// checkpoint C2; Finish catches both plans up over the offsets from the
// first to C2, and the edited pipeline run from its checkpoint ends with
// the edited query over every message.
func TestBackfillJobCatchUpKafka(t *testing.T) {
	f := newKafkaBackfill(t)
	ctx, state, load, produce := f.ctx, f.state, f.load, f.produce
	runUntil := func(p *pipeline.Pipeline, want []string) {
		t.Helper()
		f.runUntil(p, pipeline.RunOptions{CheckpointInterval: 50 * time.Millisecond}, want)
	}
	latest := func() int64 {
		t.Helper()
		store, err := checkpoint.OpenExisting(state, "bfk")
		if err != nil {
			t.Fatal(err)
		}
		cp, err := store.Latest()
		if err != nil || cp == nil {
			t.Fatalf("no checkpoint: %v", err)
		}
		return cp.ID
	}

	produce(0, 3000)
	stop := make(chan struct{})
	var once sync.Once
	if _, err := load(bfOld).Run(ctx, pipeline.RunOptions{StateDir: state, Stop: stop, BatchSize: 50,
		Tap: func(string, *row.Batch) { once.Do(func() { close(stop) }) }}); err != nil {
		t.Fatal(err)
	}
	c1 := latest()

	job, err := load(bfAddMax).StartBackfill(pipeline.BackfillOptions{StateDir: state})
	if err != nil || job == nil {
		t.Fatalf("start: %v, %v", job, err)
	}
	defer job.Close()
	if err := job.Ranged(); err != nil {
		t.Fatal(err)
	}
	if err := job.Replay(ctx); err != nil {
		t.Fatal(err)
	}
	if p := job.Progress(); p.Phase != pipeline.PhaseWaiting || p.Checkpoint != c1 || p.Rows == 0 {
		t.Fatalf("progress after the replay: %+v", p)
	}
	// The running version goes on meanwhile; the replays follow it.
	produce(3000, 3500)
	runUntil(load(bfOld), kafkaGroups(3500, false))
	followed := latest()
	if ok, err := job.Advance(ctx); err != nil || !ok {
		t.Fatalf("advance to checkpoint %d: %v, %v", followed, ok, err)
	}
	if p := job.Progress(); p.Checkpoint != followed || p.Phase != pipeline.PhaseWaiting {
		t.Fatalf("progress after advancing to %d: %+v", followed, p)
	}
	if ok, err := job.Advance(ctx); err != nil || ok {
		t.Fatalf("a second advance with no newer checkpoint: %v, %v", ok, err)
	}
	produce(3500, 4000)
	runUntil(load(bfOld), kafkaGroups(4000, false))
	c2 := latest()
	report, err := job.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if report.Checkpoint != c2 || c2 <= followed || followed <= c1 || len(report.Sinks) != 1 || report.Sinks[0].Upserted != bfKeys {
		t.Fatalf("report %+v, checkpoints %d then %d", report, c1, c2)
	}
	// Finished: the table is the edited query's over what C2 covers.
	if got, want := testenv.TableLines(t, f.db, f.table, ",", "null"), kafkaGroups(4000, true); !slices.Equal(got, want) {
		t.Fatalf("after Finish the table has %d rows, first %q; want the edited query's over the 4000 messages", len(got), got[:min(1, len(got))])
	}
	produce(4000, 5000)
	runUntil(load(bfAddMax), kafkaGroups(5000, true))
}

// TestBackfillParquetS3: an added aggregate backfilled over Parquet
// objects of an s3:// path, from a run stopped mid-input: the table ends
// as a from-scratch run of the edited pipeline writes it.
func TestBackfillParquetS3(t *testing.T) {
	srv := testenv.S3(t)
	srv.Setenv(t)
	bucket := srv.Bucket(t)
	db, dsn := testenv.MySQL(t)
	t.Setenv("BACKFILL_TEST_DSN", dsn)
	enc, err := parquet.NewEncoder(parquet.Options{RowGroupSize: 500}, testenv.Schema(t, "id INT", "k STRING", "v BIGINT"))
	if err != nil {
		t.Fatal(err)
	}
	const files, per = 3, bfRows / 4
	for f := range files {
		rows := make([]row.Row, per)
		for j := range rows {
			i := f*per + j
			rows[j] = row.Row{row.IntValue(int32(i)), row.StringValue(fmt.Sprintf("k%d", (i*7)%bfKeys)), row.BigIntValue(int64((i * 37) % 1000))}
		}
		srv.Put(t, bucket, fmt.Sprintf("in/part-%d.parquet", f), formattest.WriteFile(t, enc, rows, 0))
	}
	dir, state := t.TempDir(), t.TempDir()
	table := testenv.MySQLTable(t, db, "")
	fresh := testenv.MySQLTable(t, db, "_fresh")
	for _, tb := range []string{table, fresh} {
		testenv.Exec(t, db, "CREATE TABLE "+tb+" (k VARCHAR(16) PRIMARY KEY, n BIGINT NOT NULL, s BIGINT, m BIGINT)")
	}
	load := func(sql, table string) *pipeline.Pipeline {
		t.Helper()
		text := fmt.Sprintf(backfillPipeline, dir, sql, table, "", "")
		text = strings.Replace(text, "    path: "+dir+"/in.csv\n", fmt.Sprintf("    path: s3://%s/in/*.parquet\n    format: parquet\n", bucket), 1)
		file := filepath.Join(dir, "bf.yaml")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	stop := make(chan struct{})
	var once sync.Once
	if _, err := load(bfOld, table).Run(ctx, pipeline.RunOptions{StateDir: state, Stop: stop, BatchSize: 50,
		Tap: func(string, *row.Batch) { once.Do(func() { close(stop) }) }}); err != nil {
		t.Fatal(err)
	}
	if _, err := load(bfAddMax, fresh).Run(ctx, pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	want := testenv.TableLines(t, db, fresh, ",", "null")
	var report *pipeline.BackfillReport
	if _, err := load(bfAddMax, table).Run(ctx, pipeline.RunOptions{StateDir: state, Backfill: true,
		Backfilled: func(r *pipeline.BackfillReport) { report = r }}); err != nil {
		t.Fatal(err)
	}
	if report == nil || report.Stored == 0 {
		t.Fatalf("no backfill: %+v", report)
	}
	if got := testenv.TableLines(t, db, table, ",", "null"); len(want) != bfKeys || !slices.Equal(got, want) {
		t.Fatalf("backfilled table (%d rows) differs from a from-scratch run's (%d rows)", len(got), len(want))
	}
}
