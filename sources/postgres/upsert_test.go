package postgres_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// TestKeyUpdate: an update of a row's primary key reads as -D of the old
// row and +I of the new, as Debezium tells it (an upsert sink drops -U,
// and -U/+U of two keys would leave the old key's row in it); with
// changelog_mode upsert under the default identity, as -D of the old
// key (its other columns NULL) and +U of the new row, and an update of
// other columns as +U alone.
func TestKeyUpdate(t *testing.T) {
	for _, tc := range []struct {
		mode, identity string
		want           []string
	}{
		{"all", "FULL", []string{"-D[1, a]", "+I[2, a]", "-U[2, a]", "+U[2, b]", "-D[2, b]"}},
		{"upsert", "DEFAULT", []string{"-D[1, null]", "+U[2, a]", "+U[2, b]", "-D[2, null]"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			f := newFixture(t, "id bigint PRIMARY KEY, v text")
			f.exec(t, "ALTER TABLE $T REPLICA IDENTITY "+tc.identity)
			f.exec(t, "INSERT INTO $T VALUES (1, 'a')")
			cfg := f.config()
			cfg.ChangelogMode = tc.mode
			s := build(t, cfg, nil, "id BIGINT", "v STRING")
			s.UpsertKey([]string{"id"})
			if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close(t.Context()) })
			if got := printed(readN(t, s, 1, 10)); !slices.Equal(got, []string{"+I[1, a]"}) {
				t.Fatalf("snapshot %v", got)
			}
			f.exec(t, "UPDATE $T SET id = 2 WHERE id = 1")
			f.exec(t, "UPDATE $T SET v = 'b'")
			f.exec(t, "DELETE FROM $T")
			if got := printed(readN(t, s, len(tc.want), 10)); !slices.Equal(got, tc.want) {
				t.Fatalf("changes %v, want %v", got, tc.want)
			}
		})
	}
}

// TestUpsertRefusals: changelog_mode upsert refuses at Open a declared
// key that is not what a delete carries, and a table whose deletes carry
// no key.
func TestUpsertRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, identity string
		key            []string
		want           string
	}{
		{"key of another column", "DEFAULT", []string{"v"}, "key column v is not a key column of table"},
		{"key short of the primary key", "DEFAULT", []string{"id"}, "does not identify a row"},
		{"identity nothing", "NOTHING", []string{"id", "id2"}, "REPLICA IDENTITY NOTHING"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "id bigint, id2 int, v text, PRIMARY KEY (id, id2)")
			f.exec(t, "ALTER TABLE $T REPLICA IDENTITY "+tc.identity)
			cfg := f.config()
			cfg.ChangelogMode = "upsert"
			s := build(t, cfg, nil, "id BIGINT", "id2 INT", "v STRING")
			s.UpsertKey(tc.key)
			err := s.Open(testenv.Context(t, time.Minute))
			_ = s.Close(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("open: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
