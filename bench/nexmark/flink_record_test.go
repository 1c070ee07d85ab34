package nexmark_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/conformance"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
)

var nexmarkCommit = flag.String("commit", "", "with -record: the nexmark project's commit the queries come from, for the recordings' header")

// flinkScriptSeconds bounds one query's job in the Flink runner.
const flinkScriptSeconds = 3600

// TestRecordFlink records Flink 2.3's final table of each query (see
// flink_test.go). It runs only with -record: it is the recorder, not a
// check. Flink's whole tables and scripts stay in bench/.cache/nexmark/
// for a reader to diff against the ones TestMatchesFlink keeps there.
func TestRecordFlink(t *testing.T) {
	if !*record {
		t.Skip("the recorder: scripts/nexmark/flink.sh (make nexmark-flink)")
	}
	if *queryDir == "" {
		t.Fatal("-record needs -queries: the nexmark project's queries directory")
	}
	runner := testenv.Flink(t)
	work, err := filepath.Abs(filepath.Join("..", ".cache", "nexmark", "flink-"+strconv.Itoa(*eventsN)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	events := filepath.Join(work, "events.json")
	dumpEvents(t, events, *eventsN)
	if err := os.MkdirAll(filepath.Join("flink", "sql"), 0o755); err != nil {
		t.Fatal(err)
	}
	var names, scripts []string
	for i := range 24 {
		name := fmt.Sprintf("q%d", i)
		if *only != "" && !strings.Contains(","+*only+",", ","+name+",") {
			continue
		}
		template, err := flinkTemplate(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("flink", "sql", name+".sql"), []byte(template), 0o644); err != nil {
			t.Fatal(err)
		}
		text, err := flinkScript(name, template, events, *udfJar, true)
		if err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(work, name+".sql")
		if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		names, scripts = append(names, name), append(scripts, script)
	}
	cmd := exec.Command(runner, append([]string{"--timeout", strconv.Itoa(flinkScriptSeconds)}, scripts...)...)
	cmd.Env = append(os.Environ(), "ETLD_FLINKRUN_HEAP="+envOr("ETLD_FLINKRUN_HEAP", "4g"), "ETLD_FLINKRUN_LOG="+filepath.Join(work, "flink.log"))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("flink runner: %v", err)
	}
	header := fmt.Sprintf("# Flink 2.3's final table of the nexmark project's %%s.sql (nexmark/nexmark at %s) over the\n"+
		"# events of etld's nexmark source as %%s.yaml declares it (their first %d), read from a json file.\n"+
		"# Recorded by scripts/nexmark/flink.sh (make nexmark-flink); never edit by hand.\n", *nexmarkCommit, *eventsN)
	for i, name := range names {
		rec := recording{events: *eventsN}
		if e, err := os.ReadFile(scripts[i] + ".err"); err == nil {
			rec.err = conformance.CondenseError(string(e), work)
		} else {
			out, err := os.ReadFile(scripts[i] + ".out")
			if err != nil {
				t.Fatal(err)
			}
			folded := foldFlink(name, conformance.ChangeLines(string(out)))
			if len(folded.Problems) > 0 {
				t.Fatalf("%s: Flink's changelog: %s", name, folded.Problems[0])
			}
			rec.rows, rec.sha256, rec.sample = len(folded.Final), digest(folded.Final), sampleOf(folded.Final)
			rec.kinds = strings.Join(folded.Kinds, " ")
			if err := os.WriteFile(filepath.Join(work, name+".txt"), []byte(strings.Join(folded.Final, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := writeRecording(name, rec, fmt.Sprintf(header, name, name)); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d rows %s", name, rec.rows, firstLine(rec.err))
	}
}

// upsertKeys are the queries whose print sink Flink feeds an upsert
// changelog (+U without -U, each replacing the row of its key): how many
// leading columns make the key. q9's Top-1 is keyed by the auction's id.
var upsertKeys = map[string]int{"q9": 1}

// foldFlink folds Flink's printed changes into the final table; an
// upsert changelog by upsertKeys, which must name every query that prints
// +U without -U (and may name one whose changelog has its -U too).
func foldFlink(name string, lines []string) conformance.Changelog {
	folded := conformance.Fold(lines, row.Schema{})
	upsert := slices.Contains(folded.Kinds, "+U") && !slices.Contains(folded.Kinds, "-U")
	keyCols, known := upsertKeys[name]
	if !upsert {
		// A retract changelog folds by itself: Flink's collect sink (on
		// a cluster) gives q9's with its -U, where print gave none.
		return folded
	}
	if !known {
		folded.Problems = append(folded.Problems, fmt.Sprintf("changes of kinds %v: upsertKeys must name the queries that print +U without -U", folded.Kinds))
		return folded
	}
	table := map[string]string{}
	for _, l := range lines {
		body := l[3 : len(l)-1]
		key := strings.Join(strings.SplitN(body, ", ", keyCols+1)[:keyCols], ", ")
		switch l[:2] {
		case "+I", "+U":
			table[key] = body
		default:
			delete(table, key)
		}
	}
	folded.Final = folded.Final[:0]
	for _, body := range table {
		folded.Final = append(folded.Final, "["+body+"]")
	}
	slices.Sort(folded.Final)
	return folded
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// dumpEvents writes n events of the queries' nexmark source (q0.yaml's,
// the same in every file) to path as json, the DDL's four columns.
func dumpEvents(t *testing.T, path string, n int) {
	t.Helper()
	data, err := os.ReadFile("q0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(string(data), "\ntransforms:\n")
	const full = "    events: 10000000\n"
	if !ok || !strings.Contains(head, full) {
		t.Fatalf("q0.yaml has no %q line before its transforms", full)
	}
	head = strings.Replace(head, full, fmt.Sprintf("    events: %d\n", n), 1)
	yaml := head + fmt.Sprintf(`
transforms:
  - name: events
    sql: SELECT event_type, person, auction, bid FROM datagen
sinks:
  - name: out
    from: events
    type: file
    path: %q
    format: json
`, path)
	_ = os.Remove(path)
	p, err := pipeline.Parse("dump.yaml", []byte(strings.Replace(yaml, "name: nexmark-q0", "name: nexmark-dump", 1)), func(string) (string, bool) { return "", false }, pipeline.Env{Registry: builtin.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The placeholders of a Flink script (flink/sql/qN.sql), as the project's
// own ${NEXMARK_TABLE}: filled in by the recorder and by `go run ./bench
// -nexmark`.
const (
	eventsVar = "${EVENTS_FILE}" // the events as json
	sideVar   = "${SIDE_INPUT}"  // side_input.txt
	udfVar    = "${UDF_JAR}"     // a jar holding the project's user functions
)

// flinkTemplate is the nexmark project's query name as a Flink script
// over the events file, with what Flink 2.3 needs changed (written in its
// header): ddl_gen.sql's datagen table reads the json file with the
// filesystem connector instead of generating; then ddl_views.sql and
// qN.sql, q13's side input with the filesystem connector (the legacy
// connector.type options are gone in Flink 2), q14's function from a jar
// (ADD JAR), q23's A.dateTime quoted (Flink 2.3's parser takes dateTime
// unquoted for the keyword).
func flinkTemplate(name string) (string, error) {
	read := func(file string) (string, error) {
		b, err := os.ReadFile(filepath.Join(*queryDir, file))
		return string(b), err
	}
	gen, err := read("ddl_gen.sql")
	if err != nil {
		return "", err
	}
	views, err := read("ddl_views.sql")
	if err != nil {
		return "", err
	}
	q, err := read(name + ".sql")
	if err != nil {
		return "", err
	}
	changes := []string{"ddl_gen.sql's datagen reads " + eventsVar + " (json) with the filesystem connector"}
	if gen, err = replaceWith(gen, "datagen", "'connector' = 'filesystem', 'path' = '"+eventsVar+"', 'format' = 'json'"); err != nil {
		return "", err
	}
	if strings.Contains(q, "CREATE TABLE side_input") {
		changes = append(changes, "side_input is the filesystem connector's (csv) over "+sideVar)
		if q, err = replaceWith(q, "side_input", "'connector' = 'filesystem', 'path' = '"+sideVar+"', 'format' = 'csv'"); err != nil {
			return "", err
		}
	}
	if strings.Contains(q, "CREATE FUNCTION") {
		changes = append(changes, "ADD JAR "+udfVar+" for the function")
		q = "ADD JAR '" + udfVar + "';\n" + q
	}
	if name == "q23" {
		changes = append(changes, "A.dateTime quoted")
		q = strings.ReplaceAll(q, "A.dateTime", "A.`dateTime`")
	}
	views = strings.ReplaceAll(views, "${NEXMARK_TABLE}", "datagen")
	head := fmt.Sprintf("-- Nexmark %s for Flink 2.3: the nexmark project's ddl_gen.sql, ddl_views.sql and %s.sql\n"+
		"-- (nexmark/nexmark at %s), made by scripts/nexmark/flink.sh. Changed: %s.\n",
		name, name, *nexmarkCommit, strings.Join(changes, "; "))
	return head + gen + "\n" + views + "\n" + q + "\n", nil
}

// flinkScript fills a template's placeholders; print makes its sink
// table print its rows (q10's partitioned filesystem sink too: its rows
// are what is compared).
func flinkScript(name, template, events, udfJar string, print bool) (string, error) {
	side, err := filepath.Abs("side_input.txt")
	if err != nil {
		return "", err
	}
	quote := func(s string) string { return strings.ReplaceAll(s, "'", "''") }
	q := strings.NewReplacer(eventsVar, quote(events), sideVar, quote(side), udfVar, quote(udfJar)).Replace(template)
	if print {
		return replaceWith(q, "nexmark_"+name, "'connector' = 'print'")
	}
	return q, nil
}

// replaceWith replaces what follows CREATE TABLE table's column list (its
// PARTITIONED BY and WITH clauses) with WITH (with).
func replaceWith(sql, table, with string) (string, error) {
	loc := regexp.MustCompile(`CREATE TABLE\s+` + table + `\s*\(`).FindStringIndex(sql)
	if loc == nil {
		return "", fmt.Errorf("no CREATE TABLE %s (...)", table)
	}
	depth, i := 0, loc[1]-1
	for ; i < len(sql); i++ {
		if sql[i] == '(' {
			depth++
		} else if sql[i] == ')' {
			if depth--; depth == 0 {
				break
			}
		}
	}
	end := strings.IndexByte(sql[i:], ';')
	if end < 0 {
		end = len(sql) - i
	}
	return sql[:i+1] + " WITH (" + with + ")" + sql[i+end:], nil
}
