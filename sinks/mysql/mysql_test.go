package mysql_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/mysql"
)

// rejects collects what the sink hands to on_error.
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

// open builds, binds and opens a sink; it is closed when the test ends.
func open(t testing.TB, cfg mysql.Config, in connector.SinkInput, env connector.SinkEnv) *mysql.Sink {
	t.Helper()
	s, err := newBound(cfg, in, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

func newBound(cfg mysql.Config, in connector.SinkInput, env connector.SinkEnv) (*mysql.Sink, error) {
	if env.Name == "" {
		env.Name = "out"
	}
	s, err := mysql.New(cfg, env)
	if err != nil {
		return nil, err
	}
	return s, s.Bind(in)
}

// dump reads the table as sorted lines of |-separated text values.
func dump(t testing.TB, db *sql.DB, name string) []string {
	t.Helper()
	rows, err := db.Query("SELECT * FROM `" + strings.ReplaceAll(name, "`", "``") + "`")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			parts[i] = "NULL"
			if v.Valid {
				parts[i] = v.String
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func batchOf(changes ...row.Change) *row.Batch {
	return &row.Batch{Changes: changes}
}

func ch(k row.Kind, vals ...row.Value) row.Change { return row.Change{Kind: k, Row: vals} }

var kvSchema = row.NewSchema(
	row.Field{Name: "id", Type: row.Type{ID: row.BigInt, NotNull: true}},
	row.Field{Name: "v", Type: row.Of(row.String)},
)

func TestAppendAllTypes(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	schema := row.NewSchema(
		row.Field{Name: "id", Type: row.Type{ID: row.BigInt, NotNull: true}},
		row.Field{Name: "i", Type: row.Of(row.Int)},
		row.Field{Name: "s", Type: row.Of(row.String)},
		row.Field{Name: "price", Type: row.Type{ID: row.Decimal, Precision: 10, Scale: 2}},
		row.Field{Name: "ts", Type: row.Type{ID: row.Timestamp, Precision: 3}},
		row.Field{Name: "ltz", Type: row.Type{ID: row.TimestampLTZ, Precision: 6}},
		row.Field{Name: "d", Type: row.Of(row.Date)},
		row.Field{Name: "ok", Type: row.Of(row.Boolean)},
		row.Field{Name: "f", Type: row.Of(row.Float)},
		row.Field{Name: "x", Type: row.Of(row.Double)},
		row.Field{Name: "b", Type: row.Of(row.Bytes)},
	)
	s := open(t, mysql.Config{DSN: dsn, Table: name, CreateTable: true, BatchSize: 100},
		connector.SinkInput{Schema: schema, Mode: connector.Append}, connector.SinkEnv{})
	ctx := testenv.Context(t, time.Minute)
	const n = 250
	ts := time.Date(2024, 3, 1, 10, 30, 15, 123_000_000, time.UTC)
	for start := 0; start < n; start += 70 {
		b := row.NewBatch(70, schema.Len())
		for i := start; i < min(start+70, n); i++ {
			r := b.NewRow()
			r[0] = row.BigIntValue(int64(i))
			r[1] = row.IntValue(int32(-i))
			r[2] = row.StringValue(fmt.Sprintf("name %d é", i))
			r[3] = row.DecimalValue(int64(i)*100+5, 2)
			r[4] = row.TimestampValue(ts.UnixMicro())
			r[5] = row.TimestampLTZValue(ts.UnixMicro() + 456)
			r[6] = row.DateValue(19783)
			r[7] = row.BoolValue(i%2 == 0)
			r[8] = row.FloatValue(0.1)
			r[9] = row.DoubleValue(1.5e300)
			r[10] = row.BytesValue([]byte{0, 255, byte(i)})
			if i == 7 {
				r[2] = row.NullValue
			}
			b.Append(row.Insert, r)
		}
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var count int
	if err := db.QueryRow("SELECT COUNT(*) FROM `" + name + "`").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Fatalf("%d rows in the table, want %d", count, n)
	}
	var got string
	q := "SELECT CONCAT_WS('|', id, i, s, price, ts, ltz, d, ok, f, x, HEX(b)) FROM `" + name + "` WHERE id = 3"
	if err := db.QueryRow(q).Scan(&got); err != nil {
		t.Fatal(err)
	}
	want := "3|-3|name 3 é|3.05|2024-03-01 10:30:15.123|2024-03-01 10:30:15.123456|2024-03-01|0|0.1|1.5e300|00FF03"
	if got != want {
		t.Errorf("row 3 is\n%s\nwant\n%s", got, want)
	}
	var null sql.NullString
	if err := db.QueryRow("SELECT s FROM `" + name + "` WHERE id = 7").Scan(&null); err != nil || null.Valid {
		t.Errorf("row 7's s = %v (%v), want NULL", null, err)
	}
	if s.Bytes() <= 0 {
		t.Errorf("Bytes() = %d after writing rows", s.Bytes())
	}
}

// model applies changes to an in-memory table as the sink must.
type model map[int64]string

func (m model) apply(c row.Change) {
	if c.Kind == row.Delete {
		delete(m, c.Row[0].Int64())
		return
	}
	if c.Kind != row.UpdateBefore {
		m[c.Row[0].Int64()] = c.Row[1].Str()
	}
}

func (m model) lines() []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%d|%s", k, v))
	}
	sort.Strings(out)
	return out
}

// randomChanges is an upsert changelog over keys: inserts, updates (with
// their -U), deletes and re-inserts of deleted keys, one key often
// changing several times within a batch.
func randomChanges(seed uint64, n, keys int) []row.Change {
	rng := rand.New(rand.NewPCG(seed, 7))
	live := map[int64]bool{}
	var out []row.Change
	for i := range n {
		k := rng.Int64N(int64(keys))
		v := row.StringValue(fmt.Sprintf("v%d", i))
		switch {
		case !live[k]:
			out = append(out, ch(row.Insert, row.BigIntValue(k), v))
			live[k] = true
		case rng.IntN(3) == 0:
			out = append(out, ch(row.Delete, row.BigIntValue(k), row.StringValue("old")))
			live[k] = false
		default:
			out = append(out, ch(row.UpdateBefore, row.BigIntValue(k), row.StringValue("old")), ch(row.UpdateAfter, row.BigIntValue(k), v))
		}
	}
	return out
}

func TestUpsertAndDelete(t *testing.T) {
	db, dsn := openDB(t)
	for _, tc := range []struct {
		name             string
		batchSize, write int // sink batch size, changes per Write
		flushEvery       int // Writes between Flushes
		parallelism      int
	}{
		{"one by one", 1, 7, 1, 1},
		{"small batches", 3, 10, 2, 1},
		{"folded across writes", 1000, 9, 50, 1},
		{"large", 1000, 500, 1, 1},
		// Many batches of each key in flight on four connections: the
		// table still ends as the changes in order.
		{"parallel, one by one", 1, 7, 3, 4},
		{"parallel, small batches", 5, 40, 10, 4},
		{"parallel, large", 1000, 500, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := table(t, db, "")
			s := open(t, mysql.Config{DSN: dsn, Table: name, CreateTable: true, BatchSize: tc.batchSize, Parallelism: tc.parallelism},
				connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}, connector.SinkEnv{})
			ctx := testenv.Context(t, 2*time.Minute)
			changes := randomChanges(uint64(tc.batchSize), 1500, 40)
			m := model{}
			deletes := 0
			for i, w := 0, 0; i < len(changes); i, w = i+tc.write, w+1 {
				part := changes[i:min(i+tc.write, len(changes))]
				for _, c := range part {
					m.apply(c)
					if c.Kind == row.Delete {
						deletes++
					}
				}
				if err := s.Write(ctx, batchOf(part...)); err != nil {
					t.Fatal(err)
				}
				if w%tc.flushEvery == 0 {
					if err := s.Flush(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if deletes == 0 || len(m) == 0 {
				t.Fatalf("test data has %d deletes and %d final rows: it proves nothing", deletes, len(m))
			}
			if got, want := dump(t, db, name), m.lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestDeleteAfterUpsertInOneBuffer: the changes of one key inside one
// buffered batch keep their order.
func TestDeleteAfterUpsertInOneBuffer(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	exec(t, db, "CREATE TABLE `"+name+"` (id BIGINT NOT NULL PRIMARY KEY, v VARCHAR(20))")
	exec(t, db, "INSERT INTO `"+name+"` VALUES (1, 'old1'), (2, 'old2'), (3, 'old3')")
	s := open(t, mysql.Config{DSN: dsn, Table: name},
		connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}, connector.SinkEnv{})
	ctx := testenv.Context(t, time.Minute)
	id := row.BigIntValue
	str := row.StringValue
	for _, b := range []*row.Batch{
		batchOf(ch(row.UpdateAfter, id(1), str("new1")), ch(row.Delete, id(2), str("old2"))),
		batchOf(ch(row.Delete, id(1), str("new1")), ch(row.Insert, id(2), str("back2"))),
		batchOf(ch(row.Insert, id(4), str("four")), ch(row.Delete, id(4), str("four")), ch(row.UpdateAfter, id(3), str("new3"))),
	} {
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := dump(t, db, name)
	want := []string{"2|back2", "3|new3"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("table %v, want %v", got, want)
	}
}

func TestCompositeKeyAndCreateTable(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	schema := row.NewSchema(
		row.Field{Name: "region", Type: row.Of(row.String)},
		row.Field{Name: "day", Type: row.Of(row.Date)},
		row.Field{Name: "total", Type: row.Of(row.BigInt)},
	)
	s := open(t, mysql.Config{DSN: dsn, Table: name, CreateTable: true},
		connector.SinkInput{Schema: schema, Mode: connector.Upsert, Key: []int{0, 1}}, connector.SinkEnv{})
	var pk []string
	rows, err := db.Query("SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION", name)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		_ = rows.Scan(&c)
		pk = append(pk, c)
	}
	rows.Close()
	if strings.Join(pk, ",") != "region,day" {
		t.Fatalf("primary key %v, want region,day", pk)
	}
	var types string
	if err := db.QueryRow("SELECT GROUP_CONCAT(COLUMN_TYPE, ' ', IS_NULLABLE ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", name).Scan(&types); err != nil {
		t.Fatal(err)
	}
	if types != "varchar(255) NO,date NO,bigint(20) YES" {
		t.Errorf("column types %q", types)
	}
	ctx := testenv.Context(t, time.Minute)
	r, d, n := row.StringValue, row.DateValue, row.BigIntValue
	if err := s.Write(ctx, batchOf(
		ch(row.Insert, r("eu"), d(1), n(1)), ch(row.Insert, r("eu"), d(2), n(2)), ch(row.Insert, r("us"), d(1), n(3)),
	)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, batchOf(ch(row.UpdateAfter, r("eu"), d(1), n(10)), ch(row.Delete, r("eu"), d(2), n(2)))); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := dump(t, db, name)
	want := []string{"eu|1970-01-02|10", "us|1970-01-02|3"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("table %v, want %v", got, want)
	}
}

// TestGlobalAggregate: an upsert with an empty key keeps one row
// (replace_table: true; TestGlobalAggregateNeedsReplaceTable is without).
func TestGlobalAggregate(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	schema := row.NewSchema(row.Field{Name: "n", Type: row.Of(row.BigInt)})
	exec(t, db, "CREATE TABLE `"+name+"` (n BIGINT)")
	s := open(t, mysql.Config{DSN: dsn, Table: name, ReplaceTable: true},
		connector.SinkInput{Schema: schema, Mode: connector.Upsert}, connector.SinkEnv{})
	ctx := testenv.Context(t, time.Minute)
	for i := int64(1); i <= 3; i++ {
		if err := s.Write(ctx, batchOf(ch(row.UpdateBefore, row.BigIntValue(i-1)), ch(row.UpdateAfter, row.BigIntValue(i)))); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := dump(t, db, name); strings.Join(got, " ") != "3" {
		t.Errorf("table %v, want one row 3", got)
	}
}

func TestOpenErrors(t *testing.T) {
	db, dsn := openDB(t)
	upsert := connector.SinkInput{Schema: kvSchema, Mode: connector.Upsert, Key: []int{0}}
	appendIn := connector.SinkInput{Schema: kvSchema, Mode: connector.Append}
	for _, tc := range []struct {
		name string
		ddl  string // %s is the table; empty: no table
		in   connector.SinkInput
		want []string
	}{
		{"missing table", "", appendIn, []string{"does not exist", "create_table: true"}},
		{"missing column", "CREATE TABLE %s (id BIGINT PRIMARY KEY, w TEXT)", appendIn, []string{"no column `v`", "id bigint(20), w text"}},
		{"incompatible type", "CREATE TABLE %s (id BIGINT PRIMARY KEY, v INT)", appendIn, []string{"column `v`", "is int(11)", "STRING"}},
		{"extra not null column", "CREATE TABLE %s (id BIGINT PRIMARY KEY, v TEXT, must INT NOT NULL)", appendIn, []string{"column `must`", "NOT NULL without a default"}},
		{"no unique key", "CREATE TABLE %s (id BIGINT, v TEXT)", upsert, []string{"no PRIMARY KEY or UNIQUE index on the upsert key (`id`)"}},
		{"key on other columns", "CREATE TABLE %s (id BIGINT, v VARCHAR(10) PRIMARY KEY)", upsert, []string{"no PRIMARY KEY or UNIQUE index"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := table(t, db, "")
			if tc.ddl != "" {
				exec(t, db, fmt.Sprintf(tc.ddl, "`"+name+"`"))
			}
			s, err := newBound(mysql.Config{DSN: dsn, Table: name}, tc.in, connector.SinkEnv{})
			if err != nil {
				t.Fatal(err)
			}
			err = s.Open(testenv.Context(t, time.Minute))
			_ = s.Close(context.Background())
			if err == nil {
				t.Fatal("Open succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "etld-test-pw") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
	t.Run("unique index other than primary key", func(t *testing.T) {
		name := table(t, db, "")
		exec(t, db, "CREATE TABLE `"+name+"` (pk INT AUTO_INCREMENT PRIMARY KEY, id BIGINT NOT NULL, v TEXT, UNIQUE KEY by_id (id))")
		open(t, mysql.Config{DSN: dsn, Table: name}, upsert, connector.SinkEnv{})
	})
}

// TestQuotedIdentifiersAndValues: a table and columns whose names need
// quoting, and values shaped like SQL, are stored literally.
func TestQuotedIdentifiersAndValues(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "`q")
	schema := row.NewSchema(
		row.Field{Name: "order", Type: row.Type{ID: row.String, Length: 64, NotNull: true}},
		row.Field{Name: "we`ird", Type: row.Of(row.String)},
		row.Field{Name: "select", Type: row.Of(row.BigInt)},
	)
	s := open(t, mysql.Config{DSN: dsn, Table: name, CreateTable: true},
		connector.SinkInput{Schema: schema, Mode: connector.Upsert, Key: []int{0}}, connector.SinkEnv{})
	ctx := testenv.Context(t, time.Minute)
	evil := []string{"'); DROP TABLE x; --", `\'; DELETE FROM mysql.user; #`, "`; SELECT 1; `", "\x00nul", "O'Brien \"quoted\""}
	b := &row.Batch{}
	for i, v := range evil {
		b.Append(row.Insert, row.Row{row.StringValue(v), row.StringValue(v), row.BigIntValue(int64(i))})
	}
	if err := s.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, batchOf(ch(row.Delete, row.StringValue(evil[1]), row.NullValue, row.NullValue))); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, v := range evil {
		if i != 1 {
			want = append(want, fmt.Sprintf("%s|%s|%d", v, v, i))
		}
	}
	sort.Strings(want)
	if got := dump(t, db, name); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table:\n%q\nwant:\n%q", got, want)
	}
}

// TestRowErrorsAreRejected: rows the server refuses go to on_error with
// the MySQL error number; the rest of their batch is written.
func TestRowErrorsAreRejected(t *testing.T) {
	db, dsn := openDB(t)
	for _, tc := range []struct {
		mode connector.Mode
		// parallelism 3 and batches of 4: refused rows turn up on several
		// connections at once.
		parallelism, batchSize int
	}{{connector.Append, 1, 0}, {connector.Upsert, 1, 0}, {connector.Append, 3, 4}, {connector.Upsert, 3, 4}} {
		mode := tc.mode
		t.Run(fmt.Sprintf("%s/parallelism %d", mode, tc.parallelism), func(t *testing.T) {
			name := table(t, db, "")
			exec(t, db, "CREATE TABLE `"+name+"` (id BIGINT NOT NULL PRIMARY KEY, v VARCHAR(5) NOT NULL, n TINYINT)")
			schema := row.NewSchema(kvSchema.Fields[0], kvSchema.Fields[1], row.Field{Name: "n", Type: row.Of(row.Int)})
			in := connector.SinkInput{Schema: schema, Mode: mode}
			if mode == connector.Upsert {
				in.Key = []int{0}
			}
			var rej rejects
			s := open(t, mysql.Config{DSN: dsn, Table: name, Parallelism: tc.parallelism, BatchSize: tc.batchSize}, in, connector.SinkEnv{Reject: rej.reject})
			ctx := testenv.Context(t, time.Minute)
			b := &row.Batch{}
			var want []string
			for i := range 20 {
				v, n := row.StringValue(fmt.Sprintf("ok%d", i)), row.IntValue(int32(i))
				switch i {
				case 3:
					v = row.StringValue("much too long")
				case 8:
					v = row.NullValue
				case 15:
					n = row.IntValue(1000)
				default:
					want = append(want, fmt.Sprintf("%d|ok%d|%d", i, i, i))
				}
				b.Append(row.Insert, row.Row{row.BigIntValue(int64(i)), v, n})
			}
			if err := s.Write(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			sort.Strings(want)
			if got := dump(t, db, name); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("table %v\nwant %v", got, want)
			}
			var got []string
			for _, r := range rej.recs {
				got = append(got, fmt.Sprintf("%s => %v", r.Raw, r.Err))
			}
			wantErr := []string{"much too long, 3] => ", "Error 1406", "+I[8, null, 8] => ", "Error 1048", "+I[15, ok15, 1000] => ", "Error 1264"}
			all := strings.Join(got, "\n")
			if len(rej.recs) != 3 {
				t.Fatalf("%d rejected rows, want 3:\n%s", len(rej.recs), all)
			}
			for _, w := range wantErr {
				if !strings.Contains(all, w) {
					t.Errorf("rejects do not contain %q:\n%s", w, all)
				}
			}
			if mode == connector.Upsert {
				positions := make([]string, len(rej.recs))
				for i, r := range rej.recs {
					positions[i] = r.Position
				}
				if p := strings.Join(positions, "\n"); !strings.Contains(p, "key (id=3)") {
					t.Errorf("no position names the key id=3:\n%s", p)
				}
			}
		})
	}
}

// TestPasswordNeverShown: a wrong password fails Open with an error, and
// neither the error nor the log shows the password.
func TestPasswordNeverShown(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "Wr0ng-s3cret-pw"
	cfg.Passwd = secret
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := newBound(mysql.Config{DSN: cfg.FormatDSN(), Table: name, CreateTable: true},
		connector.SinkInput{Schema: kvSchema, Mode: connector.Append}, connector.SinkEnv{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Open(testenv.Context(t, time.Minute))
	_ = s.Close(context.Background())
	if err == nil || !strings.Contains(err.Error(), "1045") {
		t.Fatalf("Open with a wrong password: %v, want access denied (1045)", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
		t.Fatalf("password shown:\nerror: %v\nlogs: %s", err, logs.String())
	}
	if !strings.Contains(err.Error(), cfg.User+"@tcp(") {
		t.Errorf("error %q does not say which server", err)
	}
}

// TestParallelAppendWritesEveryRow: with several connections, every row
// of every batch is in the table once after the last Flush, and a Flush
// in between returns only when the batches before it are committed.
func TestParallelAppendWritesEveryRow(t *testing.T) {
	db, dsn := openDB(t)
	name := table(t, db, "")
	s := open(t, mysql.Config{DSN: dsn, Table: name, CreateTable: true, BatchSize: 7, Parallelism: 4},
		connector.SinkInput{Schema: kvSchema, Mode: connector.Append}, connector.SinkEnv{})
	ctx := testenv.Context(t, time.Minute)
	const n = 1000
	var want []string
	for start := 0; start < n; start += 33 {
		b := &row.Batch{}
		for i := start; i < min(start+33, n); i++ {
			b.Append(row.Insert, row.Row{row.BigIntValue(int64(i)), row.StringValue(fmt.Sprint("v", i))})
			want = append(want, fmt.Sprintf("%d|v%d", i, i))
		}
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
		if start == 495 {
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got := len(dump(t, db, name)); got != len(want) {
				t.Fatalf("after a Flush the table has %d rows, want the %d written", got, len(want))
			}
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	if got := dump(t, db, name); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("table has %d rows, want %d; first difference in:\n%v", len(got), len(want), got[:min(len(got), 10)])
	}
}
