package file

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// readRows reads until it has n more rows, failing after 10 s, and
// returns each row's value and its record's location.
func readRows(t *testing.T, s *Source, n int) ([]int64, []row.Location) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var vals []int64
	var locs []row.Location
	for len(vals) < n {
		b, err := s.Read(ctx, 100)
		if b != nil {
			for i, c := range b.Changes {
				loc, ok := b.Origin.(row.Locator).Locate(i)
				if !ok {
					t.Fatalf("row %d of the batch has no location", i)
				}
				vals, locs = append(vals, c.Row[0].Int64()), append(locs, loc)
			}
		}
		if err != nil {
			t.Fatalf("after %v: %v", vals, err)
		}
	}
	return vals, locs
}

// After a rotation the same name and line stand for two records:
// app.log:2 of the old file and of the new one. Their locations tell
// them apart by the file's identity, and give the byte offset in it; so
// do a bad record's.
func TestLocationsTellRotatedFilesApart(t *testing.T) {
	h := newHarness(t)
	h.skip = true
	path := h.write("app.log", "1\nbad\n3\n")
	s := h.open("path: "+path+"\nformat: csv\nfollow: true\nmonitor_interval: 10ms\nrotate_wait: 50ms", "[v BIGINT]")
	_, before := readRows(t, s, 2)
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "7\nbad\n")
	vals, after := readRows(t, s, 1)
	if vals[0] != 7 {
		t.Fatalf("read %v after the rotation, want 7", vals)
	}
	old, cur := before[1], after[0]
	if old.ID == "" || cur.ID == "" || old.ID == cur.ID {
		t.Errorf("file identities %q and %q: want two, one for each file the name stood for", old.ID, cur.ID)
	}
	if old != (row.Location{File: path, ID: old.ID, Line: 3, Offset: 6}) || cur != (row.Location{File: path, ID: cur.ID, Line: 1, Offset: 0}) {
		t.Errorf("locations %+v and %+v, want line 3 at byte 6 of the old file and line 1 at byte 0 of the new one", old, cur)
	}
	// The new file's bad line is read with the row after it, or at once.
	deadline := time.Now().Add(10 * time.Second)
	for len(h.rejects) < 2 && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, _ = s.Read(ctx, 100)
		cancel()
	}
	if len(h.rejects) != 2 {
		t.Fatalf("%d bad records, want 2", len(h.rejects))
	}
	a, b := h.rejects[0], h.rejects[1]
	if a.Position != b.Position {
		t.Fatalf("positions %q and %q: the test wants the same name and line in both files", a.Position, b.Position)
	}
	if a.Location == nil || b.Location == nil || a.Location.ID != old.ID || b.Location.ID != cur.ID || a.Location.Offset != 2 || b.Location.Offset != 2 {
		t.Errorf("bad records at %+v and %+v: want byte 2 of the old file (%s) and of the new one (%s)", a.Location, b.Location, old.ID, cur.ID)
	}
}
