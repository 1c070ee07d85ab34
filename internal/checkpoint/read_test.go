package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadWithoutWriting: a state directory reads back without writing
// anything: its pipelines, each one's kept checkpoints and each of
// them; a missing pipeline is an error and makes no directory.
func TestReadWithoutWriting(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 5; id++ {
		if _, err := s.Write(sample(id)); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	if got, err := Pipelines(dir); err != nil || !slices.Equal(got, []string{"p"}) {
		t.Fatalf("pipelines %q, %v", got, err)
	}
	r, err := OpenExisting(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := r.IDs()
	if err != nil || !slices.Equal(ids, []int64{3, 4, 5}) {
		t.Fatalf("ids %v, %v; want the 3 kept", ids, err)
	}
	cp, err := r.Read(4)
	if err != nil || cp.ID != 4 || cp.Find("transform/t/0").Entries != 4321 {
		t.Fatalf("read 4: %+v, %v", cp, err)
	}
	if size, err := r.Size(cp.Find("transform/t/0")); err != nil || size != 100000 {
		t.Errorf("size %d, %v", size, err)
	}
	if _, err := r.Read(1); err == nil || !strings.Contains(err.Error(), "keeps the last 3") {
		t.Errorf("a pruned checkpoint: %v", err)
	}
	if _, err := OpenExisting(dir, "nope"); err == nil {
		t.Error("opened the store of a pipeline without state")
	}
	if _, err := os.Stat(filepath.Join(dir, "nope")); err == nil {
		t.Error("OpenExisting made a directory")
	}
}
