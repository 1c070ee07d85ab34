package postgres_test

import (
	"fmt"
	"testing"
)

// TestSnapshotRowKeyOfUnorderedTable reads the snapshot of a table whose
// key the source cannot order (a double precision key: read whole, in no
// order) with the row_key metadata: every row with its own key. The
// writer once kept the row_key texts of such a table in the chunk's key
// list and cut it back to empty, which Read then took for the keys of
// an ordered table and sliced past (a panic).
func TestSnapshotRowKeyOfUnorderedTable(t *testing.T) {
	f := newFixture(t, "id double precision PRIMARY KEY, v text")
	f.exec(t, "INSERT INTO $T SELECT i, 'v' || i FROM generate_series(1, 50) i")
	cfg := f.config()
	cfg.Startup = "snapshot"
	s := open(t, cfg, nil, "id DOUBLE", "k STRING METADATA FROM 'row_key'")
	got := readAll(t, s, 7)
	if len(got) != 50 {
		t.Fatalf("read %d rows, want 50", len(got))
	}
	seen := map[string]bool{}
	for _, c := range got {
		id, k := c.Row[0].Float64(), c.Row[1].Str()
		if want := fmt.Sprintf(`["%g"]`, id); k != want {
			t.Fatalf("row %v has row_key %s, want %s", id, k, want)
		}
		seen[k] = true
	}
	if len(seen) != 50 {
		t.Fatalf("%d distinct keys, want 50", len(seen))
	}
}
