package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/sources/mysql"
)

// TestCDCStartFromGTID starts a capture at a MariaDB GTID set
// (scan.startup.specific_offset.gtid_set) taken after the table's first
// rows: it reads the transactions after that set and none of the rows
// before it, up to the binlog's end (stop: latest), and fills the
// binlog metadata columns (gtid, binlog_file, binlog_pos, row_kind,
// database_name, op_ts); an update of the primary key reads as -D of
// the old row and +I of the new, as Debezium tells it, so that an
// upsert sink (which drops -U) deletes the old key's row.
func TestCDCStartFromGTID(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	a := cdcTable(t, db, 10)
	var gtid string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&gtid); err != nil {
		t.Fatal(err)
	}
	if gtid == "" {
		t.Fatal("the server has no GTID position: is the binlog on?")
	}
	insertRows(t, db, a, 11, 20)
	testenv.Exec(t, db, "UPDATE `"+a+"` SET v = 'upd' WHERE id = 11")
	testenv.Exec(t, db, "DELETE FROM `"+a+"` WHERE id = 12")
	testenv.Exec(t, db, "UPDATE `"+a+"` SET id = 30 WHERE id = 13")
	var lastGTID string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&lastGTID); err != nil {
		t.Fatal(err)
	}

	var dbName string
	if err := db.QueryRow("SELECT DATABASE()").Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	cols := append(slices.Clone(cdcColumns), "tbl STRING", "kind STRING", "g STRING", "file STRING", "pos BIGINT", "db STRING", "at TIMESTAMP_LTZ(3)")
	sch := testenv.Schema(t, cols...)
	meta := make([]string, sch.Len())
	copy(meta[len(cdcColumns):], []string{"table_name", "row_kind", "gtid", "binlog_file", "binlog_pos", "database_name", "op_ts"})
	env := connector.SourceEnv{Name: "cdc", Schema: sch, Metadata: meta, Logger: slog.New(slog.DiscardHandler), Reject: func(b connector.BadRecord) error { return b }}
	s, err := mysql.NewCDC(mysql.Config{DSN: dsn, Mode: "cdc", Table: a, Stop: "latest", Scan: mysql.ScanConfig{Startup: mysql.StartupConfig{
		Mode: "specific-offset", SpecificOffset: mysql.OffsetConfig{GTIDSet: gtid}}}}, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	f := newFolded(t)
	var kinds []string
	gtids := map[string]bool{}
	for {
		b, err := s.Read(testenv.Context(t, time.Minute), 64)
		if b != nil {
			f.apply(b)
			for _, c := range b.Changes {
				r := c.Row
				kinds = append(kinds, r[4].Str())
				gtids[r[5].Str()] = true
				if r[6].Str() == "" || r[7].Int64() <= 4 || r[9].IsNull() || r[9].Micros() == 0 {
					t.Errorf("change %s: binlog_file %q, binlog_pos %d, op_ts %s: want a file, a position past the header and a commit time", c, r[6].Str(), r[7].Int64(), r[9])
				}
				if got := r[8].Str(); got != dbName {
					t.Errorf("database_name %q, want %q", got, dbName)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for _, l := range truth(t, db, a) {
		var id int
		fmt.Sscanf(l[len(a)+1:], "%d", &id)
		if id > 10 {
			want = append(want, l)
		}
	}
	if got := f.lines(); !slices.Equal(got, want) {
		t.Fatalf("from GTID %s the capture holds\n%v\nwant the rows after it\n%v", gtid, got, want)
	}
	wantKinds := []string{"+I", "+I", "+I", "+I", "+I", "+I", "+I", "+I", "+I", "+I", "-U", "+U", "-D", "-D", "+I"}
	if !slices.Equal(kinds, wantKinds) {
		t.Errorf("row_kind %v, want %v", kinds, wantKinds)
	}
	if !gtids[lastGTID] {
		t.Errorf("no change carries the last transaction's GTID %s (got %v)", lastGTID, gtids)
	}
}

// TestCDCStartLatest starts a capture at the binlog's end
// (latest-offset): no snapshot, the table's rows before it are not
// read, the changes after it are.
func TestCDCStartLatest(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	a := cdcTable(t, db, 50)
	s := newCDC(t, mysql.Config{DSN: dsn, Table: a, Scan: mysql.ScanConfig{Startup: mysql.StartupConfig{Mode: "latest-offset"}}}, nil)
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	insertRows(t, db, a, 51, 53)
	testenv.Exec(t, db, "DELETE FROM `"+a+"` WHERE id = 52")
	f := newFolded(t)
	want := []string{fmt.Sprintf("%s/51=51|v51|51", a), fmt.Sprintf("%s/53=53|v53|53", a)}
	deadline := time.Now().Add(readWait)
	for !slices.Equal(f.lines(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the capture holds %v, want %v", f.lines(), want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		b, err := s.Read(ctx, 64)
		cancel()
		if err != nil && ctx.Err() == nil {
			t.Fatal(err)
		}
		if b != nil {
			f.apply(b)
		}
	}
}
