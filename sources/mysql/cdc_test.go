package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sources/mysql"
)

// cdcColumns are the columns of the captured test tables, then the
// metadata columns table_name and binlog_pos.
var cdcColumns = []string{"id BIGINT", "v STRING", "n INT"}

// newCDC builds a binlog capture of the tables with cdcColumns and the
// table_name metadata column (last).
func newCDC(t testing.TB, cfg mysql.Config, rej *rejects) *mysql.CDC {
	t.Helper()
	return newCDCLogged(t, cfg, rej, slog.New(slog.DiscardHandler))
}

// newCDCLogged is newCDC logging to log.
func newCDCLogged(t testing.TB, cfg mysql.Config, rej *rejects, log *slog.Logger) *mysql.CDC {
	t.Helper()
	cfg.Mode = "cdc"
	sch := testenv.Schema(t, append(slices.Clone(cdcColumns), "tbl STRING")...)
	meta := make([]string, sch.Len())
	meta[len(meta)-1] = "table_name"
	env := connector.SourceEnv{Name: "cdc", Schema: sch, Metadata: meta, Logger: log}
	env.Reject = func(b connector.BadRecord) error { return b }
	if rej != nil {
		env.Reject = rej.reject
	}
	s, err := mysql.NewCDC(cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cdcTable creates a captured table (id BIGINT PRIMARY KEY, v
// VARCHAR(40), n INT) with rows 1..n, dropped when the test ends.
func cdcTable(t testing.TB, db *sql.DB, rows int) string {
	t.Helper()
	name := testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE `"+name+"` (id BIGINT PRIMARY KEY, v VARCHAR(40), n INT)")
	insertRows(t, db, name, 1, rows)
	return name
}

// insertRows inserts ids from..to with v = 'v<id>' and n = id.
func insertRows(t testing.TB, db *sql.DB, table string, from, to int) {
	t.Helper()
	for lo := from; lo <= to; lo += 1000 {
		var vals []string
		for i := lo; i <= min(to, lo+999); i++ {
			vals = append(vals, fmt.Sprintf("(%d, 'v%d', %d)", i, i, i))
		}
		testenv.Exec(t, db, "INSERT INTO `"+table+"` VALUES "+strings.Join(vals, ","))
	}
}

// folded is a changelog applied to a table, keyed by table and id: it
// fails t on a change that does not fit (an insert of a key already
// there, a retraction of a row not there or of another row), so that a
// change read twice or lost shows.
type folded struct {
	t    testing.TB
	rows map[string]string
	n    int
}

func newFolded(t testing.TB) *folded { return &folded{t: t, rows: map[string]string{}} }

func (f *folded) apply(b *row.Batch) {
	f.t.Helper()
	for _, c := range b.Changes {
		f.n++
		r := c.Row
		key := r[3].Str() + "/" + fmt.Sprint(r[0].Int64())
		text := fmt.Sprintf("%d|%s|%s", r[0].Int64(), valueText(r[1]), valueText(r[2]))
		old, there := f.rows[key]
		switch c.Kind {
		case row.Insert, row.UpdateAfter:
			if there {
				f.t.Fatalf("change %d: %s %s of a row already there (%s)", f.n, c.Kind, text, old)
			}
			f.rows[key] = text
		case row.Delete, row.UpdateBefore:
			if !there || old != text {
				f.t.Fatalf("change %d: %s %s, but the row there is %q (there: %v)", f.n, c.Kind, text, old, there)
			}
			delete(f.rows, key)
		}
	}
}

func valueText(v row.Value) string {
	if v.IsNull() {
		return "NULL"
	}
	if v.Type() == row.String {
		return v.Str()
	}
	return fmt.Sprint(v.Int64())
}

// lines are the folded rows, sorted.
func (f *folded) lines() []string {
	out := make([]string, 0, len(f.rows))
	for k, v := range f.rows {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// truth reads the tables as folded lines.
func truth(t testing.TB, db *sql.DB, tables ...string) []string {
	t.Helper()
	var out []string
	for _, tb := range tables {
		rows, err := db.Query("SELECT id, COALESCE(v, 'NULL'), COALESCE(CAST(n AS CHAR), 'NULL') FROM `" + tb + "`")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			var v, n string
			if err := rows.Scan(&id, &v, &n); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s/%d=%d|%s|%s", tb, id, id, v, n))
		}
		rows.Close()
	}
	slices.Sort(out)
	return out
}

// readWait bounds how long readUntil waits for the capture to catch up.
const readWait = time.Minute

// readUntil reads s into f until f equals the tables, failing after
// readWait with the difference.
func readUntil(t testing.TB, s connector.Source, f *folded, db *sql.DB, tables ...string) {
	t.Helper()
	want := truth(t, db, tables...)
	deadline := time.Now().Add(readWait)
	for !slices.Equal(f.lines(), want) {
		if time.Now().After(deadline) {
			got := f.lines()
			t.Fatalf("after %s the capture holds %d rows, the tables %d; first differences:\n%s", readWait, len(got), len(want), firstDiff(want, got))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		b, err := s.Read(ctx, 1024)
		cancel()
		if err != nil && ctx.Err() == nil {
			t.Fatalf("read: %v", err)
		}
		if b != nil {
			f.apply(b)
		}
	}
}

func firstDiff(want, got []string) string {
	var b strings.Builder
	w, g := map[string]bool{}, map[string]bool{}
	for _, x := range want {
		w[x] = true
	}
	for _, x := range got {
		g[x] = true
	}
	n := 0
	if len(want) > 0 && len(got) > 0 {
		fmt.Fprintf(&b, "  (first wanted %s, first got %s)\n", want[0], got[0])
	}
	for _, x := range want {
		if !g[x] && n < 5 {
			fmt.Fprintf(&b, "  missing %s\n", x)
			n++
		}
	}
	for _, x := range got {
		if !w[x] && n < 10 {
			fmt.Fprintf(&b, "  extra   %s\n", x)
			n++
		}
	}
	return b.String()
}

// TestCDCSnapshotThenChanges: two tables' snapshot, then inserts,
// updates (of a key too), deletes and a multi-row transaction from the
// binlog; the changelog folded must equal the tables after each step,
// each change fitting the rows before it.
func TestCDCSnapshotThenChanges(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	a, b := cdcTable(t, db, 500), cdcTable(t, db, 30)
	s := newCDC(t, mysql.Config{DSN: dsn, Tables: []string{a, b}, Scan: mysql.ScanConfig{FetchSize: 64}}, nil)
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	f := newFolded(t)
	readUntil(t, s, f, db, a, b)

	testenv.Exec(t, db, "INSERT INTO `"+a+"` VALUES (1001, 'new', NULL)")
	testenv.Exec(t, db, "UPDATE `"+a+"` SET v = 'upd', n = n + 1 WHERE id <= 10")
	testenv.Exec(t, db, "DELETE FROM `"+b+"` WHERE id > 20")
	testenv.Exec(t, db, "UPDATE `"+b+"` SET id = id + 100 WHERE id = 5")
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO `" + b + "` VALUES (7000, 'tx', 1)", "UPDATE `" + a + "` SET n = NULL WHERE id = 400", "DELETE FROM `" + a + "` WHERE id = 401"} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	readUntil(t, s, f, db, a, b)
}

// readBatches reads n batches of at most max changes into f.
func readBatches(t testing.TB, s connector.Source, f *folded, n, max int) {
	t.Helper()
	for range n {
		b, err := s.Read(testenv.Context(t, time.Minute), max)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		f.apply(b)
	}
}

// reopen closes s and returns a source of cfg restored from s's
// position, opened.
func reopen(t testing.TB, s *mysql.CDC, cfg mysql.Config) *mysql.CDC {
	t.Helper()
	pos, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s2 := newCDC(t, cfg, nil)
	if err := s2.Restore(pos); err != nil {
		t.Fatal(err)
	}
	if err := s2.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close(context.Background()) })
	return s2
}

// TestCDCResumeInTransaction: a source restored from a position inside
// a large transaction (batches of 100 of its 3000 row changes) hands on
// the rest of it, none twice.
func TestCDCResumeInTransaction(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	a := cdcTable(t, db, 3000)
	cfg := mysql.Config{DSN: dsn, Tables: []string{a}}
	s := newCDC(t, cfg, nil)
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	f := newFolded(t)
	readUntil(t, s, f, db, a)
	testenv.Exec(t, db, "UPDATE `"+a+"` SET n = n * 2")
	readBatches(t, s, f, 7, 100)
	pos, _ := s.Position()
	if !strings.Contains(string(pos), `"skip":`) {
		t.Fatalf("position %s: want one inside the transaction, with a skip count", pos)
	}
	s = reopen(t, s, cfg)
	readUntil(t, s, f, db, a)
}

// TestCDCResumeSnapshot interrupts the snapshot twice while the table
// changes, in the rows read and in those not yet read (and a key moves
// across): each restored source reads the rest of the table as of a
// later position, and the binlog's changes apply to each part only
// after the position it was read as of. Every change must fit, and the
// end must equal the table.
func TestCDCResumeSnapshot(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	a, b := cdcTable(t, db, 3000), cdcTable(t, db, 100)
	cfg := mysql.Config{DSN: dsn, Tables: []string{a, b}, Scan: mysql.ScanConfig{FetchSize: 100}}
	s := newCDC(t, cfg, nil)
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	f := newFolded(t)
	readBatches(t, s, f, 5, 1024) // ids 1..500 of a
	for _, q := range []string{
		"UPDATE `" + a + "` SET v = 'read' WHERE id = 50",
		"UPDATE `" + a + "` SET v = 'unread' WHERE id = 2000",
		"DELETE FROM `" + a + "` WHERE id IN (60, 2500)",
		"INSERT INTO `" + a + "` VALUES (5000, 'new', 1), (-1, 'low', 1)",
		"UPDATE `" + a + "` SET id = 9000 WHERE id = 10",
		"UPDATE `" + a + "` SET id = -5 WHERE id = 2600",
		"UPDATE `" + b + "` SET n = 0",
	} {
		testenv.Exec(t, db, q)
	}
	s = reopen(t, s, cfg)
	readBatches(t, s, f, 4, 1024) // on to about 900
	for _, q := range []string{
		"UPDATE `" + a + "` SET v = 'second' WHERE id IN (50, 700, 2000)",
		"DELETE FROM `" + a + "` WHERE id = 800",
		"UPDATE `" + a + "` SET id = 10 WHERE id = 9000",
		"DELETE FROM `" + b + "` WHERE id = 3",
	} {
		testenv.Exec(t, db, q)
	}
	s = reopen(t, s, cfg)
	readUntil(t, s, f, db, a, b)
	testenv.Exec(t, db, "UPDATE `"+a+"` SET n = -n WHERE id < 100")
	readUntil(t, s, f, db, a, b)
	if pos, _ := s.Position(); strings.Contains(string(pos), "segments") {
		t.Errorf("position %s still holds the snapshot's segments after the binlog passed them", pos)
	}
}

// binlogEnd is where the server's binlog ends now.
func binlogEnd(t testing.TB, db *sql.DB) (string, uint32) {
	t.Helper()
	rows, err := db.Query("SHOW MASTER STATUS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		t.Fatal("SHOW MASTER STATUS: no row (is the binlog on?)")
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	var pos uint32
	fmt.Sscan(string(vals[1]), &pos)
	return string(vals[0]), pos
}

// TestCDCConformance runs the connector kit on the two bounded reads of
// a binlog capture: the snapshot alone (scan.startup.mode snapshot) of
// two tables, and the binlog from a position to its end (stop: latest)
// with inserts, updates and deletes in transactions of many rows, so
// that positions fall inside transactions.
func TestCDCConformance(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	broken := func(t *testing.T) connector.Source {
		cfg, err := driver.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Addr = testenv.NewProxy(t, cfg.Addr).Addr() // never up
		return newCDC(t, mysql.Config{DSN: cfg.FormatDSN(), Table: "t"}, nil)
	}
	t.Run("snapshot", func(t *testing.T) {
		conntest.RunSource(t, conntest.Source{
			Max: 16,
			Input: func(t *testing.T) func(t *testing.T) connector.Source {
				a, b := cdcTable(t, db, 200), cdcTable(t, db, 50)
				cfg := mysql.Config{DSN: dsn, Tables: []string{a, b}, Scan: mysql.ScanConfig{FetchSize: 10, Startup: mysql.StartupConfig{Mode: "snapshot"}}}
				return func(t *testing.T) connector.Source { return newCDC(t, cfg, nil) }
			},
			Broken: broken,
		})
	})
	t.Run("binlog", func(t *testing.T) {
		conntest.RunSource(t, conntest.Source{
			Max:     16,
			Ordered: true,
			Input: func(t *testing.T) func(t *testing.T) connector.Source {
				a := cdcTable(t, db, 0)
				file, pos := binlogEnd(t, db)
				insertRows(t, db, a, 1, 150)
				testenv.Exec(t, db, "UPDATE `"+a+"` SET v = CONCAT(v, '!') WHERE id % 3 = 0")
				testenv.Exec(t, db, "DELETE FROM `"+a+"` WHERE id % 5 = 0")
				testenv.Exec(t, db, "UPDATE `"+a+"` SET id = id + 1000 WHERE id < 20")
				cfg := mysql.Config{DSN: dsn, Table: a, Stop: "latest", Scan: mysql.ScanConfig{Startup: mysql.StartupConfig{Mode: "specific-offset",
					SpecificOffset: mysql.OffsetConfig{File: file, Pos: pos}}}}
				return func(t *testing.T) connector.Source { return newCDC(t, cfg, nil) }
			},
			Broken: broken,
		})
	})
}

// TestCDCServerRestart restarts a private MariaDB (SIGTERM, down for a
// second) while a writer changes the table and the capture reads: the
// capture reconnects with backoff and reads on from the position it
// handed on, nothing lost and nothing twice.
func TestCDCServerRestart(t *testing.T) {
	m := testenv.StartMariaDB(t)
	db := m.Open()
	testenv.Exec(t, db, "CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(40), n INT)")
	insertRows(t, db, "t", 1, 100)
	var logs testenv.Buffer
	s := newCDCLogged(t, mysql.Config{DSN: m.DSN, Table: "t", Heartbeat: mysql.HeartbeatConfig{Interval: time.Second}}, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())

	// The writer: inserts and updates, as long as it is let; statements
	// that fail while the server is down are simply not made.
	stopWriter, writerDone := make(chan struct{}), make(chan int)
	go func() {
		done := 0
		for i := 101; ; i++ {
			select {
			case <-stopWriter:
				writerDone <- done
				return
			default:
			}
			if _, err := db.Exec("INSERT INTO t VALUES (?, 'w', ?)", i, i); err == nil {
				done++
			}
			db.Exec("UPDATE t SET n = n + 1 WHERE id = ?", i/2)
		}
	}()
	// The reader keeps what it reads for the test's goroutine to check.
	var batches []*row.Batch
	var readErr error
	stopReader, readerDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stopReader:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			b, err := s.Read(ctx, 1024)
			cancel()
			if err != nil && ctx.Err() == nil {
				readErr = err
				return
			}
			if b != nil {
				batches = append(batches, b)
			}
		}
	}()
	testenv.Eventually(t, time.Minute, "rows written before the restart", func() error {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n < 600 {
			return fmt.Errorf("%d rows (%v)", n, err)
		}
		return nil
	})
	m.Restart(time.Second)
	var before int
	if err := db.QueryRow("SELECT COUNT(*) FROM t").Scan(&before); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "rows written after the restart", func() error {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n < before+300 {
			return fmt.Errorf("%d rows (%v)", n, err)
		}
		return nil
	})
	close(stopWriter)
	wrote := <-writerDone
	close(stopReader)
	<-readerDone
	if readErr != nil {
		t.Fatalf("the capture failed across the restart: %v", readErr)
	}
	f := newFolded(t)
	for _, b := range batches {
		f.apply(b)
	}
	readUntil(t, s, f, db, "t")
	t.Logf("%d inserts by the writer, %d changes read", wrote, f.n)
	if !strings.Contains(logs.String(), "binlog connection lost: reconnecting") {
		t.Errorf("the capture never lost its binlog connection: the restart tested nothing\n%s", logs.String())
	}
}

// TestCDCTypes: every column type the source maps reads the same from
// the binlog as from the snapshot (the scan's text): a row of the
// snapshot and the same values inserted again, read from the binlog,
// agree column by column. The strings are latin1 and utf8mb4, the
// integers signed and unsigned.
func TestCDCTypes(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	name := testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE `"+name+"` (id BIGINT PRIMARY KEY, i INT, u INT UNSIGNED, ub BIGINT UNSIGNED, ti TINYINT, ok TINYINT(1), bt BIT(1), f FLOAT, d DOUBLE, "+
		"dec1 DECIMAL(10,2), big DECIMAL(30,10), s VARCHAR(20) CHARACTER SET latin1, s8 VARCHAR(20) CHARACTER SET utf8mb4, tx TEXT CHARACTER SET utf8mb4, "+
		"b VARBINARY(10), bl BLOB, dt DATE, ts DATETIME(3), ltz TIMESTAMP(6) NULL, tm TIME(3), yr YEAR, e ENUM('x','y','zé') CHARACTER SET latin1, st SET('a','b','c'), js JSON)")
	vals := "-5, 4000000000, 18000000000000000000, -7, 1, b'1', 1.1, 2.25, 12.34, 12345678901234567890.0123456789, 'héllo', 'wörld ✓', 'a text', x'00ff', x'0102', '2024-02-29', '2024-01-02 03:04:05.678', '2024-01-02 03:04:05.123456', '12:34:56.789', 2024, 'zé', 'a,c', '{\"k\": [1, 2]}'"
	testenv.Exec(t, db, "INSERT INTO `"+name+"` VALUES (1, "+vals+"), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
	sch := testenv.Schema(t, "id BIGINT", "i INT", "u BIGINT", "ub DECIMAL(20,0)", "ti TINYINT", "ok BOOLEAN", "bt BOOLEAN", "f FLOAT", "d DOUBLE",
		"dec1 DECIMAL(10,2)", "big DECIMAL(30,10)", "s STRING", "s8 STRING", "tx STRING", "b BYTES", "bl BYTES", "dt DATE", "ts TIMESTAMP(3)", "ltz TIMESTAMP_LTZ(6)",
		"tm TIME(3)", "yr INT", "e STRING", "st STRING", "js STRING")
	env := connector.SourceEnv{Name: "cdc", Schema: sch, Logger: slog.New(slog.DiscardHandler), Reject: func(b connector.BadRecord) error { return b }}
	s, err := mysql.NewCDC(mysql.Config{DSN: dsn, Table: name, Mode: "cdc"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	byID := map[int64]string{}
	read := func(n int) {
		for len(byID) < n {
			b, err := s.Read(testenv.Context(t, time.Minute), 1024)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range b.Changes {
				byID[c.Row[0].Int64()] = string(row.AppendPrint(nil, row.Insert, c.Row[1:]))
			}
		}
	}
	read(2)
	testenv.Exec(t, db, "INSERT INTO `"+name+"` SELECT id + 10, i, u, ub, ti, ok, bt, f, d, dec1, big, s, s8, tx, b, bl, dt, ts, ltz, tm, yr, e, st, js FROM `"+name+"`")
	read(4)
	for _, id := range []int64{1, 2} {
		if byID[id] != byID[id+10] {
			t.Errorf("row %d:\nsnapshot %s\nbinlog   %s", id, byID[id], byID[id+10])
		}
	}
	if want := "héllo, wörld ✓"; !strings.Contains(byID[11], want) {
		t.Errorf("binlog row %s lacks %q", byID[11], want)
	}
	t.Logf("read as %s", byID[11])
}

// TestCDCOddBatch: updates (two changes each) read in batches of an odd
// size: a batch one short of full ends there, and the update goes into
// the next one. (Such a Read once spun without end.)
func TestCDCOddBatch(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	a := cdcTable(t, db, 20)
	s := newCDC(t, mysql.Config{DSN: dsn, Table: a}, nil)
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	f := newFolded(t)
	readUntil(t, s, f, db, a)
	testenv.Exec(t, db, "UPDATE `"+a+"` SET n = n + 1")
	want := truth(t, db, a)
	for !slices.Equal(f.lines(), want) {
		b, err := s.Read(testenv.Context(t, time.Minute), 7)
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() > 7 || b.Len()%2 != 0 {
			t.Fatalf("a batch of %d changes: want at most 7, whole updates", b.Len())
		}
		f.apply(b)
	}
}

// TestCDCSavepoint: a transaction with a savepoint (logged as a
// statement inside it) and a rollback to it, read with a position taken
// in its middle: the restored capture reads the rest, none twice.
func TestCDCSavepoint(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	a := cdcTable(t, db, 5)
	cfg := mysql.Config{DSN: dsn, Table: a}
	s := newCDC(t, cfg, nil)
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	f := newFolded(t)
	readUntil(t, s, f, db, a)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"BEGIN", "UPDATE `" + a + "` SET n = 10", "SAVEPOINT sp1", "INSERT INTO `" + a + "` VALUES (50, 'gone', 1)",
		"ROLLBACK TO SAVEPOINT sp1", "UPDATE `" + a + "` SET n = 20 WHERE id > 2", "COMMIT"} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	readBatches(t, s, f, 1, 12) // the first update's five, then the savepoint, and one of the second's three
	pos, _ := s.Position()
	if !strings.Contains(string(pos), `"skip":6`) {
		t.Fatalf("position %s: want the transaction's start and 6 row changes handed on", pos)
	}
	s = reopen(t, s, cfg)
	readUntil(t, s, f, db, a)
}
