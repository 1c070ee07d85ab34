package nexmark

import (
	"bytes"
	"io"
	"log/slog"
	"testing"
)

func testLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// FuzzRestore: a position is either refused, leaving the source as it
// was, or taken whole: the source then reports a position holding the same
// state (varints may come back in their shortest form).
func FuzzRestore(f *testing.F) {
	s := mustOpen(f, fixed)
	read(f, s, 77, 77)
	good, _ := s.Position()
	f.Add(good)
	f.Add([]byte{1})
	f.Add([]byte{1, 0x80})
	f.Fuzz(func(t *testing.T, pos []byte) {
		s, err := build(t, fixed)
		if err != nil {
			t.Fatal(err)
		}
		before := s.marshalPosition()
		if err := s.Restore(pos); err != nil {
			if !bytes.Equal(s.marshalPosition(), before) {
				t.Fatalf("a refused position %x changed the source", pos)
			}
			return
		}
		got := s.marshalPosition()
		again, _ := build(t, fixed)
		if err := again.Restore(got); err != nil {
			t.Fatalf("restored %x, reports %x, which is refused: %v", pos, got, err)
		}
		if again.emitted != s.emitted || again.rng != s.rng || again.gen.baseTime != s.gen.baseTime {
			t.Fatalf("restored %x, reports %x, which restores to another state", pos, got)
		}
	})
}

// FuzzBaseTime: base_time either parses or is refused with its text; it
// never panics.
func FuzzBaseTime(f *testing.F) {
	for _, s := range []string{"2023-11-14 22:13:20", "2023-11-14T22:13:20.5Z", "2023-11-14 22:13:20.123456789", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := parseTime(s); err != nil && !bytes.Contains([]byte(err.Error()), []byte("is not a timestamp")) {
			t.Fatalf("%q: %v", s, err)
		}
	})
}
