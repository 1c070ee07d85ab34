package file_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/sources/file"
)

// runFused runs sql as transform q over in.csv into out.csv, with the
// source's extra options (on_error, ...) and schema, and returns what the
// sink wrote, the dead-letter file and the run's error.
func runFused(t *testing.T, dir, in, schema, options, sql string) (out, dead, runErr string) {
	return runFusedIn(t, dir, in, "", schema, options, sql, "")
}

// runFusedIn is runFused with lines for the top of the pipeline file
// (execution: ...) and options for the sink ("mode: retract").
func runFusedIn(t *testing.T, dir, in, top, schema, options, sql, sinkOptions string) (out, dead, runErr string) {
	t.Helper()
	src, outPath, deadPath := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.csv"), filepath.Join(dir, "dead.jsonl")
	os.Remove(outPath)
	os.Remove(deadPath)
	if err := os.WriteFile(src, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	options = strings.ReplaceAll(options, "$DEAD", deadPath)
	if sinkOptions != "" {
		sinkOptions = ", " + sinkOptions
	}
	yaml := fmt.Sprintf(`version: 1
name: fused
%s
sources:
  - name: s
    type: file
    path: %s
    schema: %s
%s
transforms:
  - name: q
    sql: %q
sinks:
  - {name: out, from: q, type: file, path: %s, overwrite: true%s}
`, top, src, schema, options, sql, outPath, sinkOptions)
	p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, dir, yaml)
	if _, err := p.Run(testenv.Context(t, 60*time.Second), pipeline.RunOptions{}); err != nil {
		runErr = err.Error()
	}
	data, _ := os.ReadFile(outPath)
	deadData, _ := os.ReadFile(deadPath)
	return string(data), string(deadData), runErr
}

// TestFusedCalcSameAsSerial: a projection and filter that run inside the
// parallel decoders (with many small blocks) give the output, dead-letter
// entries and errors of a serial read whose Calc runs in its own node,
// under every on_error policy, with bad records and rows whose CAST fails.
func TestFusedCalcSameAsSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	names := []string{"7", "12", "x", `"4"`, `"two` + "\n" + `lines"`, ""}
	var in, clean strings.Builder
	for i := range 3000 {
		line := fmt.Sprintf("%d,%s,%d,2024-01-01 00:00:%02d\n", i, names[r.IntN(len(names))], r.IntN(1000), i%60)
		clean.WriteString(line)
		if i%401 == 400 {
			line = fmt.Sprintf("%d,bad,%d\n", i, r.IntN(1000)) // a bad record: 3 fields
		}
		in.WriteString(line)
	}
	schema := "[id BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3)]"
	computed := "[id BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3), twice AS amount * 2]"
	cases := []struct{ name, schema, options, sql string }{
		{"project and filter", schema, "    on_error: skip", "SELECT id, amount FROM s WHERE amount > 500"},
		{"filter only", schema, "    on_error: skip", "SELECT * FROM s WHERE amount < 300"},
		{"skip", schema, "    on_error: skip", "SELECT id, CAST(name AS INT) AS n FROM s WHERE amount > 100"},
		{"dead-letter", schema, "    on_error: dead-letter\n    dead_letter: $DEAD", "SELECT id, CAST(name AS INT) AS n FROM s WHERE amount > 100"},
		// Fails at the first CAST: the input has no bad record, whose
		// error would race with the transform's, serial or not.
		{"fail", schema, "", "SELECT id, CAST(name AS INT) AS n FROM s WHERE amount > 100 AND id > 1000"},
		{"bad record fails", schema, "", "SELECT id, amount FROM s"},
		{"computed column", computed, "    on_error: skip", "SELECT id, twice FROM s WHERE twice > 1000"},
		{"watermark", schema + "\n    watermark: ts - INTERVAL '1' SECOND", "    on_error: skip", "SELECT id, ts FROM s WHERE amount < 100"},
		{"computed column and watermark", computed + "\n    watermark: ts - INTERVAL '1' SECOND", "    on_error: skip", "SELECT id, twice, ts FROM s WHERE amount < 500"},
		{"two Calcs", computed, "    on_error: dead-letter\n    dead_letter: $DEAD",
			"SELECT id, CAST(name AS INT) * m AS p FROM (SELECT id, name, twice + 1 AS m FROM s WHERE amount > 100) WHERE m > 300"},
		{"computed column fails", "[id BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3), n AS CAST(name AS INT)]",
			"    on_error: dead-letter\n    dead_letter: $DEAD", "SELECT id, n FROM s WHERE amount > 100"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			input := in.String()
			// A computed column's errors are the source's, as its decoder's
			// are, and how they interleave is a matter of batches: the
			// one with computed columns that fail reads records that
			// decode.
			if tc.name == "fail" || tc.name == "computed column fails" {
				input = clean.String()
			}
			file.SetReader(t, -1, 0, 0)
			out, dead, err := runFused(t, dir, input, tc.schema, tc.options, tc.sql)
			if out == "" && err == "" {
				t.Fatal("the serial run wrote nothing")
			}
			file.SetReader(t, 2, 97, 512)
			fOut, fDead, fErr := runFused(t, dir, input, tc.schema, tc.options, tc.sql)
			if fErr != err {
				t.Fatalf("fused run's error:\n%s\nserial:\n%s", fErr, err)
			}
			// The source's entries come in order, and the transform's; how
			// the two interleave is a matter of timing, serial or not.
			if byWriter(fDead) != byWriter(dead) {
				t.Fatalf("fused dead letters:\n%.2000s\nserial:\n%.2000s", fDead, dead)
			}
			// A failed run's sink wrote what arrived before the failure
			// cancelled the run: a matter of timing.
			if err == "" && fOut != out {
				t.Fatalf("fused output (%d lines) differs from serial (%d lines)", strings.Count(fOut, "\n"), strings.Count(out, "\n"))
			}
		})
	}
}

