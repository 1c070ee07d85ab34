package mysql

import (
	"errors"
	"fmt"
	"github.com/etld/etld/internal/mysqlconn"
	"io"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"id", "`id`"},
		{"order", "`order`"},
		{"a`b", "`a``b`"},
		{"`); DROP TABLE x; --", "```); DROP TABLE x; --`"},
	} {
		if got := quote(tc.in); got != tc.want {
			t.Errorf("quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in              string
		mariadb, alias  bool
		major, minor, p int
	}{
		{"10.11.19-MariaDB-0+deb12u1", true, false, 10, 11, 19},
		{"5.5.5-10.6.12-MariaDB", true, false, 5, 5, 5},
		{"8.0.36", false, true, 8, 0, 36},
		{"8.0.19", false, false, 8, 0, 19},
		{"8.0.20-log", false, true, 8, 0, 20},
		{"8.4.0", false, true, 8, 4, 0},
		{"9.1.0-commercial", false, true, 9, 1, 0},
		{"5.7.44-log", false, false, 5, 7, 44},
		{"8.0.36-0ubuntu0.22.04.1", false, true, 8, 0, 36},
	} {
		s := parseVersion(tc.in)
		if s.mariadb != tc.mariadb || s.rowAlias() != tc.alias || s.major != tc.major || s.minor != tc.minor || s.patch != tc.p {
			t.Errorf("parseVersion(%q) = %+v alias=%v, want mariadb=%v alias=%v %d.%d.%d", tc.in, s, s.rowAlias(), tc.mariadb, tc.alias, tc.major, tc.minor, tc.p)
		}
	}
}

func TestStatements(t *testing.T) {
	cols := []string{quote("id"), quote("order"), quote("v`x")}
	for _, tc := range []struct {
		name string
		st   statements
		got  func(st *statements) string
		want string
	}{
		{"insert", statements{table: "`t`", cols: cols}, func(st *statements) string { return st.insert(2, false) },
			"INSERT INTO `t` (`id`, `order`, `v``x`) VALUES (?, ?, ?), (?, ?, ?)"},
		{"upsert values", statements{table: "`t`", cols: cols, key: []int{0}}, func(st *statements) string { return st.insert(1, true) },
			"INSERT INTO `t` (`id`, `order`, `v``x`) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE `order` = VALUES(`order`), `v``x` = VALUES(`v``x`)"},
		{"upsert alias", statements{table: "`t`", cols: cols, key: []int{0}, alias: true}, func(st *statements) string { return st.insert(2, true) },
			"INSERT INTO `t` (`id`, `order`, `v``x`) VALUES (?, ?, ?), (?, ?, ?) AS `new` ON DUPLICATE KEY UPDATE `order` = `new`.`order`, `v``x` = `new`.`v``x`"},
		{"upsert all key", statements{table: "`t`", cols: cols[:2], key: []int{0, 1}}, func(st *statements) string { return st.insert(1, true) },
			"INSERT INTO `t` (`id`, `order`) VALUES (?, ?) ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `order` = VALUES(`order`)"},
		{"delete one column", statements{table: "`t`", cols: cols, key: []int{0}}, func(st *statements) string { return st.delete(3) },
			"DELETE FROM `t` WHERE `id` IN (?, ?, ?)"},
		{"delete composite", statements{table: "`t`", cols: cols, key: []int{2, 0}}, func(st *statements) string { return st.delete(2) },
			"DELETE FROM `t` WHERE (`v``x`, `id`) IN ((?, ?), (?, ?))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.got(&tc.st); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestDriverConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		want    string // redacted DSN
		wantErr string
	}{
		{"dsn", Config{DSN: "u:pw@tcp(127.0.0.1:3306)/db"}, "u@tcp(127.0.0.1:3306)/db", ""},
		{"dsn with override", Config{DSN: "u:pw@tcp(127.0.0.1:3306)/db", Username: "v", Password: "x"}, "v@tcp(127.0.0.1:3306)/db", ""},
		{"jdbc", Config{URL: "jdbc:mysql://db.local:3307/shop?useSSL=false", Username: "u", Password: "pw"}, "u@tcp(db.local:3307)/shop", ""},
		{"jdbc default port", Config{URL: "jdbc:mariadb://127.0.0.1/shop?user=u&password=pw"}, "u@tcp(127.0.0.1:3306)/shop", ""},
		{"jdbc userinfo", Config{URL: "jdbc:mysql://u:pw@127.0.0.1/shop"}, "u@tcp(127.0.0.1:3306)/shop", ""},
		{"both", Config{DSN: "u@tcp(h)/d", URL: "jdbc:mysql://h/d"}, "", "either dsn or url"},
		{"neither", Config{}, "", "dsn: missing"},
		{"no database", Config{DSN: "u:pw@tcp(127.0.0.1:3306)/"}, "", "names no database"},
		{"not jdbc", Config{URL: "mysql://h/d"}, "", "want jdbc:mysql://"},
		{"jdbc postgres", Config{URL: "jdbc:postgresql://h/d"}, "", "scheme \"postgresql\""},
		{"jdbc port out of range", Config{URL: "jdbc:mysql://h:99999/d", Password: "s3cret-pw"}, "", `url: port "99999" of @tcp(h:99999)/d is not a number from 1 to 65535`},
		{"dsn port out of range", Config{DSN: "u:s3cret-pw@tcp(h:0)/d"}, "", `dsn: port "0" of u@tcp(h:0)/d is not a number from 1 to 65535`},
		{"bad dsn keeps the password out", Config{DSN: "u:s3cret-pw@tcp(127.0.0.1:3306"}, "", "invalid DSN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dc, err := driverConfig(tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret-pw") {
					t.Fatalf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := mysqlconn.Redact(dc); got != tc.want {
				t.Errorf("redacted %q, want %q", got, tc.want)
			}
			if strings.Contains(mysqlconn.Redact(dc), "pw") || strings.Contains(mysqlconn.Redact(dc), ":x@") {
				t.Errorf("redacted form shows the password: %s", mysqlconn.Redact(dc))
			}
			if dc.Params["sql_mode"] == "" || dc.Params["time_zone"] != "'+00:00'" {
				t.Errorf("session params %v: want strict sql_mode and UTC time_zone", dc.Params)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	for _, tc := range []struct{ msg, dsn, want string }{
		{"bad dsn u:hunter2@tcp(", "u:hunter2@tcp(", "bad dsn u:xxxxx@tcp("},
		{"no password here", "u@tcp(h)/d", "no password here"},
		{"jdbc u:p@w@h", "jdbc:mysql://u:p@w@h/d", "jdbc u:xxxxx@h"},
	} {
		if got := mysqlconn.Scrub(tc.msg, tc.dsn); got != tc.want {
			t.Errorf("scrub(%q, %q) = %q, want %q", tc.msg, tc.dsn, got, tc.want)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want class
	}{
		{&mysql.MySQLError{Number: 1213, Message: "Deadlock found"}, transient},
		{&mysql.MySQLError{Number: 1205}, transient},
		{&mysql.MySQLError{Number: 1290}, transient},
		{fmt.Errorf("exec: %w", &mysql.MySQLError{Number: 1406}), rowLevel},
		{&mysql.MySQLError{Number: 1366}, rowLevel},
		{&mysql.MySQLError{Number: 1048}, rowLevel},
		{&mysql.MySQLError{Number: 1452}, rowLevel},
		{&mysql.MySQLError{Number: 1146, Message: "Table doesn't exist"}, fatal},
		{&mysql.MySQLError{Number: 1045}, fatal},
		{mysql.ErrInvalidConn, transient},
		{io.ErrUnexpectedEOF, transient},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), transient},
		{mysql.ErrPktTooLarge, rowLevel},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestBufferFold(t *testing.T) {
	mk := func(k row.Kind, id int64, v string) row.Change {
		return row.Change{Kind: k, Row: row.Row{row.BigIntValue(id), row.StringValue(v)}}
	}
	b := newBuffer(true, []int{0})
	for _, c := range []row.Change{
		mk(row.Insert, 1, "a"), mk(row.Insert, 2, "b"), mk(row.UpdateAfter, 1, "a2"),
		mk(row.Delete, 2, "b"), mk(row.Insert, 3, "c"), mk(row.Delete, 3, "c"), mk(row.Insert, 3, "c2"),
	} {
		b.add(c)
	}
	var got []string
	for _, c := range b.changes {
		got = append(got, c.String())
	}
	want := []string{"+U[1, a2]", "-D[2, b]", "+I[3, c2]"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("folded %v, want %v", got, want)
	}
	b.reset()
	if b.len() != 0 || len(b.index) != 0 {
		t.Fatal("reset left changes behind")
	}
}

// TestChunk checks that statements stay under the placeholder limit and
// the packet budget, and that every row lands in exactly one statement.
func TestChunk(t *testing.T) {
	fields := make([]row.Field, 100)
	for i := range fields {
		fields[i] = row.Field{Name: fmt.Sprintf("c%d", i), Type: row.Of(row.String)}
	}
	s := &Sink{batchSize: 5000, schema: row.NewSchema(fields...), mode: connector.Upsert, key: []int{0}}
	s.stmts = statements{table: "`t`", cols: make([]string, 100), key: s.key}
	for i := range s.stmts.cols {
		s.stmts.cols[i] = quote(fields[i].Name)
	}
	changes := make([]row.Change, 1500)
	for i := range changes {
		r := make(row.Row, 100)
		for j := range r {
			r[j] = row.StringValue(strings.Repeat("x", 10))
		}
		r[0] = row.StringValue(fmt.Sprint(i))
		changes[i] = row.Change{Kind: row.Insert, Row: r}
	}
	for _, tc := range []struct {
		name      string
		maxPacket int
		wantMax   int // most rows per statement
	}{
		{"placeholders", 0, 655},
		{"packet", 100 * 21 * 100, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.maxPacket = tc.maxPacket
			plan := s.plan(changes)
			rows := 0
			for _, st := range plan {
				if len(st.args) > maxPlaceholders {
					t.Fatalf("statement with %d placeholders", len(st.args))
				}
				if st.key.n > tc.wantMax {
					t.Fatalf("statement of %d rows, want at most %d", st.key.n, tc.wantMax)
				}
				if len(st.args) != st.key.n*100 || strings.Count(st.query, "?") != len(st.args) {
					t.Fatalf("statement of %d rows has %d args and %d placeholders", st.key.n, len(st.args), strings.Count(st.query, "?"))
				}
				if tc.maxPacket > 0 && st.bytes > tc.maxPacket {
					t.Fatalf("statement of %d bytes over the budget %d", st.bytes, tc.maxPacket)
				}
				rows += st.key.n
			}
			if rows != len(changes) {
				t.Fatalf("%d rows in statements, want %d", rows, len(changes))
			}
		})
	}
}

func TestColumnTakes(t *testing.T) {
	for _, tc := range []struct {
		dt   string
		t    row.TypeID
		want bool
	}{
		{"bigint", row.BigInt, true},
		{"varchar", row.BigInt, true},
		{"int", row.String, false},
		{"datetime", row.Timestamp, true},
		{"date", row.Timestamp, false},
		{"blob", row.Bytes, true},
		{"text", row.Bytes, false},
		{"decimal", row.Decimal, true},
		{"DOUBLE", row.Float, true},
		{"tinyint", row.Boolean, true},
	} {
		if got := columnTakes(tc.dt, tc.t); got != tc.want {
			t.Errorf("columnTakes(%s, %s) = %v, want %v", tc.dt, tc.t, got, tc.want)
		}
	}
}

func TestNewOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		field string
	}{
		{"no table", Config{DSN: "u@tcp(h)/d"}, "table"},
		{"negative batch", Config{DSN: "u@tcp(h)/d", Table: "t", BatchSize: -1}, "batch_size"},
		{"negative retries", Config{DSN: "u@tcp(h)/d", Table: "t", MaxRetries: -2}, "max_retries"},
		{"no connection", Config{Table: "t"}, "dsn"},
		{"blank table", Config{DSN: "u@tcp(h)/d", Table: "  "}, "table"},
		{"table name too long", Config{DSN: "u@tcp(h)/d", Table: strings.Repeat("t", 65)}, "table"},
		{"table name ends in a space", Config{DSN: "u@tcp(h)/d", Table: "t "}, "table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg, connector.SinkEnv{Name: "out"})
			var fe *connector.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("error %v, want one about %s", err, tc.field)
			}
		})
	}
	// Every option error at once, not only the first.
	_, err := New(Config{Table: "", BatchSize: -1, MaxRetries: -1}, connector.SinkEnv{Name: "out"})
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *connector.FieldError
		if errors.As(e, &fe) {
			fields = append(fields, fe.Field)
		}
	}
	if got := strings.Join(fields, " "); got != "table batch_size max_retries dsn" {
		t.Errorf("errors on %s, want on table batch_size max_retries dsn", got)
	}
	s, err := New(Config{DSN: "u@tcp(h)/d", Table: "t"}, connector.SinkEnv{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(connector.SinkInput{Schema: row.NewSchema(row.Field{Name: "x", Type: row.Of(row.String)}), Mode: connector.Retract}); err == nil {
		t.Error("Bind took retract mode")
	}
	if err := s.Bind(connector.SinkInput{Schema: row.NewSchema(row.Field{Name: "x", Type: row.Type{}}), Mode: connector.Append}); err == nil || !strings.Contains(err.Error(), "CAST") {
		t.Errorf("Bind of a NULL-typed column: %v, want a hint to CAST", err)
	}
}

func FuzzJDBCURL(f *testing.F) {
	for _, s := range []string{"jdbc:mysql://h:3306/db", "jdbc:mariadb://u:pw@h/db?user=x&password=y", "jdbc:mysql://[::1]:1/d", "jdbc:", "jdbc:mysql:///", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := mysqlconn.FromJDBC(s)
		if err != nil {
			return
		}
		if c.Net != "tcp" || c.Addr == "" {
			t.Fatalf("%q gave net %q addr %q", s, c.Net, c.Addr)
		}
		if c.Passwd != "" && strings.Contains(mysqlconn.Redact(c), c.Passwd) && !strings.Contains(c.User+c.Addr+c.DBName, c.Passwd) {
			t.Fatalf("redacted %q shows the password", mysqlconn.Redact(c))
		}
	})
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"10.11.19-MariaDB-0+deb12u1", "8.0.36", "8.0.19-log", "", "x.y", "9999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// A server's version is tens of bytes. A longer input finds new
		// code in a loop's turn count alone, and the fuzzer spent its
		// minute minimizing each such one (2 KB: 19 inputs a second).
		if len(s) > 64 {
			return
		}
		v := parseVersion(s)
		if v.rowAlias() && v.mariadb {
			t.Fatalf("%q: MariaDB has no row alias", s)
		}
		if v.rowAlias() && v.major < 8 {
			t.Fatalf("%q: row alias before MySQL 8", s)
		}
	})
}
