package postgres_test

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/postgres"
)

// TestConformance runs the connector kit on the PostgreSQL sink in upsert
// mode (INSERT ... ON CONFLICT) and in append mode (COPY), into tables it
// creates.
func TestConformance(t *testing.T) {
	pool, dsn := openDB(t)
	server := serverAddr(t, dsn)
	for _, mode := range []connector.Mode{connector.Upsert, connector.Append} {
		t.Run(mode.String(), func(t *testing.T) {
			conntest.RunSink(t, conntest.Sink{
				Mode:   mode,
				Server: server,
				Target: func(t *testing.T) conntest.Target {
					name := table(t, pool, "")
					return conntest.Target{
						Sink: func(t *testing.T, via string) connector.Sink {
							s, err := postgres.New(postgres.Config{DSN: withAddr(t, dsn, via), Table: name, CreateTable: true}, connector.SinkEnv{Name: "out"})
							if err != nil {
								t.Fatal(err)
							}
							return s
						},
						Landed: func(t *testing.T) []row.Row { return tableRows(t, pool, name) },
					}
				},
			})
		})
	}
}

// serverAddr is the host:port of the server dsn names.
func serverAddr(t testing.TB, dsn string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// withAddr is dsn with its server at addr (a proxy).
func withAddr(t testing.TB, dsn, addr string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(cfg.User, cfg.Password), Host: addr, Path: "/" + cfg.Database, RawQuery: "sslmode=disable"}
	return u.String()
}

// tableRows reads the rows (id, v) of conntest.Schema in table name.
func tableRows(t *testing.T, pool *pgxpool.Pool, name string) []row.Row {
	t.Helper()
	var rows []row.Row
	for _, line := range dump(t, pool, name) {
		id, v, _ := strings.Cut(line, "|")
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		r := conntest.Row(n, v)
		if v == "NULL" {
			r[1] = row.NullValue
		}
		rows = append(rows, r)
	}
	return rows
}
