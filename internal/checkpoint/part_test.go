package checkpoint

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// TestPartRoundTrip: a state written in pieces of any size reads back
// whole, across chunk boundaries; a flipped byte or a cut file is
// refused, never read as a shorter state.
func TestPartRoundTrip(t *testing.T) {
	s, err := Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	state := make([]byte, 3*partChunkMax+12345)
	for i := range state {
		state[i] = byte(rng.IntN(256))
	}
	name, size, err := s.WritePart(7, "transform/t/0", func(w io.Writer) error {
		for rest := state; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(200000))
			if _, err := w.Write(rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func() ([]byte, error) {
		r, err := s.OpenPart(name)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return io.ReadAll(r)
	}
	got, err := read()
	if err != nil || !bytes.Equal(got, state) {
		t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(state))
	}
	if st, err := os.Stat(filepath.Join(s.Dir(), name)); err != nil || st.Size() != size || size < int64(len(state)) {
		t.Fatalf("part %s: size %d, stat %v %v", name, size, st, err)
	}
	path := filepath.Join(s.Dir(), name)
	raw, _ := os.ReadFile(path)
	flipped := bytes.Clone(raw)
	flipped[len(flipped)/2] ^= 1
	os.WriteFile(path, flipped, 0o644)
	if _, err := read(); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("a flipped byte: %v, want damaged", err)
	}
	os.WriteFile(path, raw[:len(raw)-partChunkMax], 0o644)
	if _, err := read(); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("a cut part: %v, want damaged", err)
	}
	if _, err := s.OpenPart("../chk-1"); err == nil {
		t.Error("OpenPart read outside the parts")
	}
}

// TestCheckpointNamesPartsAndPrunes: a checkpoint names its parts and
// restores with them; parts are removed once no kept checkpoint may name
// them, but a part written for a checkpoint still to come is kept.
func TestCheckpointNamesPartsAndPrunes(t *testing.T) {
	s, err := Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	s.keep = 2
	write := func(id int64, final string) string {
		t.Helper()
		name, _, err := s.WritePart(id, "transform/t/0", func(w io.Writer) error {
			_, err := w.Write([]byte{byte(id)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		comps := []Component{{ID: "transform/t/0", RuntimePart: name}}
		if final != "" {
			comps = append(comps, Component{ID: "transform/u/1", RuntimePart: final, Ended: true})
		}
		if _, err := s.Write(&Checkpoint{ID: id, Pipeline: "p", Time: time.Now(), Components: comps}); err != nil {
			t.Fatal(err)
		}
		return name
	}
	final, _, err := s.WritePart(0, "transform/u/1", func(w io.Writer) error { _, err := w.Write([]byte("end")); return err })
	if err != nil {
		t.Fatal(err)
	}
	p1 := write(1, final)
	p2 := write(2, final)
	// Written for checkpoint 4 while 3 is taken.
	early, _, err := s.WritePart(4, "transform/t/0", func(w io.Writer) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	p3 := write(3, final)
	exists := func(n string) bool { _, err := os.Stat(filepath.Join(s.Dir(), n)); return err == nil }
	if exists(p1) || !exists(p2) || !exists(p3) || !exists(final) || !exists(early) {
		t.Fatalf("after checkpoint 3 (keep 2): part 1 %v, 2 %v, 3 %v, final %v, early 4 %v; want only 1 gone",
			exists(p1), exists(p2), exists(p3), exists(final), exists(early))
	}
	cp, err := s.Latest()
	if err != nil || cp.ID != 3 || cp.Find("transform/t/0").RuntimePart != p3 || cp.Find("transform/u/1").RuntimePart != final {
		t.Fatalf("latest %+v, %v", cp, err)
	}
	r, err := s.OpenPart(cp.Find("transform/u/1").RuntimePart)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(b) != "end" {
		t.Fatalf("final part %q, %v", b, err)
	}
}

// TestReadsVersion1: a checkpoint file of format 1 (before parts), and
// its manifest, still restore.
func TestReadsVersion1(t *testing.T) {
	s, err := Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	want := sample(9)
	var body []byte
	body = append(body, magic...)
	body = append(body, 1)
	body = binary.AppendVarint(body, want.ID)
	body = binary.AppendVarint(body, want.Time.UnixNano())
	body = appendBool(body, want.Finished)
	body = row.AppendString(body, want.Pipeline)
	body = binary.AppendUvarint(body, uint64(len(want.Components)))
	for _, c := range want.Components {
		body = row.AppendString(body, c.ID)
		body = row.AppendString(body, c.Fingerprint)
		body = appendBool(body, c.Ended)
		body = binary.AppendUvarint(body, uint64(len(c.Runtime)))
		body = append(body, c.Runtime...)
		body = appendBool(body, c.Connector != nil)
		body = binary.AppendUvarint(body, uint64(len(c.Connector)))
		body = append(body, c.Connector...)
	}
	body = binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, castagnoli))
	os.WriteFile(filepath.Join(s.Dir(), fileName(9)), body, 0o644)
	os.WriteFile(filepath.Join(s.Dir(), manifestName), []byte(`{"version":1,"id":9,"file":"`+fileName(9)+`","time":"x"}`+"\n"), 0o644)
	cp, err := s.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if cp.ID != 9 || len(cp.Components) != 4 || !bytes.Equal(cp.Components[1].Runtime, want.Components[1].Runtime) || cp.Components[1].RuntimePart != "" || cp.Components[1].Entries != -1 {
		t.Fatalf("version 1 read as %+v", cp)
	}
}
