package joinop

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestJoinSideMatchesAModel drives a join side and a map of each key's
// rows with their counts through the same random adds and removes (rows
// of every length, duplicates, retractions of rows never added), for a
// side that identifies rows by the whole row, by a unique key, and an
// append-only one, and wants the same rows per key, in the order they
// were added, and the key and row ids reused rather than grown.
func TestJoinSideMatchesAModel(t *testing.T) {
	for _, mode := range []string{"whole row", "unique", "append-only"} {
		t.Run(mode, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(11, 12))
			var unique []int
			if mode == "unique" {
				unique = []int{1}
			}
			s := newJoinSide([]int{0}, unique, 3, nil, newBytesIndex())
			s.appendOnly = mode == "append-only"
			// want: key -> rows in order, each with its count.
			type held struct {
				r     row.Row
				count int32
			}
			want := map[int64][]held{}
			text := func(r row.Row) string { return fmt.Sprint(r) }
			for step := range 30_000 {
				k := int64(rnd.IntN(40))
				r := row.Row{row.BigIntValue(k), row.BigIntValue(int64(rnd.IntN(6))), row.StringValue(strings.Repeat("v", rnd.IntN(3)*20))}
				if mode == "unique" {
					r[2] = row.StringValue(fmt.Sprint(step)) // a new value under the same unique key
				}
				s.key(r)
				rows := want[k]
				i := slices.IndexFunc(rows, func(h held) bool {
					switch mode {
					case "append-only":
						return false
					case "unique":
						return row.Equal(h.r[1], r[1])
					}
					return text(h.r) == text(r)
				})
				if mode != "append-only" && rnd.IntN(2) == 0 {
					s.remove(r)
					switch {
					case i < 0:
					case mode == "unique" || rows[i].count == 1:
						rows = slices.Delete(rows, i, i+1)
					default:
						rows[i].count--
					}
				} else {
					if err := s.add(r, 0); err != nil {
						t.Fatal(err)
					}
					switch {
					case mode == "append-only" || i < 0:
						rows = append(rows, held{r, 1})
					case mode == "unique":
						rows[i] = held{r, 1}
					default:
						rows[i].count++
					}
				}
				want[k] = rows
				if len(rows) == 0 {
					delete(want, k)
				}
				if step%501 == 0 || step == 29_999 {
					checkJoinSide(t, s, step, func(yield func(int64, []string) bool) {
						for _, k := range slices.Sorted(maps.Keys(want)) {
							var rows []string
							for _, h := range want[k] {
								rows = append(rows, fmt.Sprintf("%v*%d", h.r, h.count))
							}
							if !yield(k, rows) {
								return
							}
						}
					})
				}
			}
			if mode != "append-only" && (len(s.lists) > 40 || len(s.ents) > 40*18) {
				t.Errorf("%d key ids and %d row ids for at most 40 keys of 18 rows: ids are not reused", len(s.lists), len(s.ents))
			}
		})
	}
}

// checkJoinSide compares every key's rows (row*count, in list order)
// with want's, and the side's size with want's row count.
func checkJoinSide(t *testing.T, s *joinSide, step int, want func(yield func(int64, []string) bool)) {
	t.Helper()
	n := 0
	keys := 0
	for k, rows := range want {
		keys++
		kbuf := row.KeyOf(nil, row.Row{row.BigIntValue(k)}, []int{0})
		kid, ok := s.index.find(joinKey{b: kbuf})
		if !ok {
			t.Fatalf("step %d: key %d missing", step, k)
		}
		var got []string
		for rid := range s.rows(kid) {
			count, _ := s.counts(rid)
			got = append(got, fmt.Sprintf("%v*%d", s.row(rid), count))
		}
		if !slices.Equal(got, rows) {
			t.Fatalf("step %d: key %d holds %q, want %q", step, k, got, rows)
		}
		n += len(rows)
	}
	if s.size != int64(n) || s.index.len() != keys {
		t.Fatalf("step %d: %d rows under %d keys, want %d under %d", step, s.size, s.index.len(), n, keys)
	}
}