// byWriter puts a dead-letter file's entries by the source in front of
// those by a transform, each in their order.
func byWriter(dead string) string {
	var src, tr []string
	for _, line := range strings.SplitAfter(dead, "\n") {
		if strings.Contains(line, `"transform":`) {
			tr = append(tr, line)
		} else {
			src = append(src, line)
		}
	}
	return strings.Join(src, "") + strings.Join(tr, "")
}

// TestFusedIntoAggregate: an aggregate reading a Calc that only picks
// columns gets rows the decoders made of those columns alone (no
// projection step), and gives their memory back once folded; one reading
// a computed projection gives back the projection's slabs. The results,
// dead letters and errors are those of a serial read, in batch and in
// streaming mini-batch mode, with records the decoder refuses (whose
// batches take the serial way) and a column read twice.
func TestFusedIntoAggregate(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	names := []string{"a", "b", "c", `"d,e"`, "", "f"}
	var in strings.Builder
	for i := range 5000 {
		if i%397 == 396 {
			fmt.Fprintf(&in, "%d,bad,%d\n", i, r.IntN(1000)) // a bad record: 3 fields
			continue
		}
		fmt.Fprintf(&in, "%d,%s,%d,2024-01-01 00:00:%02d\n", i, names[r.IntN(len(names))], r.IntN(1000), i%60)
	}
	schema := "[id BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3)]"
	skip, dead := "    on_error: skip", "    on_error: dead-letter\n    dead_letter: $DEAD"
	batch, stream := "execution: batch", "execution: streaming\nmini_batch_aggregate: true"
	picked := "SELECT name, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM s GROUP BY name"
	pickedWhere := "SELECT name, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM s WHERE amount < 700 GROUP BY name"
	computed := "SELECT MOD(amount, 7) AS k, COUNT(*) AS n, SUM(id) AS s, MIN(name) AS f FROM s GROUP BY MOD(amount, 7)"
	// recycles: whether the decoded batches are given back ("" when it
	// depends on how far a failing run got).
	cases := []struct{ name, top, options, sql, sink, recycles string }{
		{"picked batch", batch, skip, picked, "", "yes"},
		{"picked batch dead-letter", batch, dead, picked, "", "yes"},
		{"picked stream", stream, skip, picked, "mode: retract", "yes"},
		{"computed batch", batch, skip, computed, "", "no"},
		{"computed stream", stream, dead, computed, "mode: retract", "no"},
		// The file sink encodes its rows (connector.RowCopier).
		{"picked into a sink", batch, skip, "SELECT amount, id, amount AS again FROM s", "", "yes"},
		{"picked and a bad record fails", batch, "", picked, "", ""},
		// A filter that reads picked columns only: the source still
		// decodes those, and the filter reads them where they are.
		{"picked with a filter batch", batch, skip, pickedWhere, "", "yes"},
		{"picked with a filter stream", stream, dead, pickedWhere, "mode: retract", "yes"},
		{"picked with a filter into a sink", batch, skip, "SELECT amount, id, amount AS again FROM s WHERE amount < 500 AND id <> 7", "", "yes"},
		// 100 / (amount - 500) fails where amount is 500: those
		// batches take the serial way, the rows go to on_error.
		{"picked with a failing filter", batch, dead, "SELECT amount, id, amount AS again FROM s WHERE 100 / (amount - 500) > 0", "", ""},
		// A filter that reads columns the projection does not: they
		// are decoded after the projected ones, and cut off.
		{"picked with a filter on a column not projected", batch, dead, "SELECT amount, id, name FROM s WHERE ts > TIMESTAMP '2024-01-01 00:00:20' AND 100 / (amount - 500) > -1", "", ""},
		{"picked with a filter on columns not projected into an aggregate", stream, skip, "SELECT name, SUM(amount) AS s FROM s WHERE id % 3 = 0 AND ts > TIMESTAMP '2024-01-01 00:00:20' GROUP BY name", "mode: retract", "yes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file.SetReader(t, -1, 0, 0)
			out, dead, err := runFusedIn(t, dir, in.String(), tc.top, schema, tc.options, tc.sql, tc.sink)
			if out == "" && err == "" {
				t.Fatal("the serial run wrote nothing")
			}
			file.SetReader(t, 2, 97, 512)
			recycled := file.Recycled()
			fOut, fDead, fErr := runFusedIn(t, dir, in.String(), tc.top, schema, tc.options, tc.sql, tc.sink)
			if got := file.Recycled() > recycled; tc.recycles != "" && got != (tc.recycles == "yes") {
				t.Errorf("batches given back: %v, want %s", got, tc.recycles)
			}
			if fErr != err {
				t.Fatalf("fused run's error:\n%s\nserial:\n%s", fErr, err)
			}
			// The source's bad records and the Calc's failing rows go to
			// on_error from two goroutines when the Calc runs in its own
			// node: compared per writer, in order.
			if byWriter(fDead) != byWriter(dead) {
				t.Fatalf("fused dead letters:\n%.2000s\nserial:\n%.2000s", fDead, dead)
			}
			if err != "" {
				return
			}
			// A streaming run's mini-batches end where its batches do:
			// the changes differ, the table they make does not.
			if got, want := folded(t, fOut, tc.sink != ""), folded(t, out, tc.sink != ""); got != want {
				t.Fatalf("fused result:\n%.3000s\nserial:\n%.3000s", got, want)
			}
			if !strings.HasPrefix(tc.name, "picked") {
				return
			}
			// The same query through a computing Calc (amount + 0 is
			// no column as it is), whose source decodes every column
			// and whose rows the Calc projects: the same table.
			computing := strings.ReplaceAll(tc.sql, "(amount)", "(amount + 0)")
			computing = strings.Replace(computing, "amount, id", "amount + 0 AS amount, id", 1)
			if computing == tc.sql {
				t.Fatal("no computing form of the query")
			}
			cOut, cDead, cErr := runFusedIn(t, dir, in.String(), tc.top, schema, tc.options, computing, tc.sink)
			if cErr != err || byWriter(cDead) != byWriter(dead) {
				t.Fatalf("computing run: error %q, dead letters %d bytes; picked: %q, %d bytes\n%.600s\n%.600s", cErr, len(cDead), err, len(dead), byWriter(cDead)[len(byWriter(cDead))-500:], byWriter(dead)[len(byWriter(dead))-500:])
			}
			if got, want := folded(t, fOut, tc.sink != ""), folded(t, cOut, tc.sink != ""); got != want {
				t.Fatalf("picked result:\n%.3000s\ncomputing:\n%.3000s", got, want)
			}
		})
	}
}

