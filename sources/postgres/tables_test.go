package postgres_test

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/sources/postgres"
)

// TestSeveralTables captures two tables in one source: each one's rows
// fill its ROW column, the metadata names the table and the key, in the
// snapshot and in the stream, in commit order across the tables.
func TestSeveralTables(t *testing.T) {
	orders := newFixture(t, "id bigint PRIMARY KEY, amount int")
	refunds := testenv.PostgresTable(t, orders.pool, "")
	exec(t, orders.pool, "CREATE TABLE "+ident(refunds)+" (id bigint, line int, order_id bigint, amount int, PRIMARY KEY (id, line))")
	exec(t, orders.pool, "ALTER TABLE "+ident(refunds)+" REPLICA IDENTITY FULL")
	orders.exec(t, "INSERT INTO $T VALUES (1, 10), (2, 20)")
	exec(t, orders.pool, "INSERT INTO "+ident(refunds)+" VALUES (7, 1, 1, 3)")
	cfg := orders.config()
	cfg.Table, cfg.Tables = "", []string{orders.table, "public." + refunds}
	s := open(t, cfg, nil,
		refunds+" ROW<order_id BIGINT, amount INT>", orders.table+" ROW<id BIGINT, amount INT>",
		"tn STRING METADATA FROM 'table_name'", "k STRING METADATA FROM 'row_key'")
	want := []string{
		fmt.Sprintf(`+I[null, +I[1, 10], %s, ["1"]]`, orders.table),
		fmt.Sprintf(`+I[null, +I[2, 20], %s, ["2"]]`, orders.table),
		fmt.Sprintf(`+I[+I[1, 3], null, %s, ["7","1"]]`, refunds),
	}
	if got := printed(readN(t, s, 3, 10)); !slices.Equal(got, want) {
		t.Fatalf("snapshot\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	exec(t, orders.pool, "BEGIN; UPDATE "+ident(refunds)+" SET amount = 4; DELETE FROM "+ident(orders.table)+" WHERE id = 2; COMMIT")
	want = []string{
		fmt.Sprintf(`-U[+I[1, 3], null, %s, ["7","1"]]`, refunds),
		fmt.Sprintf(`+U[+I[1, 4], null, %s, ["7","1"]]`, refunds),
		fmt.Sprintf(`-D[null, +I[2, 20], %s, ["2"]]`, orders.table),
	}
	if got := printed(readN(t, s, 3, 10)); !slices.Equal(got, want) {
		t.Fatalf("stream\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTypes reads a row of every mapped type through the snapshot and
// through the stream (its update's old and new row): the same values.
func TestTypes(t *testing.T) {
	f := newFixture(t, `id int PRIMARY KEY, b bool, s smallint, big bigint, r real, d double precision,
		n numeric(38,10), t text, vc varchar(5), by bytea, day date, tm time, ts timestamp, tz timestamptz,
		ints int[], tags text[], js jsonb, m json, u uuid, nan double precision`)
	f.exec(t, `INSERT INTO $T VALUES (1, true, -3, 9007199254740993, 0.5, 1e300,
		'123456789012345678901234567.8901234567', e'tab\there "q" \\ back\nline é', 'short', '\x00ff5c', '2024-02-29',
		'10:30:15.25', '2024-03-01 10:30:15.123456', '2024-03-01 12:30:15.5+02', '{1,NULL,-2}', '{"a\"b","c,d",NULL}',
		'{"name": "ann", "tags": ["x"], "n": 1.5}', '{"k": 7, "j": 8}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'NaN')`)
	cols := []string{"id INT", "b BOOLEAN", "s SMALLINT", "big BIGINT", "r FLOAT", "d DOUBLE", "n DECIMAL(38, 10)",
		"t STRING", "vc VARCHAR(5)", "by BYTES", "day DATE", "tm TIME(3)", "ts TIMESTAMP(6)", "tz TIMESTAMP_LTZ(3)",
		"ints ARRAY<INT>", "tags ARRAY<STRING>", "js ROW<name STRING, tags ARRAY<STRING>, n DOUBLE>", "m MAP<STRING, BIGINT>",
		"u STRING", "nan DOUBLE"}
	s := open(t, f.config(), nil, cols...)
	snap := printed(readN(t, s, 1, 10))[0]
	want := "+I[1, true, -3, 9007199254740993, 0.5, 1.0E300, 123456789012345678901234567.8901234567, tab\there \"q\" \\ back\nline é, short, [0, -1, 92], 2024-02-29, 10:30:15.250, 2024-03-01T10:30:15.123456, 2024-03-01T10:30:15.500Z, [1, null, -2], [a\"b, c,d, null], +I[ann, [x], 1.5], {k=7, j=8}, a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11, NaN]"
	if snap != want {
		t.Fatalf("snapshot row\n%s\nwant\n%s", snap, want)
	}
	f.exec(t, "UPDATE $T SET id = 2")
	got := printed(readN(t, s, 2, 10))
	// An update of the key: -D of the old row, +I of the new.
	if strings.TrimPrefix(got[0], "-D") != strings.TrimPrefix(snap, "+I") || strings.TrimPrefix(got[1], "+I[2") != strings.TrimPrefix(snap, "+I[1") {
		t.Fatalf("stream rows\n%s\nwant the snapshot's values\n%s", strings.Join(got, "\n"), snap)
	}
}

// TestBadValues: a value that does not fit its declared type goes to
// on_error, named by table and transaction; the other rows go on.
func TestBadValues(t *testing.T) {
	f := newFixture(t, "id int PRIMARY KEY, n numeric")
	f.exec(t, "INSERT INTO $T VALUES (1, 1.5), (2, 12345678.5), (3, 2)")
	var rj rejects
	s := build(t, f.config(), &rj, "id INT", "n DECIMAL(4, 1)")
	if err := s.Open(testenv.Context(t, 60e9)); err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	if got := printed(readN(t, s, 2, 10)); !slices.Equal(got, []string{"+I[1, 1.5]", "+I[3, 2.0]"}) {
		t.Fatalf("snapshot %v", got)
	}
	f.exec(t, "INSERT INTO $T VALUES (4, 99999.9), (5, 5)")
	if got := printed(readN(t, s, 1, 10)); !slices.Equal(got, []string{"+I[5, 5.0]"}) {
		t.Fatalf("stream %v", got)
	}
	if len(rj.recs) != 2 || !strings.Contains(rj.recs[0].Position, "snapshot row 2") || !strings.Contains(rj.recs[1].Position, "transaction committed at") ||
		!strings.Contains(rj.recs[1].Err.Error(), "column n") {
		t.Fatalf("rejected %+v", rj.recs)
	}
}

// TestConformance runs the connector kit on a snapshot-only source (the
// kit's input must end): resumed at any row, it reads the rest in key
// order, each row once.
func TestConformance(t *testing.T) {
	pool, dsn := testenv.Postgres(t)
	conntest.RunSource(t, conntest.Source{
		Max:     16,
		Ordered: true,
		Input: func(t *testing.T) func(t *testing.T) connector.Source {
			name := testenv.PostgresTable(t, pool, "")
			exec(t, pool, "CREATE TABLE "+ident(name)+" (k text COLLATE \"und-x-icu\", n int, v text, PRIMARY KEY (k, n))")
			exec(t, pool, "INSERT INTO "+ident(name)+" SELECT chr(65 + i % 26) || chr(97 + i % 7) || i, i % 3, 'v' || i FROM generate_series(1, 300) i")
			cfg := postgres.Config{DSN: dsn, Table: name, Startup: "snapshot", FetchSize: 10}
			return func(t *testing.T) connector.Source { return build(t, cfg, nil, "k STRING", "n INT", "v STRING") }
		},
		Broken: func(t *testing.T) connector.Source {
			cfg, err := pgx.ParseConfig(dsn)
			if err != nil {
				t.Fatal(err)
			}
			addr := testenv.NewProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))).Addr() // never up
			u := url.URL{Scheme: "postgres", User: url.UserPassword(cfg.User, cfg.Password), Host: addr, Path: "/" + cfg.Database}
			return build(t, postgres.Config{DSN: u.String(), Table: "t", Startup: "snapshot"}, nil, "k STRING")
		},
	})
}

// TestLongTableNameRefused: PostgreSQL cuts a name past 63 bytes short,
// so the catalog checks found the table while the stream, naming it by
// the cut name, passed over its changes; such a name is refused.
func TestLongTableNameRefused(t *testing.T) {
	long := "t" + strings.Repeat("x", 63)
	_, err := postgres.New(postgres.Config{DSN: "postgres://u@127.0.0.1/db", Table: long, Slot: "s"},
		connector.SourceEnv{Name: "src", Schema: testenv.Schema(t, "id BIGINT")})
	if err == nil || !strings.Contains(err.Error(), "at most 63 bytes") {
		t.Fatalf("a 64-byte table name: got %v, want an error that says names are at most 63 bytes", err)
	}
	if _, err := postgres.New(postgres.Config{DSN: "postgres://u@127.0.0.1/db", Table: long[:63], Slot: "s"},
		connector.SourceEnv{Name: "src", Schema: testenv.Schema(t, "id BIGINT")}); err != nil {
		t.Fatalf("a 63-byte table name: %v", err)
	}
}
