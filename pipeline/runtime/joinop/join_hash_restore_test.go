package joinop

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// TestDirectHashJoinRestores runs random inputs through a batch hash
// join whose right side is insert-only (Join.direct: its right rows in
// the probe table alone) and cuts the run once, at a random batch of
// either input: the join is snapshotted (whole, streamed, or in key
// groups) and restored into a new join, which runs on. The output must
// be the uninterrupted run's, and that the held batch join's (which
// stores both sides in joinSide); the snapshot must be the held join's
// bytes for the same right rows, so that either restores the other's.
func TestDirectHashJoinRestores(t *testing.T) {
	for _, ks := range hashKeyShapes {
		for _, kind := range []JoinKind{InnerJoin, LeftJoin, SemiJoin, AntiJoin} {
			for seed := range uint64(6) {
				name := fmt.Sprintf("%s/%s/%d", ks.name, kind, seed)
				t.Run(name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(seed, 3501))
					right, left := hashStream(rng, ks, true, seed%3 == 2, seed == 5)
					w := len(ks.types)
					spec := JoinSpec{Kind: kind, LeftKeys: ks.keys, RightKeys: ks.keys, LeftWidth: w, RightWidth: w,
						LeftTypes: ks.types, RightTypes: ks.types, Batch: true, LeftAppendOnly: true, RightAppendOnly: true}
					if seed%2 == 1 {
						spec.Residual = func(r row.Row) (bool, error) { return r[w-1].Int64() <= r[2*w-1].Int64(), nil }
					}
					held := NewJoin(spec)
					spec.RightFirst = true
					whole, cut := NewJoin(spec), NewJoin(spec)
					if !whole.direct || whole.hash == nil {
						t.Fatal("an insert-only right side of a batch hash join is not built directly")
					}
					batches := append(slices.Clone(right), left...)
					at := rng.IntN(len(batches) + 1)
					var want, gotWhole, gotCut joinCollector
					for i, b := range batches {
						input := 1
						if i >= len(right) {
							input = 0
						}
						if i == at {
							cut = restoreCut(t, cut, spec, seed%3, held, i <= len(right))
						}
						if err := held.ProcessInput(input, b, &want); err != nil {
							t.Fatal(err)
						}
						if err := whole.ProcessInput(input, b, &gotWhole); err != nil {
							t.Fatal(err)
						}
						if err := cut.ProcessInput(input, b, &gotCut); err != nil {
							t.Fatal(err)
						}
					}
					if at == len(batches) {
						cut = restoreCut(t, cut, spec, seed%3, held, len(left) == 0)
					}
					if whole.sides[1].size != 0 {
						t.Errorf("the right side holds %d rows beside the probe table", whole.sides[1].size)
					}
					if got, want := whole.StateEntries(), held.sides[1].size; got != want {
						t.Errorf("state entries %d, want the right rows %d", got, want)
					}
					for _, j := range []*Join{held, whole, cut} {
						if err := j.Finish(map[*Join]*joinCollector{held: &want, whole: &gotWhole, cut: &gotCut}[j]); err != nil {
							t.Fatal(err)
						}
					}
					if len(want.got) == 0 {
						t.Fatal("no output: the case checks nothing")
					}
					if !slices.Equal(gotWhole.got, want.got) {
						t.Fatalf("the direct hash join differs from the held batch join:\n got %q\nwant %q", gotWhole.got, want.got)
					}
					if !slices.Equal(gotCut.got, want.got) {
						t.Fatalf("restored at batch %d, the join differs:\n got %q\nwant %q", at, gotCut.got, want.got)
					}
				})
			}
		}
	}
}

// restoreCut snapshots j one of three ways (how: whole, streamed, in
// key groups) and restores it into a new join of spec. While the right
// input is still coming (building), the snapshot must be byte-equal to
// that of held, the batch join that stores its right rows in joinSide,
// which saw the same right rows and no left one.
func restoreCut(t *testing.T, j *Join, spec JoinSpec, how uint64, held *Join, building bool) *Join {
	t.Helper()
	next := NewJoin(spec)
	switch how {
	case 0:
		snap, err := j.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if building {
			heldSnap, err := held.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(snap, sortedSections(t, heldSnap, snap)) {
				t.Fatalf("snapshot %x, the held join's %x", snap, heldSnap)
			}
			// The held join's snapshot restores into a direct join.
			snap = heldSnap
		}
		if err := next.Restore(snap); err != nil {
			t.Fatal(err)
		}
	case 1:
		var b bytes.Buffer
		if err := j.SnapshotTo(&b); err != nil {
			t.Fatal(err)
		}
		if err := next.RestoreFrom(bytes.NewReader(b.Bytes()), int64(b.Len())); err != nil {
			t.Fatal(err)
		}
	default:
		var parts [][]byte
		err := j.SnapshotGroups(func(_ int, b []byte) error {
			parts = append(parts, slices.Clone(b))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) > operator.KeyGroups {
			t.Fatalf("%d parts", len(parts))
		}
		if err := next.RestoreGroups(parts); err != nil {
			t.Fatal(err)
		}
	}
	if next.hash == nil || next.sides[1].size != 0 {
		t.Fatal("the restored join keeps its right rows outside the probe table")
	}
	return next
}

// sortedSections returns held's snapshot when it holds the same entries
// as snap, its right side's in snap's order (the probe table writes its
// keys in its own order, each key's rows in theirs); else snap's
// mismatch shows as held's bytes.
func sortedSections(t *testing.T, held, snap []byte) []byte {
	t.Helper()
	entries := func(b []byte) (head []byte, rows [][]byte, tail []byte) {
		d := row.NewDecoder(b)
		d.Byte()
		d.Byte()
		n := d.Count(1)
		for range n { // the left side: empty before the first left row
			d.Row()
			d.Uvarint()
			d.Uvarint()
		}
		n = d.Count(1)
		head = b[:len(b)-d.Len()]
		for range n {
			start := len(b) - d.Len()
			d.Row()
			d.Uvarint()
			d.Uvarint()
			rows = append(rows, b[start:len(b)-d.Len()])
		}
		if err := d.Err(); err != nil {
			t.Fatal(err)
		}
		return head, rows, b[len(b)-d.Len():]
	}
	hh, hr, ht := entries(held)
	sh, sr, st := entries(snap)
	if !bytes.Equal(hh, sh) || !bytes.Equal(ht, st) || len(hr) != len(sr) {
		return held
	}
	// Each of snap's rows is taken from held's in order of their first
	// equal one: equal rows of one key keep their order.
	used := make([]bool, len(hr))
	out := slices.Clone(sh)
	for _, r := range sr {
		i := slices.IndexFunc(hr, func(h []byte) bool { return bytes.Equal(h, r) })
		for i >= 0 && used[i] {
			next := slices.IndexFunc(hr[i+1:], func(h []byte) bool { return bytes.Equal(h, r) })
			if next < 0 {
				i = -1
				break
			}
			i += 1 + next
		}
		if i < 0 {
			return held
		}
		used[i] = true
		out = append(out, r...)
	}
	return append(out, st...)
}

// TestHashTableKeysOfOneHash runs the hash join's random cases again with
// every key's bytes hashed alike: each STRING and composite key is then
// told from the others by its bytes alone, in every probe, build and
// restore.
func TestHashTableKeysOfOneHash(t *testing.T) {
	defer func(h func(maphash.Seed, []byte) uint64) { hashKey = h }(hashKey)
	hashKey = func(maphash.Seed, []byte) uint64 { return 42 }
	TestHashTableMatchesHeldBatchJoin(t)
	TestDirectHashJoinRestores(t)
}