// folded is the table a sink's output makes: its lines sorted, or, from
// a retract sink, the rows its changes leave.
func folded(t *testing.T, out string, retract bool) string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if retract {
		live := map[string]int{}
		for _, l := range lines {
			op, rest, ok := strings.Cut(l, ",")
			switch {
			case !ok:
				t.Fatalf("a change without its op: %q", l)
			case op == "+I" || op == "+U":
				live[rest]++
			case op == "-U" || op == "-D":
				if live[rest]--; live[rest] == 0 {
					delete(live, rest)
				}
			default:
				t.Fatalf("op %q in %q", op, l)
			}
		}
		lines = lines[:0]
		for l, n := range live {
			for range n {
				lines = append(lines, l)
			}
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestFusedSharedNotRecycled: a fused Calc read by an aggregate and by a
// sink hands both the same batches, so neither gives them back: the
// sink's rows and the aggregate's results are a serial read's, for a
// Calc that picks columns and for one that computes them.
func TestFusedSharedNotRecycled(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var in strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&in, "%d,%c,%d\n", i, 'a'+rune(r.IntN(20)), r.IntN(1000))
	}
	for name, sel := range map[string]string{
		"picked":   "SELECT name, amount FROM s",
		"computed": "SELECT name, amount * 2 AS amount FROM s",
		// Each branch's Calc has one reader, the union, which hands
		// its batches on to both readers as they are.
		"union": "SELECT name, amount FROM s UNION ALL SELECT name, amount FROM s2",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "in.csv")
			if err := os.WriteFile(src, []byte(in.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			yaml := fmt.Sprintf(`version: 1
name: shared
execution: batch
sources:
  - {name: s, type: file, path: %[1]s, schema: [id BIGINT, name STRING, amount BIGINT]}
  - {name: s2, type: file, path: %[1]s, schema: [id BIGINT, name STRING, amount BIGINT]}
transforms:
  - {name: p, sql: %[2]q}
  - {name: q, sql: "SELECT name, COUNT(*) AS n, SUM(amount) AS t FROM p GROUP BY name"}
sinks:
  - {name: agg, from: q, type: file, path: %[3]s, overwrite: true}
  - {name: rows, from: p, type: file, path: %[4]s, overwrite: true}
`, src, sel, filepath.Join(dir, "agg.csv"), filepath.Join(dir, "rows.csv"))
			run := func() (agg, rows string) {
				pipefile.Run(t, testenv.Context(t, 60*time.Second), pipeline.Env{Registry: builtin.Registry()}, dir, yaml)
				a, _ := os.ReadFile(filepath.Join(dir, "agg.csv"))
				b, _ := os.ReadFile(filepath.Join(dir, "rows.csv"))
				return folded(t, string(a), false), string(b)
			}
			file.SetReader(t, -1, 0, 0)
			agg, rows := run()
			if n := strings.Count(rows, "\n"); n != 6000 && n != 12000 || strings.Count(agg, "\n") < 10 {
				t.Fatalf("the serial run wrote %d rows and %d groups", strings.Count(rows, "\n"), strings.Count(agg, "\n")+1)
			}
			file.SetReader(t, 2, 97, 512)
			for range 3 {
				fAgg, fRows := run()
				if folded(t, fRows, false) != folded(t, rows, false) {
					t.Fatal("the fused run's rows differ from the serial run's")
				}
				if fAgg != agg {
					t.Fatalf("fused groups:\n%.1000s\nserial:\n%.1000s", fAgg, agg)
				}
			}
		})
	}
}

