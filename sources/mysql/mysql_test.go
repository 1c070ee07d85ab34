package mysql_test

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sources/mysql"
)

type rejects struct {
	mu   sync.Mutex
	recs []connector.BadRecord
}

func (r *rejects) reject(b connector.BadRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, b)
	return nil
}

func newSource(t testing.TB, cfg mysql.Config, sch row.Schema, rej *rejects) *mysql.Source {
	t.Helper()
	env := connector.SourceEnv{Name: "s", Schema: sch, Logger: slog.New(slog.DiscardHandler)}
	if rej != nil {
		env.Reject = rej.reject
	} else {
		env.Reject = func(b connector.BadRecord) error { return b }
	}
	s, err := mysql.New(cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func i64(v int64) *int64 { return &v }

// TestScanTypes reads every column type the source maps, unpartitioned
// and in ranges, and both give the same rows as the table holds.
func TestScanTypes(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	name := testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE `"+name+"` (id BIGINT PRIMARY KEY, i INT, ok TINYINT(1), f FLOAT, d DOUBLE, dec1 DECIMAL(10,2), s VARCHAR(20), b VARBINARY(10), dt DATE, ts DATETIME(3), ltz TIMESTAMP(6) NULL)")
	testenv.Exec(t, db, "INSERT INTO `"+name+"` VALUES (1, -5, 1, 1.5, 2.25, 12.34, 'héllo', x'00ff', '2024-02-29', '2024-01-02 03:04:05.678', '2024-01-02 03:04:05.123456'), (2, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
	for i := 3; i <= 100; i++ {
		testenv.Exec(t, db, "INSERT INTO `"+name+"` (id, i, s) VALUES (?, ?, ?)", i, i*10, fmt.Sprintf("r%d", i))
	}
	sch := testenv.Schema(t, "id BIGINT", "i INT", "ok BOOLEAN", "f FLOAT", "d DOUBLE", "dec1 DECIMAL(10,2)", "s STRING", "b BYTES", "dt DATE", "ts TIMESTAMP(3)", "ltz TIMESTAMP_LTZ(6)")
	read := func(cfg mysql.Config) []string {
		s := newSource(t, cfg, sch, nil)
		if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		rows := conntest.Printed(conntest.ReadAll(t, s, 1024))
		sort.Strings(rows)
		return rows
	}
	plain := read(mysql.Config{DSN: dsn, Table: name})
	if len(plain) != 100 {
		t.Fatalf("%d rows, want 100", len(plain))
	}
	want1 := "+I[1, -5, true, 1.5, 2.25, 12.34, héllo, [0, -1], 2024-02-29, 2024-01-02T03:04:05.678, 2024-01-02T03:04:05.123456Z]"
	want2 := "+I[2, null, false, null, null, null, null, null, null, null, null]"
	got := strings.Join(plain, "\n")
	for _, w := range []string{want1, want2} {
		if !strings.Contains(got, w) {
			t.Errorf("rows lack %s:\n%s", w, strings.Join(plain[:3], "\n"))
		}
	}
	parted := read(mysql.Config{DSN: dsn, Table: name, Scan: mysql.ScanConfig{FetchSize: 7, Partition: mysql.PartitionConfig{Column: "id", Num: 4, LowerBound: i64(1), UpperBound: i64(100)}}})
	if strings.Join(parted, "\n") != got {
		t.Errorf("partitioned scan differs:\n%s\nwant\n%s", strings.Join(parted, "\n"), got)
	}
	// As in Flink, the bounds filter: ids 1..10 only.
	few := read(mysql.Config{DSN: dsn, Table: name, Scan: mysql.ScanConfig{Partition: mysql.PartitionConfig{Column: "id", Num: 3, LowerBound: i64(1), UpperBound: i64(10)}}})
	if len(few) != 10 {
		t.Errorf("bounds 1..10 gave %d rows", len(few))
	}
	q := read(mysql.Config{DSN: dsn, Query: "SELECT * FROM `" + name + "` WHERE id <= 2"})
	if len(q) != 2 || q[0] != want1 {
		t.Errorf("query gave %v", q)
	}
}

// TestScanResume stops a partitioned scan after some batches, restores a
// new source from its position and checks that the two runs together
// read every row exactly once (the table has a primary key).
func TestScanResume(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	name := testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE `"+name+"` (id BIGINT PRIMARY KEY, v VARCHAR(10))")
	var vals []string
	for i := 1; i <= 2000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'v%d')", i, i))
	}
	testenv.Exec(t, db, "INSERT INTO `"+name+"` VALUES "+strings.Join(vals, ","))
	sch := testenv.Schema(t, "id BIGINT", "v STRING")
	cfg := mysql.Config{DSN: dsn, Table: name, Scan: mysql.ScanConfig{FetchSize: 50, Partition: mysql.PartitionConfig{Column: "id", Num: 3, LowerBound: i64(1), UpperBound: i64(2000)}}}
	s := newSource(t, cfg, sch, nil)
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	var first []string
	for range 13 {
		b, err := s.Read(testenv.Context(t, time.Minute), 1024)
		if err != nil {
			t.Fatalf("read %d rows, then: %v", len(first), err)
		}
		first = append(first, conntest.Printed(b.Changes)...)
	}
	pos, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	s.Close(context.Background())

	s2 := newSource(t, cfg, sch, nil)
	if err := s2.Restore(pos); err != nil {
		t.Fatal(err)
	}
	if err := s2.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	defer s2.Close(context.Background())
	rest := conntest.Printed(conntest.ReadAll(t, s2, 1024))
	seen := map[string]int{}
	for _, r := range append(first, rest...) {
		seen[r]++
	}
	if len(first) != 13*50 || len(seen) != 2000 || len(first)+len(rest) != 2000 {
		t.Errorf("first run %d rows, second %d, distinct %d: want 650 + 1350 = 2000 distinct", len(first), len(rest), len(seen))
	}
}

// TestScanBadValue: a value that does not parse as the declared type goes
// to on_error with the table and the row's primary key.
func TestScanBadValue(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	name := testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE `"+name+"` (id INT PRIMARY KEY, n VARCHAR(10))")
	testenv.Exec(t, db, "INSERT INTO `"+name+"` VALUES (1, '10'), (2, 'x'), (3, '30')")
	var rej rejects
	s := newSource(t, mysql.Config{DSN: dsn, Table: name}, testenv.Schema(t, "id INT", "n BIGINT"), &rej)
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	rows := conntest.ReadAll(t, s, 1024)
	if len(rows) != 2 || len(rej.recs) != 1 {
		t.Fatalf("rows %v, rejected %v", rows, rej.recs)
	}
	if p := rej.recs[0].Position; !strings.Contains(p, name) || !strings.Contains(p, "id=2") {
		t.Errorf("position %q: want the table and id=2", p)
	}
}

// TestOptionErrors: bad options are refused at construction, with the
// option named, and the password never appears.
func TestOptionErrors(t *testing.T) {
	sch := testenv.Schema(t, "id BIGINT", "s STRING")
	cases := []struct {
		cfg  mysql.Config
		want string
	}{
		{mysql.Config{DSN: "u:pw@tcp(h:3306)/db"}, "table: missing"},
		{mysql.Config{DSN: "u:pw@tcp(h:3306)/db", Table: "t", Query: "SELECT 1"}, "query: give either"},
		{mysql.Config{DSN: "u:pw@tcp(h:3306)/db", Table: "t", Scan: mysql.ScanConfig{Partition: mysql.PartitionConfig{Column: "s", Num: 2, LowerBound: i64(1), UpperBound: i64(2)}}}, "must be INT or BIGINT"},
		{mysql.Config{DSN: "u:pw@tcp(h:3306)/db", Table: "t", Scan: mysql.ScanConfig{Partition: mysql.PartitionConfig{Column: "id", Num: 2}}}, "lower_bound and upper_bound"},
		{mysql.Config{DSN: "u:pw@tcp(h:3306)/db", Table: "t", Lookup: mysql.LookupConfig{Cache: "ful"}}, "lookup.cache: unknown cache"},
		{mysql.Config{DSN: "u:pw@tcp(h:3306)/db", Table: "t", Lookup: mysql.LookupConfig{PartialCache: mysql.PartialCacheConfig{MaxRows: 5}}}, "lookup.cache is not partial"},
		{mysql.Config{DSN: "u:s3cretpw@tcp(h:99999)/db", Table: "t"}, "port"},
		{mysql.Config{DSN: "u:s3cretpw@tcp(h:3306)/", Table: "t"}, "names no database"},
	}
	for _, c := range cases {
		_, err := mysql.New(c.cfg, connector.SourceEnv{Name: "s", Schema: sch})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.cfg, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("the password is in the error: %v", err)
		}
	}
}
