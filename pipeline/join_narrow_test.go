package pipeline_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// narrowCases are batch joins whose inputs have columns they never
// read, of the six kinds (INNER, LEFT, RIGHT, FULL, semi and anti), on
// integer, string and composite keys, with residuals that read columns
// other than the keys, and read above by a Calc that picks columns, one
// that computes, a filter and an aggregate.
var narrowCases = []struct{ name, sql string }{
	{"inner_pick", "SELECT l.id, r.w FROM l JOIN r ON l.k = r.k"},
	{"inner_res", "SELECT l.id, r.id AS rid FROM l JOIN r ON l.k = r.k AND l.v + r.w > 9 AND l.t <> r.s"},
	{"inner_compute", "SELECT l.id * 10 + r.w AS x, UPPER(r.s) AS u FROM l JOIN r ON l.s = r.s"},
	{"inner_where", "SELECT l.id, r.id AS rid FROM l JOIN r ON l.k = r.k AND l.s = r.s WHERE l.d > 0.5 OR r.w < 2"},
	{"inner_pushed", "SELECT l.id, r.w FROM l JOIN r ON l.k = r.k WHERE l.d > 0.3 AND r.c <> '1' AND l.v > r.w"},
	{"inner_agg", "SELECT r.s, COUNT(*) AS n, SUM(l.v) AS sv FROM l JOIN r ON l.k = r.k GROUP BY r.s"},
	{"left_res", "SELECT l.id, r.w, r.s FROM l LEFT JOIN r ON l.k = r.k AND l.t < r.s"},
	{"left_cast", "SELECT l.id, r.id AS rid FROM l LEFT JOIN r ON CAST(l.k AS STRING) = r.c AND l.v <> r.w"},
	{"right_res", "SELECT l.id, l.t, r.id AS rid FROM l RIGHT JOIN r ON l.s = r.s AND l.d * 10 > r.w"},
	{"full_res", "SELECT l.id, r.id AS rid, l.v FROM l FULL JOIN r ON l.k = r.k AND l.s = r.s AND l.v > r.w"},
	{"full_star", "SELECT * FROM l FULL JOIN r ON l.k = r.k"},
	{"semi", "SELECT id FROM l WHERE EXISTS (SELECT 1 FROM r WHERE r.k = l.k AND r.w > l.v)"},
	{"semi_in", "SELECT id, t FROM l WHERE s IN (SELECT s FROM r WHERE w > 3)"},
	{"anti", "SELECT id, s FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.s = l.s AND r.c <> l.t)"},
	{"anti_not_in", "SELECT id FROM l WHERE k NOT IN (SELECT k FROM r WHERE w > 6)"},
	{"self", "SELECT a.id, b.v FROM l a JOIN l b ON a.k = b.k AND a.s = b.s AND a.id < b.id"},
}