// TestFusedJSONIntoAggregate: a json source read by a projection that
// only picks columns decodes just those (connector.ColumnDecoder) and
// gives its batches back: the results and dead letters are those of a
// serial read and of the same query through a computing Calc, with
// members in any order, unknown ones, malformed records, and bad values
// in a picked column (dead letters) and in one not read (no error).
func TestFusedJSONIntoAggregate(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	names := []string{`"a"`, `"b"`, `"c\"d"`, `null`, `"e"`}
	var in strings.Builder
	bad := 0
	for i := range 5000 {
		members := []string{
			fmt.Sprintf(`"id":%d`, i),
			fmt.Sprintf(`"name":%s`, names[r.IntN(len(names))]),
			fmt.Sprintf(`"amount":%d`, r.IntN(1000)),
			fmt.Sprintf(`"ts":"2024-01-01 00:00:%02d"`, i%60),
			`"extra":{"x":[1,2]}`,
		}
		switch i % 401 {
		case 400:
			members[2] = `"amount":"lots"` // a bad value in a picked column
			bad++
		case 200:
			members[3] = `"ts":"not a time"` // in a column not read
		case 100:
			members[1] = `"name":"open` // malformed
			bad++
		}
		r.Shuffle(len(members), func(a, b int) { members[a], members[b] = members[b], members[a] })
		fmt.Fprintf(&in, "{%s}\n", strings.Join(members, ","))
	}
	schema := "[id BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3)]"
	options := "    format: json\n    on_error: dead-letter\n    dead_letter: $DEAD"
	for _, tc := range []struct{ name, sql string }{
		{"picked", "SELECT name, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM s GROUP BY name"},
		{"picked with a filter", "SELECT name, COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m FROM s WHERE amount < 600 GROUP BY name"},
	} {
		t.Run(tc.name, func(t *testing.T) { testFusedJSON(t, in.String(), bad, schema, options, tc.sql) })
	}
}

