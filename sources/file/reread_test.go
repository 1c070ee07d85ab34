package file

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestRereadTo: a source read again up to a position another read of the
// same files took returns the records before it, over several files, in
// batches of any size, then io.EOF; a followed file the same, as long as
// it is the file the position was taken in.
func TestRereadTo(t *testing.T) {
	h := newHarness(t)
	h.write("in/a.csv", "s1,1,1\ns2,2,2\ns3,3,3\n")
	h.write("in/b.csv", "s4,4,4\ns5,5,5\n")
	glob := "path: " + h.dir + "/in/*.csv"
	for _, read := range []int{0, 2, 4, 5} {
		s := h.open(glob, sensorSchema)
		var want []string
		for len(want) < read {
			b, err := s.Read(context.Background(), 1)
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			if b != nil {
				for _, c := range b.Changes {
					want = append(want, c.String())
				}
			}
			if err != nil {
				break
			}
		}
		pos, err := s.Position()
		if err != nil {
			t.Fatal(err)
		}
		for _, max := range []int{1, 2, 100} {
			again := h.mustBuild(glob, sensorSchema)
			if err := again.RereadTo(pos); err != nil {
				t.Fatal(err)
			}
			if err := again.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			got, err := readAll(again, max)
			again.Close(context.Background())
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("%d read, batches of %d: reread %q, %v; want %q", read, max, got, err, want)
			}
		}
	}

	// A followed file: its position is read again as a plain read.
	path := h.write("f.csv", "s1,1,1\ns2,2,2\n")
	follow := "path: " + path + "\nfollow: true\nmonitor_interval: 10ms"
	s := h.open(follow, sensorSchema)
	if b, err := s.Read(context.Background(), 10); err != nil || b.Len() != 2 {
		t.Fatalf("followed read: %v, %v", b, err)
	}
	pos, _ := s.Position()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("s3,3,3\n")
	f.Close()
	again := h.mustBuild(follow, sensorSchema)
	if err := again.RereadTo(pos); err != nil {
		t.Fatal(err)
	}
	if err := again.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(again, 10)
	again.Close(context.Background())
	if err != nil || len(got) != 2 || !strings.Contains(got[1], "s2") {
		t.Errorf("followed reread: %q, %v; want the two rows before the position", got, err)
	}

	// Replaced since: refused, naming why.
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	h.write("f.csv", "s1,1,1\ns2,2,2\n")
	if err := h.mustBuild(follow, sensorSchema).RereadTo(pos); err == nil || !strings.Contains(err.Error(), "no longer the file") {
		t.Errorf("a replaced file: %v", err)
	}
	// A position that counts files let go of.
	left := strings.Replace(string(pos), `"files"`, `"left":1,"files"`, 1)
	if err := h.mustBuild(follow, sensorSchema).RereadTo([]byte(left)); err == nil || !strings.Contains(err.Error(), "rotated or truncated") {
		t.Errorf("a position with files let go of (%s): %v", left, err)
	}
}
