package checkpoint

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sample(id int64) *Checkpoint {
	return &Checkpoint{
		ID: id, Pipeline: "p", Time: time.Unix(1700000000, 5), Finished: id%2 == 0,
		Components: []Component{
			{ID: "source/s", Fingerprint: "file (a BIGINT)", Connector: []byte(`{"offset":12}`), Runtime: []byte{1, 2}, Entries: -1},
			{ID: "transform/t/0", Fingerprint: "GroupAggregate", Runtime: bytes.Repeat([]byte{7}, 100000), Ended: true, Entries: 4321, StateTTL: time.Hour},
			{ID: "sink/k", Fingerprint: "print append", Connector: []byte{}, Entries: -1},
			{ID: "sink/n", Fingerprint: "print append", Entries: -1},
		},
	}
}

func TestStoreRoundTripAndKeep(t *testing.T) {
	s, err := Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if cp, err := s.Latest(); err != nil || cp != nil {
		t.Fatalf("empty store: %v, %v", cp, err)
	}
	for id := int64(1); id <= 5; id++ {
		size, err := s.Write(sample(id))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(filepath.Join(s.Dir(), fileName(id)))
		if st == nil || st.Size() != size {
			t.Fatalf("size %d, file %v", size, st)
		}
	}
	cp, err := s.Latest()
	if err != nil {
		t.Fatal(err)
	}
	want := sample(5)
	if cp.ID != 5 || cp.Pipeline != "p" || !cp.Time.Equal(want.Time) || cp.Finished != want.Finished || len(cp.Components) != 4 {
		t.Fatalf("got %+v", cp)
	}
	for i, c := range cp.Components {
		w := want.Components[i]
		if c.ID != w.ID || c.Fingerprint != w.Fingerprint || c.Ended != w.Ended || !bytes.Equal(c.Runtime, w.Runtime) ||
			!bytes.Equal(c.Connector, w.Connector) || (c.Connector == nil) != (w.Connector == nil) {
			t.Errorf("component %d: got %+v, want %+v", i, c, w)
		}
	}
	if cp.Find("sink/k") == nil || cp.Find("nope") != nil {
		t.Error("Find")
	}
	files, _ := filepath.Glob(filepath.Join(s.Dir(), filePrefix+"*"))
	if len(files) != DefaultKeep {
		t.Errorf("%d checkpoint files kept, want %d: %v", len(files), DefaultKeep, files)
	}
}

// A crash mid-write leaves a temporary file: it is never read, and the
// next write removes it.
func TestTornWriteIsInvisible(t *testing.T) {
	s, _ := Open(t.TempDir(), "p")
	if _, err := s.Write(sample(1)); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(s.Dir(), fileName(2)+tmpMarker+"123")
	os.WriteFile(tmp, []byte("ETLDCKPT\x01half"), 0o644)
	if cp, err := s.Latest(); err != nil || cp.ID != 1 {
		t.Fatalf("latest after a torn write: %v, %v", cp, err)
	}
	if _, err := s.Write(sample(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}
}

func TestDamageIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		damage     func(dir string)
	}{
		{"flipped byte", "checksum", func(dir string) {
			p := filepath.Join(dir, fileName(1))
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 1
			os.WriteFile(p, b, 0o644)
		}},
		{"truncated", "checksum", func(dir string) {
			p := filepath.Join(dir, fileName(1))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-10], 0o644)
		}},
		{"missing file", "no such file", func(dir string) { os.Remove(filepath.Join(dir, fileName(1))) }},
		{"bad manifest", "damaged", func(dir string) { os.WriteFile(filepath.Join(dir, manifestName), []byte("{"), 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := Open(t.TempDir(), "p")
			if _, err := s.Write(sample(1)); err != nil {
				t.Fatal(err)
			}
			tc.damage(s.Dir())
			_, err := s.Latest()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := Open(t.TempDir(), "../x"); err == nil {
		t.Error("a pipeline name with a slash was accepted")
	}
}

func FuzzDecode(f *testing.F) {
	var b bytes.Buffer
	encode(&b, sample(3))
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, raw []byte) {
		decode(raw) // must not panic
	})
}