// testFusedJSON runs sql over the json records in serially, fused and
// through a computing Calc, and compares.
func testFusedJSON(t *testing.T, in string, bad int, schema, options, sql string) {
	dir := t.TempDir()
	file.SetReader(t, -1, 0, 0)
	out, dead, err := runFusedIn(t, dir, in, "execution: batch", schema, options, sql, "")
	if err != "" || out == "" || strings.Count(dead, "\n") != bad {
		t.Fatalf("serial run: error %q, %d bytes out, dead letters:\n%s", err, len(out), dead)
	}
	file.SetReader(t, 2, 97, 512)
	recycled := file.Recycled()
	fOut, fDead, fErr := runFusedIn(t, dir, in, "execution: batch", schema, options, sql, "")
	if file.Recycled() == recycled {
		t.Error("no batch given back: the columns were not picked")
	}
	if fErr != "" || fDead != dead || folded(t, fOut, false) != folded(t, out, false) {
		t.Fatalf("fused run: error %q\n%.2000s\nserial:\n%.2000s\ndead letters:\n%.1000s\nserial:\n%.1000s", fErr, fOut, out, fDead, dead)
	}
	computing := strings.ReplaceAll(sql, "(amount)", "(amount + 0)")
	cOut, cDead, cErr := runFusedIn(t, dir, in, "execution: batch", schema, options, computing, "")
	if cErr != "" || cDead != dead || folded(t, cOut, false) != folded(t, fOut, false) {
		t.Fatalf("computing run: error %q\n%.2000s\npicked:\n%.2000s", cErr, cOut, fOut)
	}
}