// narrowInputs writes random l and r files of random sizes: keys 0..n
// (duplicates on both sides) and NULL, strings and NULL, and columns
// no join above reads.
func narrowInputs(t *testing.T, dir string, rng *rand.Rand) {
	t.Helper()
	keys := 1 + rng.IntN(12)
	maybe := func(s string) string {
		if rng.IntN(8) == 0 {
			return ""
		}
		return s
	}
	for name, rows := range map[string]int{"l.csv": 1 + rng.IntN(4000), "r.csv": 1 + rng.IntN(300)} {
		var b strings.Builder
		for i := range rows {
			k := rng.IntN(keys)
			s := string(rune('a' + rng.IntN(4)))
			if name == "l.csv" {
				// id, k, s, v, t, d, pad
				fmt.Fprintf(&b, "%d,%s,%s,%d,%s,%s,%s\n", i, maybe(fmt.Sprint(k)), maybe(s), rng.IntN(10),
					maybe(string(rune('a'+rng.IntN(4)))), maybe(fmt.Sprintf("%.2f", rng.Float64())), strings.Repeat("x", rng.IntN(20)))
			} else {
				// id, k, s, w, c, pad
				fmt.Fprintf(&b, "%d,%s,%s,%d,%s,%s\n", i, maybe(fmt.Sprint(k)), maybe(s), rng.IntN(10),
					maybe(fmt.Sprint(rng.IntN(keys))), strings.Repeat("y", rng.IntN(20)))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNarrowedJoinsMatchWholeRows runs batch joins over random inputs
// planned as they are, their inputs narrowed to the columns they read
// (plan's narrowJoins), and planned over their inputs' whole rows
// (pipeline.Env.WholeJoinRows), and wants the same rows of each; and
// that the narrowing happened (explain shows the Calcs under the joins).
func TestNarrowedJoinsMatchWholeRows(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 23))
		dir := t.TempDir()
		narrowInputs(t, dir, rng)
		var transforms, sinks strings.Builder
		for _, c := range narrowCases {
			fmt.Fprintf(&transforms, "  - name: %s\n    sql: %s\n", c.name, c.sql)
			fmt.Fprintf(&sinks, "  - {name: %s_out, from: %s, type: file, path: %s}\n", c.name, c.name, filepath.Join(dir, "MODE-"+c.name+".csv"))
		}
		text := fmt.Sprintf(`version: 1
name: narrow
execution: batch
sources:
  - {name: l, type: file, path: %s, format: {type: csv, null_literal: ""}, schema: [id BIGINT, k INT, s STRING, v INT, t STRING, d DOUBLE, pad STRING]}
  - {name: r, type: file, path: %s, format: {type: csv, null_literal: ""}, schema: [id BIGINT, k INT, s STRING, w INT, c STRING, pad STRING]}
transforms:
%ssinks:
%s`, filepath.Join(dir, "l.csv"), filepath.Join(dir, "r.csv"), transforms.String(), sinks.String())
		out := map[string]map[string][]string{}
		// The narrowed plan also on two workers a join (its keys picked
		// from the narrowed rows).
		for _, mode := range []string{"narrow", "narrow2", "whole"} {
			whole := mode == "whole"
			env := pipeline.Env{Registry: builtin.Registry(), WholeJoinRows: whole}
			yaml := strings.ReplaceAll(text, "MODE-", mode+"-")
			if mode == "narrow2" {
				yaml = strings.Replace(yaml, "execution: batch\n", "execution: batch\nparallelism: 2\n", 1)
			}
			p := pipefile.Load(t, env, dir, yaml)
			explained := p.Explain()
			if got := strings.Contains(explained, "Calc(select=[id, k])"); got == whole {
				t.Fatalf("seed %d, whole rows %v: the plan narrows the joins' inputs: %v\n%s", seed, whole, got, explained)
			}
			if mode == "narrow2" && !strings.Contains(explained, "workers=2") {
				t.Fatalf("seed %d: the joins do not run on two workers:\n%s", seed, explained)
			}
			if _, err := p.Run(context.Background(), pipeline.RunOptions{}); err != nil {
				t.Fatalf("seed %d, %s: %v", seed, mode, err)
			}
			out[mode] = map[string][]string{}
			for _, c := range narrowCases {
				out[mode][c.name] = readLines(t, filepath.Join(dir, mode+"-"+c.name+".csv"))
			}
		}
		for _, c := range narrowCases {
			w := out["whole"][c.name]
			for _, mode := range []string{"narrow", "narrow2"} {
				if n := out[mode][c.name]; !slices.Equal(n, w) {
					t.Errorf("seed %d, %s: %s %d rows, whole %d rows\n%s: %.300q\nwhole: %.300q", seed, c.name, mode, len(n), len(w), mode, n, w)
				}
			}
		}
	}
}

// A batch run's checkpoint written by the plan over whole rows (as
// before the narrowing) is taken by the narrowed plan: the join's
// fingerprint is the same and its saved rows are cut on restore; the
// run resumes instead of being refused.
func TestNarrowedJoinTakesWholeRowsCheckpoint(t *testing.T) {
	dir := t.TempDir()
	narrowInputs(t, dir, rand.New(rand.NewPCG(7, 23)))
	text := fmt.Sprintf(`version: 1
name: narrowstate
execution: batch
sources:
  - {name: l, type: file, path: %s, format: {type: csv, null_literal: ""}, schema: [id BIGINT, k INT, s STRING, v INT, t STRING, d DOUBLE, pad STRING]}
  - {name: r, type: file, path: %s, format: {type: csv, null_literal: ""}, schema: [id BIGINT, k INT, s STRING, w INT, c STRING, pad STRING]}
transforms:
  - name: q
    sql: SELECT l.id, r.w FROM l LEFT JOIN r ON l.k = r.k AND l.v > r.w
sinks:
  - {name: o, from: q, type: file, path: %s}
`, filepath.Join(dir, "l.csv"), filepath.Join(dir, "r.csv"), filepath.Join(dir, "out.csv"))
	state := filepath.Join(dir, "state")
	for _, whole := range []bool{true, false} {
		env := pipeline.Env{Registry: builtin.Registry(), WholeJoinRows: whole}
		p := pipefile.Load(t, env, dir, text)
		if _, err := p.Run(context.Background(), pipeline.RunOptions{StateDir: state}); err != nil {
			t.Fatalf("whole rows %v: %v", whole, err)
		}
	}
}
