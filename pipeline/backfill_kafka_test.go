package pipeline_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
)

// backfillKafka is bfOld's GROUP BY over a topic of two partitions, read
// in a consumer group, into MySQL.
const backfillKafka = `version: 1
name: bfk
sources:
  - name: a
    type: kafka
    brokers: [%[1]s]
    topic: %[2]s
    group_id: %[2]s
    format: json
    schema: [id INT, k STRING, v BIGINT]
transforms:
  - name: q
    sql: %[3]s
sinks:
  - name: out
    from: q
    type: mysql
    dsn: ${BACKFILL_TEST_DSN}
    table: %[4]s
`

// kafkaGroups is the table of bfAddMax (or bfOld: m null) over rows
// [0, n) as bfInput makes them.
func kafkaGroups(n int, withMax bool) []string {
	type agg struct{ n, s, m int }
	by := map[string]*agg{}
	for i := range n {
		k, v := fmt.Sprintf("k%d", (i*7)%bfKeys), (i*37)%1000
		a := by[k]
		if a == nil {
			a = &agg{m: v}
			by[k] = a
		}
		a.n, a.s, a.m = a.n+1, a.s+v, max(a.m, v)
	}
	var out []string
	for k, a := range by {
		m := "null"
		if withMax {
			m = fmt.Sprint(a.m)
		}
		out = append(out, fmt.Sprintf("%s,%d,%d,%s", k, a.n, a.s, m))
	}
	slices.Sort(out)
	return out
}

// TestBackfillKafka: the added aggregate of TestBackfill over a Kafka
// topic read in a consumer group: the backfill reads both partitions
// again from where the state began up to the checkpoint's offsets, and
// the run after it reads on from there, the messages produced after the
// checkpoint included; the table ends as the edited query over every
// message.
func TestBackfillKafka(t *testing.T) {
	f := newKafkaBackfill(t)
	ctx, state, load, produce, runUntil := f.ctx, f.state, f.load, f.produce, f.runUntil
	produce(0, 3000)
	// The first run stops as the sink takes its first rows, mid-topic.
	stop := make(chan struct{})
	var once sync.Once
	if _, err := load(bfOld).Run(ctx, pipeline.RunOptions{StateDir: state, Stop: stop, BatchSize: 50,
		Tap: func(string, *row.Batch) { once.Do(func() { close(stop) }) }}); err != nil {
		t.Fatal(err)
	}
	produce(3000, 4000)
	// An unedited run reads on to the end; the edit then backfills.
	runUntil(load(bfOld), pipeline.RunOptions{}, kafkaGroups(4000, false))
	produce(4000, 5000)
	_, err := load(bfAddMax).Run(ctx, pipeline.RunOptions{StateDir: state})
	if err == nil || !strings.Contains(err.Error(), "--backfill") {
		t.Fatalf("the edit without --backfill: %v", err)
	}
	var report *pipeline.BackfillReport
	runUntil(load(bfAddMax), pipeline.RunOptions{Backfill: true, Backfilled: func(r *pipeline.BackfillReport) { report = r }}, kafkaGroups(5000, true))
	if report == nil || len(report.Sinks) != 1 || report.Sinks[0].Upserted != bfKeys {
		t.Fatalf("report: %+v", report)
	}
}

// kafkaBackfill is the Kafka backfill tests' setup: a topic of two
// partitions, a MySQL table of the groups, the pipeline file's
// directory and a state directory.
type kafkaBackfill struct {
	t       *testing.T
	ctx     context.Context
	brokers string
	topic   string
	db      *sql.DB
	table   string
	dir     string
	state   string
	w       *kafka.Writer
}

func newKafkaBackfill(t *testing.T) *kafkaBackfill {
	brokers := testenv.Kafka(t)
	db, dsn := testenv.MySQL(t)
	t.Setenv("BACKFILL_TEST_DSN", dsn)
	f := &kafkaBackfill{t: t, ctx: testenv.Context(t, 2*time.Minute), brokers: brokers,
		topic: testenv.KafkaTopic(t, brokers, 2), db: db, dir: t.TempDir(), state: t.TempDir()}
	f.table = testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE "+f.table+" (k VARCHAR(16) PRIMARY KEY, n BIGINT NOT NULL, s BIGINT, m BIGINT)")
	f.w = &kafka.Writer{Addr: kafka.TCP(brokers), Topic: f.topic, BatchTimeout: time.Millisecond, RequiredAcks: kafka.RequireAll}
	t.Cleanup(func() { f.w.Close() })
	return f
}

// produce writes messages from to to (exclusive).
func (f *kafkaBackfill) produce(from, to int) {
	f.t.Helper()
	var msgs []kafka.Message
	for i := from; i < to; i++ {
		msgs = append(msgs, kafka.Message{Value: fmt.Appendf(nil, `{"id":%d,"k":"k%d","v":%d}`, i, (i*7)%bfKeys, (i*37)%1000)})
	}
	if err := f.w.WriteMessages(f.ctx, msgs...); err != nil {
		f.t.Fatalf("produce: %v", err)
	}
}

// load loads the pipeline with sql as its query.
func (f *kafkaBackfill) load(sql string) *pipeline.Pipeline {
	f.t.Helper()
	file := filepath.Join(f.dir, "bfk.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(backfillKafka, f.brokers, f.topic, sql, f.table)), 0o644); err != nil {
		f.t.Fatal(err)
	}
	p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

// runUntil runs p until the table is want, then stops it.
func (f *kafkaBackfill) runUntil(p *pipeline.Pipeline, opt pipeline.RunOptions, want []string) {
	f.t.Helper()
	stop := make(chan struct{})
	opt.Stop, opt.StateDir = stop, f.state
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(f.ctx, opt)
		done <- err
	}()
	testenv.Eventually(f.t, 30*time.Second, "the table", func() error {
		select {
		case err := <-done:
			f.t.Fatalf("the run ended: %v", err)
		default:
		}
		if got := testenv.TableLines(f.t, f.db, f.table, ",", "null"); !slices.Equal(got, want) {
			return fmt.Errorf("%d rows, want %d; %q...", len(got), len(want), got[:min(2, len(got))])
		}
		return nil
	})
	close(stop)
	if err := <-done; err != nil {
		f.t.Fatal(err)
	}
}
