package aggop

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// checkStrSet compares t with model (each value's counts per member; a
// value of all-0 counts is absent) and checks the table's invariants:
// its entry count, every entry found from its home slot, its bytes
// where its entry says, no more dead bytes than the buffer holds.
func checkStrSet(t *testing.T, ss *strSet, k int, model map[string][]int64, what string) {
	t.Helper()
	got := map[string][]int64{}
	ss.each(k, func(b []byte, cs []int64) {
		if _, dup := got[string(b)]; dup {
			t.Fatalf("%s: %q twice", what, b)
		}
		got[string(b)] = slices.Clone(cs)
	})
	want := map[string][]int64{}
	live := 0
	for v, cs := range model {
		if slices.ContainsFunc(cs, func(c int64) bool { return c != 0 }) {
			if ss.stride == 3 {
				b := make([]int64, k)
				for j, c := range cs {
					if c > 0 {
						b[j] = 1
					}
				}
				cs = b
			}
			want[v] = cs
			if len(v) > inlineMax {
				live += len(v)
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for v, cs := range want {
		if !slices.Equal(got[v], cs) {
			t.Fatalf("%s: %q has %v, want %v", what, v, got[v], cs)
		}
	}
	if int(ss.n) != len(want) {
		t.Fatalf("%s: n %d, want %d", what, ss.n, len(want))
	}
	if len(ss.data)-int(ss.dead) != live {
		t.Fatalf("%s: %d bytes of data, %d dead, want %d live", what, len(ss.data), ss.dead, live)
	}
	for v := range want {
		i := ss.slot(v, strHash(v))
		if o := i * int(ss.stride); ss.e[o+2] == 0 || string(ss.bytesAt(o, new([8]byte))) != v {
			t.Fatalf("%s: %q not found from its home slot", what, v)
		}
	}
}

// TestStrSetMatchesModel: random counts in and out of a string set over
// few values (long probe runs), many (growth, and with retractions the
// buffer's compaction), the empty string and values that share a
// prefix (short ones in their entries, long ones in the buffer) give what a map of counts per member gives, each step's
// changed and present members included.
func TestStrSetMatchesModel(t *testing.T) {
	// Up to 7 bytes a value sits in its entry (packStr), from 8 in the
	// buffer: the lengths at the seam, and values that differ only by a
	// trailing zero byte.
	edges := []string{"", "a", "a\x00", "\x00", "abcdefg", "abcdef\x00", "abcdefgh", "abcdefg\x00", "\xff\xff\xff\xff\xff\xff\xff", strings.Repeat("x", 300)}
	for _, insertOnly := range []bool{true, false} {
		compacted := false
		for _, spread := range []int{5, 40, 3000} {
			const k = 3
			rnd := rand.New(rand.NewPCG(uint64(spread), 11))
			var ss strSet
			ss.init(insertOnly, k)
			model := map[string][]int64{}
			grew := false
			for step := range 20000 {
				var v string
				if rnd.IntN(10) == 0 {
					v = edges[rnd.IntN(len(edges))]
				} else {
					v = fmt.Sprintf("v%0*d", 1+rnd.IntN(12), rnd.IntN(spread))
					if rnd.IntN(2) == 0 {
						v = "long/" + v // most of these in the buffer
					}
				}
				mask := uint64(1+rnd.IntN(1<<k-1)) & (1<<k - 1)
				d := int64(1)
				if !insertOnly && rnd.IntN(2) == 0 {
					d = -1
				}
				if model[v] == nil {
					model[v] = make([]int64, k)
				}
				var wantChanged, wantNow uint64
				if insertOnly {
					var old uint64
					for j, c := range model[v] {
						if c > 0 {
							old |= 1 << j
						}
					}
					wantNow, wantChanged = old|mask, mask&^old
					for j := range k {
						model[v][j] = int64(wantNow >> j & 1)
					}
				} else {
					for m := mask; m != 0; m &= m - 1 {
						j := bits.TrailingZeros64(m)
						c := model[v][j] + d
						if (model[v][j] > 0) != (c > 0) {
							wantChanged |= 1 << j
						}
						if c > 0 {
							wantNow |= 1 << j
						}
						model[v][j] = c
					}
				}
				dead := ss.dead
				// A value the set keeps must not alias the caller's.
				buf := []byte(v)
				changed, now := ss.step(string(buf), strHash(v), mask, d, k)
				copy(buf, strings.Repeat("#", len(buf)))
				what := fmt.Sprintf("insertOnly=%v spread %d step %d (%q by %d for %b)", insertOnly, spread, step, v, d, mask)
				if changed != wantChanged || now != wantNow {
					t.Fatalf("%s: changed %b now %b, want %b %b", what, changed, now, wantChanged, wantNow)
				}
				grew = grew || len(ss.e)/int(ss.stride) > wordSetSlots
				compacted = compacted || ss.dead < dead
				if step%(97+spread/10) == 0 || step == 19999 {
					checkStrSet(t, &ss, k, model, what)
				}
			}
			if spread == 3000 && !grew {
				t.Fatalf("insertOnly=%v: the set never grew", insertOnly)
			}
		}
		if !insertOnly && !compacted {
			t.Fatalf("the set's buffer was never compacted")
		}
	}
}

// TestStrSetDeleteShiftsRun: deleting from the middle of a run of values
// of one home slot, and from a run that wraps past the last slot, leaves
// every other value found; deleting the last one empties the buffer.
func TestStrSetDeleteShiftsRun(t *testing.T) {
	var ss strSet
	ss.init(false, 1)
	slots := len(ss.e) / int(ss.stride)
	var same []string
	for i := 0; len(same) < 4; i++ {
		if v := fmt.Sprint(i); ss.home(strHash(v)) == slots-1 {
			same = append(same, v)
		}
	}
	model := map[string][]int64{}
	for _, v := range same {
		ss.step(v, strHash(v), 1, 1, 1)
		model[v] = []int64{1}
	}
	if len(ss.e)/int(ss.stride) != slots {
		t.Fatalf("grew with %d of %d slots taken", len(same), slots)
	}
	for _, v := range []string{same[1], same[0], same[3], same[2]} {
		ss.step(v, strHash(v), 1, -1, 1)
		delete(model, v)
		checkStrSet(t, &ss, 1, model, fmt.Sprintf("%q deleted", v))
	}
	for o := range ss.e {
		if ss.e[o] != 0 {
			t.Fatalf("slot words %v left after every delete", ss.e)
		}
	}
	if len(ss.data) != 0 || ss.dead != 0 {
		t.Fatalf("buffer %d bytes, %d dead, after every delete", len(ss.data), ss.dead)
	}
}
