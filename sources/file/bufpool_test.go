package file

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestReadBuffersReused: with the batches given back through
// TextRecycle, a parallel read reads into buffers it read into before
// once every batch decoded from them came back; a batch held (not given
// back) keeps its buffer: its STRING values read the same at the end of
// the read, whatever came after. Every batch's values are checked when
// read and the held ones again at the end. Small blocks and buffers,
// two workers; lines only, and with quoted records (cut by the
// splitter, which may put a block's records in two buffers: no reuse
// from the first such block on) and refused records (which on_error
// may keep: their buffer is never reused).
func TestReadBuffersReused(t *testing.T) {
	line := func(i int) string { return fmt.Sprintf("id-%d-%s,%d,%d", i, strings.Repeat("x", i%13), i, i) }
	for _, tc := range []struct {
		name  string
		quote int // every quote-th line is quoted (0: none)
		bad   int // every bad-th line is refused (0: none)
		reuse bool
	}{
		{"lines", 0, 0, true},
		{"quoted", 19000, 0, true}, // reused before the first quoted line
		{"refused", 0, 50, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withReader(t, 2, 97, 512)
			h := newHarness(t)
			h.skip = true
			var in strings.Builder
			want := map[int64]string{}
			for i := range 20000 { // past the first buffer, of bufferSize
				l := line(i)
				switch {
				case tc.bad > 0 && i%tc.bad == 7:
					l = fmt.Sprintf("bad-%d,x,%d", i, i)
				case tc.quote > 0 && i%tc.quote == tc.quote-1:
					l = fmt.Sprintf("\"id-%d\nq\",%d,%d", i, i, i)
					want[int64(i)] = fmt.Sprintf("id-%d\nq", i)
				default:
					want[int64(i)] = strings.SplitN(l, ",", 2)[0]
				}
				in.WriteString(l + "\n")
			}
			h.write("a.csv", in.String())
			s, err := h.build("path: "+filepath.Join(h.dir, "a.csv"), sensorSchema)
			if err != nil {
				t.Fatal(err)
			}
			back := s.TextRecycle()
			if err := s.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			reused := reusedBufs.Load()
			check := func(b *row.Batch, when string) {
				for _, c := range b.Changes {
					ts := c.Row[1].Int64()
					if got := c.Row[0].Str(); got != want[ts] {
						t.Fatalf("row %d %s: id %q, want %q", ts, when, got, want[ts])
					}
				}
			}
			var held []*row.Batch
			n, reads := 0, 0
			for {
				b, err := s.Read(context.Background(), 7)
				if b != nil {
					check(b, "when read")
					n += b.Len()
					reads++
					if reads%10 == 0 {
						held = append(held, b)
					} else {
						back(b)
					}
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if n != len(want) {
				t.Fatalf("%d rows read, want %d", n, len(want))
			}
			for _, b := range held {
				check(b, "held to the end")
			}
			if got := reusedBufs.Load() - reused; (got > 0) != tc.reuse {
				t.Errorf("%d buffers read into again", got)
			}
		})
	}
}
