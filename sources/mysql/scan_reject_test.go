package mysql_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/sources/mysql"
)

// goroutine is the id of the calling goroutine, from its stack's first
// line ("goroutine 7 [running]:").
func goroutine() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) < 2 {
		return ""
	}
	return string(f[1])
}

// TestScanDeadLettersFollowThePosition: a bad row is handed to on_error
// from Read, on the goroutine that reads, in the batch whose position
// passes it, never by a reader running ahead: a dead letter then belongs
// to the checkpoint whose position is past its row, and a run restored
// from an earlier one makes it once, not twice. The position counts the
// rejected rows as read, so a restored scan neither reads a row twice
// nor rejects one again.
func TestScanDeadLettersFollowThePosition(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	name := testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE `"+name+"` (id INT PRIMARY KEY, n VARCHAR(10))")
	var vals []string
	for i := 1; i <= 30; i++ {
		v := fmt.Sprint(i * 10)
		if i == 5 || i == 25 {
			v = "x"
		}
		vals = append(vals, fmt.Sprintf("(%d, '%s')", i, v))
	}
	testenv.Exec(t, db, "INSERT INTO `"+name+"` VALUES "+strings.Join(vals, ","))
	cfg := mysql.Config{DSN: dsn, Table: name, Scan: mysql.ScanConfig{FetchSize: 10}}
	sch := testenv.Schema(t, "id INT", "n BIGINT")
	reader := goroutine()
	var elsewhere []string
	var rejected []string
	env := func() connector.SourceEnv {
		return connector.SourceEnv{Name: "s", Schema: sch, Reject: func(b connector.BadRecord) error {
			if g := goroutine(); g != reader {
				elsewhere = append(elsewhere, b.Position+" on goroutine "+g)
			}
			rejected = append(rejected, b.Position)
			return nil
		}}
	}
	s, err := mysql.New(cfg, env())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	b, err := s.Read(testenv.Context(t, time.Minute), 1024)
	if err != nil {
		t.Fatal(err)
	}
	first := conntest.Printed(b.Changes)
	pos, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(elsewhere) > 0 {
		t.Fatalf("rejected outside Read, by a reader running ahead of the position: %v", elsewhere)
	}
	if len(rejected) != 1 || !strings.Contains(rejected[0], "id=5") {
		t.Fatalf("the first batch rejected %v, want the row id=5 only", rejected)
	}

	rejected = nil
	s2, err := mysql.New(cfg, env())
	if err != nil {
		t.Fatal(err)
	}
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
		if seen[r] > 1 {
			t.Errorf("row %s read twice (first run %d rows, restored run %d)", r, len(first), len(rest))
		}
	}
	if len(seen) != 28 {
		t.Errorf("%d distinct rows, want the 28 good ones", len(seen))
	}
	if len(rejected) != 1 || !strings.Contains(rejected[0], "id=25") {
		t.Errorf("the restored run rejected %v, want the row id=25 only", rejected)
	}
	if len(elsewhere) > 0 {
		t.Errorf("rejected outside Read: %v", elsewhere)
	}
}
