package file

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
)

// The source counts the bytes it read from its files (connector.Meter),
// which etld_source_bytes_total exports.
func TestSourceCountsBytesRead(t *testing.T) {
	h := newHarness(t)
	a := "id,ts,temperature\na1,1,1\na2,2,1\n"
	b := "id,ts,temperature\nb1,3,1"
	h.write("d/a.csv", a)
	h.write("d/b.csv", b)
	s := h.open("path: "+filepath.Join(h.dir, "d", "*.csv")+"\nformat: {type: csv, header: true}", sensorSchema)
	var m connector.Meter = s
	if n := m.Bytes(); n != 0 {
		t.Errorf("Bytes before reading = %d, want 0", n)
	}
	if _, err := readAll(s, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Bytes(), int64(len(a)+len(b)); got != want {
		t.Errorf("Bytes = %d, want %d (both files, headers included)", got, want)
	}
}

// Size tells how far into its files the source is, of their total size
// (connector.Sizer), for the progress bar: it grows as batches are read,
// reaches the total at the end, and a restored source starts at its
// position's place in the whole input, not at 0.
func TestSourceSize(t *testing.T) {
	h := newHarness(t)
	var sizes []int64
	for _, name := range []string{"a", "b", "c"} {
		var b strings.Builder
		b.WriteString("id,ts,temperature\n")
		for i := 0; b.Len() < 300<<10; i++ { // more than the read buffer
			fmt.Fprintf(&b, "%s%d,%d,21.5\n", name, i, i)
		}
		h.write("d/"+name+".csv", b.String())
		sizes = append(sizes, int64(b.Len()))
	}
	total := sizes[0] + sizes[1] + sizes[2]
	opts := "path: " + filepath.Join(h.dir, "d", "*.csv") + "\nformat: {type: csv, header: true}"
	s, err := h.build(opts, sensorSchema)
	if err != nil {
		t.Fatal(err)
	}
	var sz connector.Sizer = s
	if done, tot := sz.Size(); done != 0 || tot != 0 {
		t.Errorf("Size before Open = %d, %d; want 0, 0 (unknown)", done, tot)
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if done, tot := sz.Size(); done != 0 || tot != total {
		t.Errorf("Size after Open = %d, %d; want 0, %d", done, tot, total)
	}
	var last, between int64
	var pos []byte
	for {
		b, err := s.Read(context.Background(), 5000)
		done, tot := sz.Size()
		if done < last || tot != total {
			t.Fatalf("Size = %d, %d after %d: want a growing done of %d", done, tot, last, total)
		}
		last = done
		if done > 0 && done < total {
			between++
		}
		if done > sizes[0] && pos == nil {
			if pos, err = s.Position(); err != nil {
				t.Fatal(err)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil || b == nil {
			t.Fatalf("Read: %v", err)
		}
	}
	if last != total || between < 3 {
		t.Errorf("Size ended at %d of %d, with %d reads in between; want the total, and steps on the way", last, total, between)
	}

	var p struct {
		File   string
		Offset int64
	}
	if err := json.Unmarshal(pos, &p); err != nil || filepath.Base(p.File) != "b.csv" || p.Offset == 0 {
		t.Fatalf("position %s (%v): want one inside b.csv", pos, err)
	}
	resumed, err := h.build(opts, sensorSchema)
	if err != nil {
		t.Fatal(err)
	}
	if err := resumed.Restore(pos); err != nil {
		t.Fatal(err)
	}
	if err := resumed.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer resumed.Close(context.Background())
	if done, tot := resumed.Size(); done != sizes[0]+p.Offset || tot != total {
		t.Errorf("restored at %s: Size = %d, %d; want %d (a.csv and b.csv up to the offset), %d", pos, done, tot, sizes[0]+p.Offset, total)
	}
	if _, err := readAll(resumed, 5000); err != nil {
		t.Fatal(err)
	}
	if done, _ := resumed.Size(); done != total {
		t.Errorf("restored source ended at %d, want %d", done, total)
	}
}
