package pipeline_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// sortRow is one input row of TestBatchOrderBy: NULL is nil.
type sortRow struct {
	id   int
	k    *int
	s    *string
	hide *int
}

// sortKey orders two rows by one column: ASC or DESC, NULLs first or
// last.
type sortKey struct {
	col        func(sortRow) (int, string, bool) // int value, string value, NULL
	desc       bool
	nullsFirst bool
}

func (k sortKey) compare(a, b sortRow) int {
	ai, as, an := k.col(a)
	bi, bs, bn := k.col(b)
	switch {
	case an && bn:
		return 0
	case an || bn:
		if an == k.nullsFirst {
			return -1
		}
		return 1
	}
	c := cmp.Or(cmp.Compare(ai, bi), strings.Compare(as, bs))
	if k.desc {
		c = -c
	}
	return c
}

// TestBatchOrderBy runs batch ORDER BYs without a row count over random
// rows (ties, NULLs, a key the select list leaves out), on one worker
// and on two, and wants every input row once, in the order of the keys
// (Flink's defaults: ASC puts NULLs first, DESC last). Rows of equal keys
// may come in any order, as in Flink.
func TestBatchOrderBy(t *testing.T) {
	kCol := func(r sortRow) (int, string, bool) {
		if r.k == nil {
			return 0, "", true
		}
		return *r.k, "", false
	}
	sCol := func(r sortRow) (int, string, bool) {
		if r.s == nil {
			return 0, "", true
		}
		return 0, *r.s, false
	}
	hCol := func(r sortRow) (int, string, bool) {
		if r.hide == nil {
			return 0, "", true
		}
		return *r.hide, "", false
	}
	cases := []struct {
		name, sql string
		keys      []sortKey
	}{
		{"asc", "SELECT id, k, s FROM t ORDER BY k", []sortKey{{kCol, false, true}}},
		{"desc", "SELECT id, k, s FROM t ORDER BY k DESC", []sortKey{{kCol, true, false}}},
		{"nulls", "SELECT id, k, s FROM t ORDER BY k NULLS LAST, s DESC NULLS FIRST", []sortKey{{kCol, false, false}, {sCol, true, true}}},
		{"position", "SELECT id, s, k FROM t ORDER BY 2, 3 DESC", []sortKey{{sCol, false, true}, {kCol, true, false}}},
		{"hidden", "SELECT id, k, s FROM t ORDER BY hide DESC, k", []sortKey{{hCol, true, false}, {kCol, false, true}}},
	}
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 29))
		dir := t.TempDir()
		var rows []sortRow
		var in strings.Builder
		for i := range 1 + rng.IntN(3000) {
			r := sortRow{id: i}
			field := func(v int, null bool) string {
				if null {
					return ""
				}
				return strconv.Itoa(v)
			}
			kv, hv := rng.IntN(7)-3, rng.IntN(5)
			sv := string(rune('a' + rng.IntN(5)))
			if rng.IntN(6) > 0 {
				r.k = &kv
			}
			if rng.IntN(6) > 0 {
				r.s = &sv
			}
			if rng.IntN(6) > 0 {
				r.hide = &hv
			}
			str := ""
			if r.s != nil {
				str = *r.s
			}
			fmt.Fprintf(&in, "%d,%s,%s,%s\n", i, field(kv, r.k == nil), str, field(hv, r.hide == nil))
			rows = append(rows, r)
		}
		if err := os.WriteFile(filepath.Join(dir, "t.csv"), []byte(in.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		byID := map[int]sortRow{}
		for _, r := range rows {
			byID[r.id] = r
		}
		for _, workers := range []int{1, 2} {
			var transforms, sinks strings.Builder
			for _, c := range cases {
				fmt.Fprintf(&transforms, "  - name: %s\n    sql: %s\n", c.name, c.sql)
				fmt.Fprintf(&sinks, "  - {name: %s_out, from: %s, type: file, path: %s}\n", c.name, c.name, filepath.Join(dir, fmt.Sprintf("%d-%s.csv", workers, c.name)))
			}
			text := fmt.Sprintf(`version: 1
name: sorted
execution: batch
parallelism: %d
sources:
  - {name: t, type: file, path: %s, format: {type: csv, null_literal: ""}, schema: [id INT, k INT, s STRING, hide INT]}
transforms:
%ssinks:
%s`, workers, filepath.Join(dir, "t.csv"), transforms.String(), sinks.String())
			p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, dir, text)
			if !strings.Contains(p.Explain(), "Sort(orderBy=[k ASC])") {
				t.Fatalf("no Sort in the plan:\n%s", p.Explain())
			}
			if _, err := p.Run(context.Background(), pipeline.RunOptions{}); err != nil {
				t.Fatalf("seed %d, %d workers: %v", seed, workers, err)
			}
			for _, c := range cases {
				data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d-%s.csv", workers, c.name)))
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimSpace(string(data)), "\n")
				var got []sortRow
				seen := map[int]bool{}
				for _, l := range lines {
					id, err := strconv.Atoi(strings.SplitN(l, ",", 2)[0])
					if err != nil || seen[id] {
						t.Fatalf("seed %d, %s: line %q", seed, c.name, l)
					}
					seen[id] = true
					got = append(got, byID[id])
				}
				if len(got) != len(rows) {
					t.Fatalf("seed %d, %s, %d workers: %d rows, want %d", seed, c.name, workers, len(got), len(rows))
				}
				order := func(a, b sortRow) int {
					for _, k := range c.keys {
						if x := k.compare(a, b); x != 0 {
							return x
						}
					}
					return 0
				}
				if !slices.IsSortedFunc(got, order) {
					t.Errorf("seed %d, %s, %d workers: rows out of order: %.400q", seed, c.name, workers, lines)
				}
			}
		}
	}
}
