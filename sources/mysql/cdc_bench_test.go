package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sources/mysql"
)

// BenchmarkCDCAgainstRawBinlog is binlog capture's benchmark:
// ETLD_BENCH_ROWS rows (default 500k) inserted into a table in
// transactions of 5000, then each updated once (an UPDATE per 5000), and
// the binlog from before the inserts to its end read by the capture
// (Read in batches of 1024 into rows of the schema, positions kept) and
// by the strongest raw client: the same replication library's
// BinlogSyncer in a loop that only decodes the events and counts the
// table's row changes. The two run in turn, ETLD_BENCH_ROUNDS times (3);
// the log gives each one's median wall and CPU seconds (this process's:
// the server's work is the same for both), row changes/s and the ratios.
// On a busy machine the CPU ratio is the steadier one:
//
//	ETLD_BENCH_ROWS=500000 go test -run XXX -bench CDCAgainstRawBinlog -benchtime 1x ./sources/mysql/
func BenchmarkCDCAgainstRawBinlog(b *testing.B) {
	db, dsn := testenv.MySQL(b)
	rows, rounds := 500_000, 3
	if s := os.Getenv("ETLD_BENCH_ROWS"); s != "" {
		fmt.Sscan(s, &rows)
	}
	if s := os.Getenv("ETLD_BENCH_ROUNDS"); s != "" {
		fmt.Sscan(s, &rounds)
	}
	a := cdcTable(b, db, 0)
	file, pos := binlogEnd(b, db)
	insertRows(b, db, a, 1, rows)
	for lo := 1; lo <= rows; lo += 5000 {
		testenv.Exec(b, db, fmt.Sprintf("UPDATE `%s` SET n = n + 1 WHERE id BETWEEN %d AND %d", a, lo, lo+4999))
	}
	want := 2 * rows
	// Both read the same range: the capture from a position that stops
	// where the raw loop stops, whatever other clients of the server
	// write meanwhile.
	endFile, endPos := binlogEnd(b, db)
	cfg := mysql.Config{DSN: dsn, Table: a, Stop: "latest"}
	at := fmt.Sprintf(`{"binlog":{"file":%q,"pos":%d},"stop":{"file":%q,"pos":%d},"captured":["etld_test.%s"]}`, file, pos, endFile, endPos, a)
	capture := func() int {
		s := newCDC(b, cfg, nil)
		if err := s.Restore([]byte(at)); err != nil {
			b.Fatal(err)
		}
		if err := s.Open(testenv.Context(b, time.Minute)); err != nil {
			b.Fatal(err)
		}
		defer s.Close(context.Background())
		n := 0
		for {
			batch, err := s.Read(testenv.Context(b, time.Minute), 1024)
			if batch != nil {
				for _, c := range batch.Changes {
					if c.Kind != row.UpdateBefore {
						n++
					}
				}
			}
			if errors.Is(err, io.EOF) {
				return n
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	raw := func() int { return rawBinlogLoop(b, dsn, a, file, pos, endFile, endPos) }
	var tc, tr, cc, cr []float64
	for r := range rounds {
		for _, run := range []struct {
			name      string
			f         func() int
			secs, cpu *[]float64
		}{{"raw", raw, &tr, &cr}, {"capture", capture, &tc, &cc}} {
			start, cpu0 := time.Now(), cpuSeconds()
			n := run.f()
			d, c := time.Since(start).Seconds(), cpuSeconds()-cpu0
			if n != want {
				b.Fatalf("%s read %d row changes, want %d", run.name, n, want)
			}
			*run.secs, *run.cpu = append(*run.secs, d), append(*run.cpu, c)
			b.Logf("round %d %s: %.2fs wall, %.2fs CPU, %.0f row changes/s", r+1, run.name, d, c, float64(n)/d)
		}
	}
	mc, mr := median(tc), median(tr)
	b.Logf("median: capture %.0f row changes/s, raw loop %.0f/s: capture/raw %.2f by wall time, %.2f by CPU time (%.2fs vs %.2fs)",
		float64(want)/mc, float64(want)/mr, mr/mc, median(cr)/median(cc), median(cc), median(cr))
	b.ReportMetric(float64(want)/mc, "capture-rows/s")
	b.ReportMetric(float64(want)/mr, "raw-rows/s")
	b.ReportMetric(mr/mc, "capture-vs-raw")
}

// rawBinlogLoop reads the binlog from file:pos to endFile:endPos with
// the replication library alone and counts the row changes of table.
func rawBinlogLoop(b *testing.B, dsn, table, file string, pos uint32, endFile string, endPos uint32) int {
	dc, err := driver.ParseDSN(dsn)
	if err != nil {
		b.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(dc.Addr)
	p, _ := strconv.Atoi(port)
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: 6500, Flavor: "mariadb", Host: host, Port: uint16(p), User: dc.User, Password: dc.Passwd,
		Charset: "utf8mb4", TimestampStringLocation: time.UTC, DisableRetrySync: true,
		Logger: slog.New(slog.DiscardHandler),
	})
	defer syncer.Close()
	stream, err := syncer.StartSync(gomysql.Position{Name: file, Pos: pos})
	if err != nil {
		b.Fatal(err)
	}
	n, cur := 0, file
	ctx := testenv.Context(b, time.Minute)
	for {
		ev, err := stream.GetEvent(ctx)
		if err != nil {
			b.Fatal(err)
		}
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			cur = string(e.NextLogName)
		case *replication.RowsEvent:
			if string(e.Table.Table) == table {
				if e.Type() == replication.EnumRowsEventTypeUpdate {
					n += len(e.Rows) / 2
				} else {
					n += len(e.Rows)
				}
			}
		}
		if cur == endFile && ev.Header.LogPos >= endPos || cur > endFile {
			return n
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuSeconds is the CPU time this process used so far, user and system.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