// TestJoinRunsGrow appends rows to the runs of an append-only side in
// random key order, so that keys' blocks interleave in the pages, then
// one key's rows past a page, so that its chain runs over many blocks
// and a row of its own gets a page of its own, and wants every key's
// rows, in order, with their match counts, and pages within a small
// factor of the rows' bytes (a chain's blocks double up to
// runBlockMax: its last block is at most half empty).
func TestJoinRunsGrow(t *testing.T) {
	s := newJoinSide([]int{0}, nil, 2, nil, newBytesIndex())
	s.appendOnly = true
	const keys = 300
	want := make([][]string, keys)
	rnd := rand.New(rand.NewPCG(13, 14))
	live := 0
	add := func(k, i int, text string) {
		r := row.Row{row.BigIntValue(int64(k)), row.StringValue(text + fmt.Sprint(i))}
		s.key(r)
		if err := s.add(r, i%7); err != nil {
			t.Fatal(err)
		}
		live += len(s.layout.Append(nil, r)) + 4 + 3
		want[k] = append(want[k], fmt.Sprintf("%v*%d", r, i%7))
	}
	check := func(what string) {
		for k := range keys {
			kid, ok := s.index.find(joinKey{b: row.KeyOf(nil, row.Row{row.BigIntValue(int64(k))}, []int{0})})
			if !ok {
				t.Fatalf("%s: key %d missing", what, k)
			}
			var got []string
			for ref := range s.rows(kid) {
				_, assoc := s.counts(ref)
				got = append(got, fmt.Sprintf("%v*%d", s.row(ref), assoc))
			}
			if !slices.Equal(got, want[k]) {
				t.Fatalf("%s: key %d holds %d rows, want %d (or other ones)", what, k, len(got), len(want[k]))
			}
		}
		if mem := s.runPages.bytes(); mem > int64(3*live+2*runPageBytes) {
			t.Errorf("%s: pages of %d bytes for %d of rows", what, mem, live)
		}
	}
	for i := range 30_000 {
		add(rnd.IntN(keys), i, strings.Repeat("x", rnd.IntN(200)))
	}
	check("random keys")
	for i := range 20_000 {
		add(7, 100_000+i, strings.Repeat("y", rnd.IntN(200)))
	}
	add(7, 0, strings.Repeat("z", runPageBytes))
	add(7, 1, "after the long one")
	check("one key past a page")
	solo := 0
	for _, p := range s.runPages.pages {
		if len(p) != runPageBytes {
			solo++
		}
	}
	if solo != 1 {
		t.Errorf("%d pages of their own, want the long row's alone", solo)
	}
	if kid, _ := s.index.find(joinKey{b: row.KeyOf(nil, row.Row{row.BigIntValue(7)}, []int{0})}); s.runs[kid].head == s.runs[kid].tail {
		t.Error("key 7's rows are in one block")
	}
}

// TestJoinSidesShareKeys: the two sides of a join share one key index; a
// key stays while either side holds a row for it and leaves when
// neither does, whichever side empties last, append-only or not.
func TestJoinSidesShareKeys(t *testing.T) {
	for _, leftAppendOnly := range []bool{false, true} {
		spec := joinSpec2(FullJoin)
		spec.LeftAppendOnly = leftAppendOnly
		j := NewJoin(spec)
		var c joinCollector
		feed := func(side int, ch row.Change) {
			if err := j.ProcessInput(side, &row.Batch{Changes: []row.Change{ch}}, &c); err != nil {
				t.Fatal(err)
			}
		}
		feed(1, optest.Ins(1, "x"))
		feed(0, optest.Ins(1, "a"))
		feed(1, optest.Ins(2, "y"))
		if got := j.sides[0].index.len(); got != 2 || j.sides[1].index != j.sides[0].index {
			t.Fatalf("append-only %v: %d keys in the shared index, want 2", leftAppendOnly, got)
		}
		feed(1, optest.Del(1, "x")) // the left side still holds key 1
		feed(1, optest.Del(2, "y")) // key 2 has no row left
		want := 1
		if !leftAppendOnly {
			feed(0, optest.Del(1, "a"))
			want = 0
		}
		if got := j.sides[0].index.len(); got != want {
			t.Errorf("append-only %v: %d keys left, want %d", leftAppendOnly, got, want)
		}
		feed(1, optest.Ins(1, "z"))
		if got := c.got[len(c.got)-1]; leftAppendOnly && got != "+I[1, a, 1, z]" || !leftAppendOnly && got != "+I[null, null, 1, z]" {
			t.Errorf("append-only %v: a row of key 1 after the retractions: %s", leftAppendOnly, got)
		}
	}
}

// keptRows keeps the rows emitted to it and what each printed as then.
type keptRows struct {
	rows  []row.Row
	texts []string
}

func (k *keptRows) Emit(kind row.Kind, r row.Row) {
	k.rows = append(k.rows, r)
	k.texts = append(k.texts, row.Change{Kind: kind, Row: r}.String())
}

// The rows a join emits share slices and their strings share chunks
// (rowSlab, row.Text), also where the residual rejected a pair: each
// stays what it was when emitted while the join goes on, through
// growing runs, moves of them and their compaction.
func TestJoinEmittedRowsStay(t *testing.T) {
	spec := JoinSpec{Kind: FullJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
		LeftAppendOnly: true, RightAppendOnly: true,
		LeftTypes:  []row.TypeID{row.BigInt, row.String, row.BigInt},
		RightTypes: []row.TypeID{row.BigInt, row.String, row.BigInt},
		Residual:   func(r row.Row) (bool, error) { return (r[2].Int64()+r[5].Int64())%3 != 0, nil },
	}
	j := NewJoin(spec)
	var kept keptRows
	for i := range 6000 {
		text := strings.Repeat(string(rune('a'+i%26)), i%40)
		r := row.Row{row.BigIntValue(int64(i % 97)), row.StringValue(text), row.BigIntValue(int64(i))}
		if err := j.ProcessInput(i%2, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: r}}}, &kept); err != nil {
			t.Fatal(err)
		}
	}
	if len(kept.rows) < 30000 {
		t.Fatalf("only %d rows emitted", len(kept.rows))
	}
	for i, r := range kept.rows {
		if got := (row.Change{Kind: row.Insert, Row: r}).String()[2:]; got != kept.texts[i][2:] {
			t.Fatalf("row %d emitted as %s, now %s", i, kept.texts[i], got)
		}
	}
}