// TestInstanceStaysUntilRemoved: the instance id is made once, survives
// reopening the store (a restarted run, with or without a checkpoint),
// and is new once the state directory is removed.
func TestInstanceStaysUntilRemoved(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	id, since, err := s.Instance()
	if err != nil || id == "" || since.IsZero() {
		t.Fatalf("Instance() = %q, %v, %v", id, since, err)
	}
	s2, err := Open(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	if id2, since2, err := s2.Instance(); err != nil || id2 != id || !since2.Equal(since) {
		t.Fatalf("reopened: Instance() = %q, %v, %v; want %q, %v", id2, since2, err, id, since)
	}
	if err := os.RemoveAll(s.Dir()); err != nil {
		t.Fatal(err)
	}
	s3, err := Open(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	if id3, _, err := s3.Instance(); err != nil || id3 == id {
		t.Fatalf("after removing the state: Instance() = %q, %v; want a new id", id3, err)
	}
	if err := os.WriteFile(filepath.Join(s3.Dir(), "INSTANCE"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s3.Instance(); err == nil || !strings.Contains(err.Error(), "INSTANCE is damaged") {
		t.Fatalf("damaged INSTANCE: err = %v", err)
	}
}

// A note is kept across reopening and checkpoints (pruning leaves it), and
// goes with the directory.
func TestNotesStayWithTheDirectory(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Note("a"); got != nil || err != nil {
		t.Fatalf("Note of nothing = %q, %v; want nil, nil", got, err)
	}
	if err := s.SetNote("a", []byte("17")); err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= DefaultKeep+2; id++ {
		if _, err := s.Write(&Checkpoint{ID: id, Pipeline: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	s2, err := Open(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Note("a"); string(got) != "17" || err != nil {
		t.Fatalf("Note after reopening and checkpoints = %q, %v; want 17", got, err)
	}
	if err := os.RemoveAll(s.Dir()); err != nil {
		t.Fatal(err)
	}
	s3, err := Open(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s3.Note("a"); got != nil || err != nil {
		t.Fatalf("Note after removing the state = %q, %v; want nil", got, err)
	}
}

// Fence numbers grow from call to call and from store to store on the
// same directory, follow the clock when it is ahead, and are stored
// before Fence returns; a checkpoint written meanwhile (whose prune
// removes temporary files) never breaks one.
func TestFenceGrows(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, "p")
	at := time.Unix(1_700_000_000, 0)
	first, err := s.Fence(at)
	if err != nil || first != 1_700_000_000 {
		t.Fatalf("first fence %d, %v; want the clock's seconds", first, err)
	}
	// Lives quicker than the clock, and a clock set back, still grow.
	for i, now := range []time.Time{at, at.Add(-time.Hour), at.Add(time.Millisecond)} {
		f, err := s.Fence(now)
		if err != nil || f != first+uint64(i)+1 {
			t.Fatalf("fence %d at %s: %d, %v; want %d", i, now, f, err, first+uint64(i)+1)
		}
	}
	// Another store on the directory (the next process) goes on from the
	// file; a clock ahead wins.
	again, _ := Open(dir, "p")
	if f, err := again.Fence(at); err != nil || f != first+4 {
		t.Fatalf("fence after reopening: %d, %v; want %d", f, err, first+4)
	}
	if f, _ := again.Fence(at.Add(time.Hour)); f != first+3600 {
		t.Fatalf("fence with the clock an hour on: %d, want %d", f, first+3600)
	}

	done := make(chan error)
	go func() {
		var last uint64
		for range 200 {
			f, err := again.Fence(at)
			if err == nil && f <= last {
				err = fmt.Errorf("fence %d after %d", f, last)
			}
			if err != nil {
				done <- err
				return
			}
			last = f
		}
		done <- nil
	}()
	for id := int64(1); id <= 50; id++ {
		if _, err := again.Write(sample(id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("fence beside checkpoint writes: %v", err)
	}

	os.WriteFile(filepath.Join(dir, "p", fenceName), []byte("twelve\n"), 0o644)
	if _, err := again.Fence(at); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged FENCE file: %v", err)
	}
}
