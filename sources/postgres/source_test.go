package postgres_test

import (
	"slices"
	"strings"
	"testing"
)

// TestSnapshotThenStream reads a table's rows, then its inserts, updates
// (with the old row) and deletes in commit order, with the metadata
// columns.
func TestSnapshotThenStream(t *testing.T) {
	f := newFixture(t, "id bigint PRIMARY KEY, v text, n numeric(10,2)")
	f.exec(t, "INSERT INTO $T VALUES (1, 'a', 1.50), (2, 'b', NULL), (3, 'c', 3)")
	s := open(t, f.config(), nil, "id BIGINT", "v STRING", "n DECIMAL(10, 2)", "tn STRING METADATA FROM 'table_name'")
	got := printed(readN(t, s, 3, 10))
	want := []string{"+I[1, a, 1.50, " + f.table + "]", "+I[2, b, null, " + f.table + "]", "+I[3, c, 3.00, " + f.table + "]"}
	if !slices.Equal(got, want) {
		t.Fatalf("snapshot\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	f.exec(t, "INSERT INTO $T VALUES (4, 'd', 4)")
	f.exec(t, "UPDATE $T SET v = 'bb', n = 2 WHERE id = 2")
	f.exec(t, "DELETE FROM $T WHERE id = 1")
	got = printed(readN(t, s, 4, 10))
	want = []string{"+I[4, d, 4.00, " + f.table + "]", "-U[2, b, null, " + f.table + "]", "+U[2, bb, 2.00, " + f.table + "]", "-D[1, a, 1.50, " + f.table + "]"}
	if !slices.Equal(got, want) {
		t.Fatalf("stream\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
