package postgres_test

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/sources/postgres"
)

// TestOpenOutlivesRestart: the server going away after the source
// connected, while Open checks the table (a restart under a crash test),
// is waited out like a failed connect, not a failed Open. The proxy cuts
// the connection after n bytes from the client, for n across the
// connect and the checks, and comes back once the source knocked again.
func TestOpenOutlivesRestart(t *testing.T) {
	pool, dsn := testenv.Postgres(t)
	name := testenv.PostgresTable(t, pool, "")
	exec(t, pool, "CREATE TABLE "+ident(name)+" (id bigint PRIMARY KEY, v text)")
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for n := int64(100); n <= 1200; n += 50 {
		p := testenv.NewProxy(t, net.JoinHostPort(pc.Host, strconv.Itoa(int(pc.Port))))
		p.Up()
		p.CutAfter(n)
		u := url.URL{Scheme: "postgres", User: url.UserPassword(pc.User, pc.Password), Host: p.Addr(), Path: "/" + pc.Database, RawQuery: "sslmode=disable"}
		s := build(t, postgres.Config{DSN: u.String(), Table: name, Startup: "snapshot"}, nil, "id BIGINT", "v STRING")
		done := make(chan struct{})
		go func() {
			for p.Refused() == 0 {
				select {
				case <-done:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
			p.Up()
		}()
		err := s.Open(testenv.Context(t, time.Minute))
		close(done)
		s.Close(context.Background())
		if err != nil {
			t.Fatalf("cut after %d bytes: %v", n, err)
		}
	}
}
