package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// TestPipelineResumes runs postgres CDC -> GROUP BY -> postgres upsert
// twice on one state directory: the first until the target holds the
// aggregate of the rows before it, then stopped (as a SIGTERM stops it);
// the second, after more changes, to the WAL position it started at
// (stop: latest). The second run goes on from the first's checkpoint,
// and the target table ends as the aggregate of the source table.
func TestPipelineResumes(t *testing.T) {
	pipelineResumes(t, "")
}

// TestUpsertPipelineResumes is TestPipelineResumes over a table of the
// default replica identity, whose updates and deletes log only the key:
// the source emits an upsert changelog (changelog_mode: upsert), the
// planner's normalization keeps each key's row (in checkpoints) and
// turns it into the -U/+U and -D the GROUP BY retracts by. Updates move
// rows between groups and change keys; the aggregate ends exact.
func TestUpsertPipelineResumes(t *testing.T) {
	pipelineResumes(t, "changelog_mode: upsert")
}

func pipelineResumes(t *testing.T, mode string) {
	f := newFixture(t, "id bigint PRIMARY KEY, customer text NOT NULL, amount int NOT NULL")
	if mode != "" {
		f.exec(t, "ALTER TABLE $T REPLICA IDENTITY DEFAULT")
	}
	target := testenv.PostgresTable(t, f.pool, "")
	exec(t, f.pool, "CREATE TABLE "+ident(target)+" (customer text PRIMARY KEY, n bigint NOT NULL, total bigint NOT NULL)")
	f.exec(t, "INSERT INTO $T SELECT i, 'c' || (i % 7), i FROM generate_series(1, 300) i")
	t.Setenv("ETLD_PG_TEST_DSN", f.dsn)
	dir := t.TempDir()
	yaml := `version: 1
name: cdc-%s
sources:
  - name: orders
    type: postgres
    dsn: ${ETLD_PG_TEST_DSN}
    table: %s
    slot: %s
    create_slot: true
    create_publication: true
    %s
%s
    schema: [id BIGINT, customer STRING, amount INT]
    key: [id]
transforms:
  - name: per_customer
    sql: SELECT customer, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY customer
sinks:
  - name: out
    from: per_customer
    type: postgres
    dsn: ${ETLD_PG_TEST_DSN}
    table: %s
`
	run := func(ctx context.Context, stop string) error {
		t.Helper()
		p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, dir, fmt.Sprintf(yaml, f.slot, f.table, f.slot, mode, stop, target))
		_, err := p.Run(ctx, pipeline.RunOptions{StateDir: filepath.Join(dir, "state"), CheckpointInterval: 50 * time.Millisecond})
		return err
	}
	want := func() []string {
		rows, err := f.pool.Query(testenv.Context(t, time.Minute), "SELECT customer || '|' || count(*) || '|' || sum(amount) FROM "+ident(f.table)+" GROUP BY customer ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	ctx, stop := context.WithCancel(testenv.Context(t, 2*time.Minute))
	done := make(chan error, 1)
	go func() { done <- run(ctx, "") }()
	first := want()
	testenv.Eventually(t, time.Minute, "the first run's table", func() error {
		if got := testenv.PostgresLines(t, f.pool, target, "|", "NULL"); !slices.Equal(got, first) {
			return fmt.Errorf("the table holds %v", got)
		}
		return nil
	})
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	f.exec(t, "UPDATE $T SET amount = amount * 2 WHERE id % 5 = 0")
	f.exec(t, "DELETE FROM $T WHERE id % 13 = 0")
	f.exec(t, "UPDATE $T SET customer = 'moved' WHERE id % 17 = 0")
	f.exec(t, "UPDATE $T SET id = id + 1000, amount = amount + 1 WHERE id % 19 = 0")
	f.exec(t, "INSERT INTO $T SELECT i, 'new', i FROM generate_series(301, 320) i")
	if err := run(testenv.Context(t, 2*time.Minute), "    stop: latest"); err != nil {
		t.Fatal(err)
	}
	if got := testenv.PostgresLines(t, f.pool, target, "|", "NULL"); !slices.Equal(got, want()) {
		t.Fatalf("after the second run the table holds\n%v\nwant\n%v", got, want())
	}
}
