package checkpoint

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// names lists the store's directory.
func names(t *testing.T, s *Store) []string {
	t.Helper()
	entries, err := os.ReadDir(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func writeByte(b byte) func(io.Writer) error {
	return func(w io.Writer) error { _, err := w.Write([]byte{b}); return err }
}

// TestPartSyncFailure: a part whose fsync fails in the background fails
// the Write of a checkpoint that names it, which stores nothing; the
// part is gone, and DropUnstored removes the other parts written for
// that checkpoint.
func TestPartSyncFailure(t *testing.T) {
	s, err := Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	good, _, err := s.WritePart(1, "transform/a/0", writeByte(1))
	if err != nil {
		t.Fatal(err)
	}
	s.SetPartSync(func(*os.File) error { return errors.New("disk gone") })
	bad, _, err := s.WritePart(1, "transform/b/1", writeByte(2))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Write(&Checkpoint{ID: 1, Pipeline: "p", Time: time.Now(), Components: []Component{
		{ID: "transform/a/0", RuntimePart: good}, {ID: "transform/b/1", RuntimePart: bad}}})
	if err == nil || !strings.Contains(err.Error(), "disk gone") || !strings.Contains(err.Error(), "transform/b/1") {
		t.Fatalf("Write with a part that is not durable: %v", err)
	}
	if cp, err := s.Latest(); cp != nil || err != nil {
		t.Fatalf("stored %+v (%v)", cp, err)
	}
	if _, err := s.OpenPart(bad); err == nil {
		t.Error("opened a part that is not durable")
	}
	s.DropUnstored()
	if left := names(t, s); len(left) != 0 {
		t.Errorf("left behind: %q", left)
	}
}

// TestTidy: at a run's start the store removes what a killed run left:
// temporary files, parts of checkpoints after the newest and final
// parts it does not name; it keeps the parts the newest names.
func TestTidy(t *testing.T) {
	s, err := Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	p1, _, err := s.WritePart(1, "transform/a/0", writeByte(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(&Checkpoint{ID: 1, Pipeline: "p", Time: time.Now(), Components: []Component{{ID: "transform/a/0", RuntimePart: p1}}}); err != nil {
		t.Fatal(err)
	}
	// What a run killed while taking checkpoint 2 leaves.
	for _, n := range []string{partName(2, "transform/a/0", time.Now()), partName(0, "transform/a/0", time.Now()), partName(2, "transform/b/1", time.Now()) + tmpMarker + "123"} {
		if err := os.WriteFile(filepath.Join(s.Dir(), n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	again, _ := Open(filepath.Dir(s.Dir()), "p")
	cp, err := again.Latest()
	if err != nil {
		t.Fatal(err)
	}
	again.Tidy(cp)
	want := []string{fileName(1), manifestName, p1}
	slices.Sort(want)
	if got := names(t, again); !slices.Equal(got, want) {
		t.Errorf("after Tidy: %q, want %q", got, want)
	}
	empty, _ := Open(t.TempDir(), "p")
	os.WriteFile(filepath.Join(empty.Dir(), partName(3, "transform/a/0", time.Now())), []byte("x"), 0o644)
	empty.Tidy(nil)
	if left := names(t, empty); len(left) != 0 {
		t.Errorf("a store without checkpoints keeps %q", left)
	}
}
