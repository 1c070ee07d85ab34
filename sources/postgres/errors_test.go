package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/sources/postgres"
)

// openErr opens a source that must fail, and returns the error.
func openErr(t *testing.T, cfg postgres.Config, pos []byte, cols ...string) error {
	t.Helper()
	s := build(t, cfg, nil, cols...)
	if pos != nil {
		if err := s.Restore(pos); err != nil {
			t.Fatal(err)
		}
	}
	defer s.Close(context.Background())
	err := s.Open(testenv.Context(t, time.Minute))
	if err == nil {
		t.Fatal("Open succeeded")
	}
	return err
}

// readErr reads s until it fails, and returns the error.
func readErr(t *testing.T, s *postgres.Source) error {
	t.Helper()
	ctx := testenv.Context(t, time.Minute)
	for {
		if _, err := s.Read(ctx, 100); err != nil {
			return err
		}
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Fatalf("error %v\nwant it to say %q", err, p)
		}
	}
	if strings.Contains(err.Error(), "etld-test-pw") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// TestOpenRefuses: what the source needs of the server and is not there
// is an error at Open that says what to do.
func TestOpenRefuses(t *testing.T) {
	f := newFixture(t, "id bigint PRIMARY KEY, v text")
	t.Run("replica identity", func(t *testing.T) {
		f.exec(t, "ALTER TABLE $T REPLICA IDENTITY DEFAULT")
		defer f.exec(t, "ALTER TABLE $T REPLICA IDENTITY FULL")
		wantErr(t, openErr(t, f.config(), nil, "id BIGINT"), "REPLICA IDENTITY DEFAULT", `ALTER TABLE "public".`+ident(f.table)+" REPLICA IDENTITY FULL")
	})
	t.Run("no publication", func(t *testing.T) {
		cfg := f.config()
		cfg.CreatePublication = false
		wantErr(t, openErr(t, cfg, nil, "id BIGINT"), "publication "+f.slot+" does not exist", "create_publication: true")
	})
	t.Run("no slot", func(t *testing.T) {
		cfg := f.config()
		cfg.CreateSlot = false
		wantErr(t, openErr(t, cfg, nil, "id BIGINT"), "replication slot "+f.slot+" does not exist", "create_slot: true")
	})
	t.Run("no column", func(t *testing.T) {
		wantErr(t, openErr(t, f.config(), nil, "id BIGINT", "nope STRING"), `has no column "nope"`, `"v" text`)
	})
	t.Run("type", func(t *testing.T) {
		wantErr(t, openErr(t, f.config(), nil, "id BIGINT", "v INT"), `column "v" of table public.`+f.table+` is text, which does not read as INT`)
	})
}

// TestDroppedSlot: a slot dropped under the source is an error that says
// so, mid-stream and at the next start, never a silent start from
// nothing.
func TestDroppedSlot(t *testing.T) {
	f := newFixture(t, "id bigint PRIMARY KEY, v text")
	f.exec(t, "INSERT INTO $T VALUES (1, 'a')")
	s := open(t, f.config(), nil, "id BIGINT", "v STRING")
	readN(t, s, 1, 10)
	f.exec(t, "INSERT INTO $T VALUES (2, 'b')")
	readN(t, s, 1, 10)
	pos, err := s.Position()
	if err != nil {
		t.Fatal(err)
	}
	testenv.DropPostgresSlot(t, f.pool, f.slot)
	wantErr(t, readErr(t, s), "replication slot "+f.slot+" does not exist", "it was dropped", "does not start again from nothing")
	cfg := f.config() // create_slot: true, and still no new slot
	wantErr(t, openErr(t, cfg, pos, "id BIGINT", "v STRING"), "replication slot "+f.slot+" does not exist", "it was dropped")
}

// TestSchemaChanges: a column the source does not read may come and go;
// a read column dropped or changed in type is an error naming the
// change.
func TestSchemaChanges(t *testing.T) {
	for _, tc := range []struct {
		name, ddl string
		want      []string
	}{
		{"type changed", "ALTER TABLE $T ALTER COLUMN n TYPE bigint", []string{`column "n" changed type from integer to bigint`}},
		{"dropped", "ALTER TABLE $T DROP COLUMN n", []string{`column "n" was dropped (or renamed)`}},
		{"renamed", "ALTER TABLE $T RENAME COLUMN n TO m", []string{`column "n" was dropped (or renamed)`, `column "m" was added (integer)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "id bigint PRIMARY KEY, v text, n int")
			s := open(t, f.config(), nil, "id BIGINT", "n INT")
			f.exec(t, "INSERT INTO $T VALUES (1, 'a', 1)")
			readN(t, s, 1, 10)
			// A column the source does not read: taken.
			f.exec(t, "ALTER TABLE $T ADD COLUMN extra text, DROP COLUMN v")
			f.exec(t, "INSERT INTO $T VALUES (2, 2, 'x')")
			if got := printed(readN(t, s, 1, 10)); got[0] != "+I[2, 2]" {
				t.Fatalf("after a change of other columns: %v", got)
			}
			f.exec(t, tc.ddl)
			f.exec(t, "INSERT INTO $T (id) VALUES (3)")
			wantErr(t, readErr(t, s), append([]string{"table public." + f.table + " changed"}, tc.want...)...)
		})
	}
}

// TestTruncate: a TRUNCATE of a captured table is an error: the source
// cannot retract the rows it removed.
func TestTruncate(t *testing.T) {
	f := newFixture(t, "id bigint PRIMARY KEY, v text")
	f.exec(t, "INSERT INTO $T VALUES (1, 'a')")
	s := open(t, f.config(), nil, "id BIGINT", "v STRING")
	readN(t, s, 1, 10)
	f.exec(t, "TRUNCATE $T")
	wantErr(t, readErr(t, s), "table public."+f.table+" was truncated")
}
