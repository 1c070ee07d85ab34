package aggop

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkWordSet compares t with model (each word's counts per member; a
// word of all-0 counts is absent) and checks the table's invariants: its
// entry count, every entry found from its home slot, no entry of no bits.
func checkWordSet(t *testing.T, ws *wordSet, k int, model map[int64][]int64, what string) {
	t.Helper()
	got := map[int64][]int64{}
	ws.each(k, func(w int64, cs []int64) {
		if _, dup := got[w]; dup {
			t.Fatalf("%s: %d twice", what, w)
		}
		got[w] = slices.Clone(cs)
	})
	want := map[int64][]int64{}
	for w, cs := range model {
		if slices.ContainsFunc(cs, func(c int64) bool { return c != 0 }) {
			if ws.stride <= 2 {
				// Over inserts only an entry is a bit per member.
				b := make([]int64, k)
				for j, c := range cs {
					if c > 0 {
						b[j] = 1
					}
				}
				cs = b
			}
			want[w] = cs
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d words, want %d", what, len(got), len(want))
	}
	for w, cs := range want {
		if !slices.Equal(got[w], cs) {
			t.Fatalf("%s: %d has %v, want %v", what, w, got[w], cs)
		}
	}
	if ws.n != len(want) {
		t.Fatalf("%s: n %d, want %d", what, ws.n, len(want))
	}
	for w := range want {
		i := ws.slot(w)
		if ws.bits(i*ws.stride) == 0 || ws.key(i*ws.stride) != w {
			t.Fatalf("%s: %d not found from its home slot", what, w)
		}
	}
}

// TestWordSetMatchesModel: random counts in and out of a word set over
// few words (long probe runs in a small table, the wrap past its last
// slot), many (growth) and the words next to 0 and the int64 bounds give
// what a map of counts per member gives, each step's changed and present
// members included; deletes shift entries back so that every word left is
// still found.
//
// Over inserts only the set starts narrow (a word an entry) and widens
// at the first word past 32 bits; where none comes (narrow), it stays
// narrow through its growth, with the words next to the int32 bounds.
func TestWordSetMatchesModel(t *testing.T) {
	edges := []int64{0, 1, -1, math.MinInt64, math.MaxInt64, math.MinInt64 + 1}
	narrowEdges := []int64{0, 1, -1, math.MinInt32, math.MaxInt32, math.MinInt32 + 1}
	for _, mode := range []string{"narrow", "insertOnly", "retracting"} {
		insertOnly := mode != "retracting"
		for _, spread := range []int{5, 40, 3000} {
			const k = 3
			rnd := rand.New(rand.NewPCG(uint64(spread), 9))
			ws := newWordSet(insertOnly, k)
			model := map[int64][]int64{}
			grew := false
			steps := 20000
			if mode == "narrow" {
				steps = 8000 // its code past the probe is the others'
			}
			for step := range steps {
				var w int64
				switch {
				case mode == "narrow" && rnd.IntN(10) == 0:
					w = narrowEdges[rnd.IntN(len(narrowEdges))]
				case mode == "narrow":
					w = int64(rnd.IntN(spread)) << (16 * rnd.IntN(2))
				case rnd.IntN(10) == 0:
					w = edges[rnd.IntN(len(edges))]
				default:
					// Multiples of 2^40: words differing in high bits only.
					w = int64(rnd.IntN(spread)) << (40 * rnd.IntN(2))
				}
				mask := uint64(1+rnd.IntN(1<<k-1)) & (1<<k - 1)
				d := int64(1)
				if !insertOnly && rnd.IntN(2) == 0 {
					d = -1
				}
				if model[w] == nil {
					model[w] = make([]int64, k)
				}
				var wantChanged, wantNow uint64
				if insertOnly {
					// A bit per member: present once seen, every
					// member that saw w reported present.
					var old uint64
					for j, c := range model[w] {
						if c > 0 {
							old |= 1 << j
						}
					}
					wantNow, wantChanged = old|mask, mask&^old
					for j := range k {
						model[w][j] = int64(wantNow >> j & 1)
					}
				} else {
					for m := mask; m != 0; m &= m - 1 {
						j := bits.TrailingZeros64(m)
						c := model[w][j] + d
						if (model[w][j] > 0) != (c > 0) {
							wantChanged |= 1 << j
						}
						if c > 0 {
							wantNow |= 1 << j
						}
						model[w][j] = c
					}
				}
				changed, now := ws.step(w, mask, d, k)
				what := fmt.Sprintf("%s spread %d step %d (%d by %d for %b)", mode, spread, step, w, d, mask)
				if changed != wantChanged || now != wantNow {
					t.Fatalf("%s: changed %b now %b, want %b %b", what, changed, now, wantChanged, wantNow)
				}
				if len(ws.e)/ws.stride > wordSetSlots {
					grew = true
				}
				if step%97 == 0 || step == steps-1 {
					checkWordSet(t, ws, k, model, what)
				}
			}
			if spread == 3000 && !grew {
				t.Fatalf("%s: the set never grew", mode)
			}
			if want := map[string]int{"narrow": 1, "insertOnly": 2, "retracting": 2 + k}[mode]; ws.stride != want {
				t.Errorf("%s spread %d: %d words an entry, want %d", mode, spread, ws.stride, want)
			}
		}
	}
}

// TestWordSetDeleteShiftsRun: deleting from the middle of a run of words
// of one home slot, and from a run that wraps past the last slot, leaves
// every other word found and the slots of the run's end empty.
func TestWordSetDeleteShiftsRun(t *testing.T) {
	ws := newWordSet(false, 1)
	slots := len(ws.e) / ws.stride
	// Words whose home is the last slot, so that their run wraps.
	var same []int64
	for w := int64(0); len(same) < 4; w++ {
		if ws.home(w) == slots-1 {
			same = append(same, w)
		}
	}
	model := map[int64][]int64{}
	for _, w := range same {
		ws.step(w, 1, 1, 1)
		model[w] = []int64{1}
	}
	if len(ws.e)/ws.stride != slots {
		t.Fatalf("grew with %d of %d slots taken", len(same), slots)
	}
	for _, w := range []int64{same[1], same[0], same[3], same[2]} {
		ws.step(w, 1, -1, 1)
		delete(model, w)
		checkWordSet(t, ws, 1, model, fmt.Sprintf("%d deleted", w))
	}
	for o := 0; o < len(ws.e); o++ {
		if ws.e[o] != 0 {
			t.Fatalf("slot words %v left after every delete", ws.e)
		}
	}
}
