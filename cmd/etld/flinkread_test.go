package main

import (
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/go-sql-driver/mysql"
)

// Readers of what a sink left behind, the same for etld's run and for
// Flink's, each giving the sink's final table as sorted lines of text: a
// folded changelog, so that runs that emit different intermediate
// changes (Flink's mini-batch, the order of a window's rows) compare
// equal when their results are.

// foldPrinted folds print-connector lines (+I[a, 1], -U[...]) into the
// rows left. A row retracted more often than inserted shows as
// "(retracted) row", so that a difference never hides.
func foldPrinted(t *testing.T, text string) []string {
	t.Helper()
	count := map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if _, rest, ok := strings.Cut(line, "> "); ok && !strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "-") {
			line = rest // print-identifier> +I[...]
		}
		if len(line) < 4 || line[2] != '[' || !strings.HasSuffix(line, "]") {
			t.Fatalf("not a printed change: %q", line)
		}
		body := line[3 : len(line)-1]
		switch line[:2] {
		case "+I", "+U":
			count[body]++
		case "-U", "-D":
			count[body]--
		default:
			t.Fatalf("unknown kind in %q", line)
		}
	}
	return multiset(count)
}

func multiset(count map[string]int) []string {
	var out []string
	for row, n := range count {
		for ; n > 0; n-- {
			out = append(out, row)
		}
		for ; n < 0; n++ {
			out = append(out, "(retracted) "+row)
		}
	}
	sort.Strings(out)
	return out
}

// fileLines returns the lines of a file, or of every visible file in a
// directory (Flink's part files), skipping the first line of each file
// when header is set.
func fileLines(t *testing.T, path string, header bool) []string {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("sink output: %v", err)
	}
	files := []string{path}
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			t.Fatal(err)
		}
		files = nil
		for _, e := range entries {
			if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if header && len(lines) > 0 {
			lines = lines[1:]
		}
		for _, l := range lines {
			if l != "" {
				out = append(out, normalizeLine(t, l))
			}
		}
	}
	sort.Strings(out)
	return out
}

// topicAppended is an append topic's table: its values (with their keys).
func topicAppended(t *testing.T, brokers, topic string) []string {
	var out []string
	for _, m := range testenv.ReadTopic(t, brokers, topic) {
		out = append(out, canonicalJSON(t, m.Key)+" => "+canonicalJSON(t, m.Value))
	}
	sort.Strings(out)
	return out
}

// topicUpserted folds an upsert topic: the last value of each key, none
// after a tombstone.
func topicUpserted(t *testing.T, brokers, topic string) []string {
	last := map[string]string{}
	for _, m := range testenv.ReadTopic(t, brokers, topic) {
		k := canonicalJSON(t, m.Key)
		if m.Value == nil {
			delete(last, k)
			continue
		}
		last[k] = canonicalJSON(t, m.Value)
	}
	var out []string
	for k, v := range last {
		out = append(out, k+" => "+v)
	}
	sort.Strings(out)
	return out
}

// topicDebezium folds debezium-json events: each adds its after image
// and takes away its before image.
func topicDebezium(t *testing.T, brokers, topic string) []string {
	count := map[string]int{}
	for _, m := range testenv.ReadTopic(t, brokers, topic) {
		if m.Value == nil {
			continue
		}
		var ev struct{ Before, After json.RawMessage }
		if err := json.Unmarshal(m.Value, &ev); err != nil {
			t.Fatalf("debezium event %s: %v", m.Value, err)
		}
		if b := string(ev.Before); b != "" && b != "null" {
			count[canonicalJSON(t, ev.Before)]--
		}
		if a := string(ev.After); a != "" && a != "null" {
			count[canonicalJSON(t, ev.After)]++
		}
	}
	return multiset(count)
}

// normalizeLine gives a line of a csv or json file in a form that
// compares values, not their spelling, where Flink spells them otherwise
// than etld in ways the script lists as differences (a csv timestamp
// quoted and without a zero fraction, a json DECIMAL without trailing
// zeros): the cases that meet them check that their script lists them.
func normalizeLine(t *testing.T, line string) string {
	if strings.HasPrefix(line, "{") {
		return canonicalJSON(t, []byte(line))
	}
	fields, err := csv.NewReader(strings.NewReader(line)).Read()
	if err != nil {
		return line
	}
	for i, f := range fields {
		if timestampRE.MatchString(f) {
			f = strings.TrimRight(f, "0")
			fields[i] = strings.TrimSuffix(f, ".")
		}
	}
	return strings.Join(fields, ",")
}

var timestampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d*$`)

// canonicalJSON re-encodes JSON with its members sorted and its numbers
// as float64 values print (17.50 and 17.5 alike, 1E+2 as 100), or
// returns the text as it is when it is not JSON.
func canonicalJSON(t *testing.T, data []byte) string {
	if data == nil {
		return "null"
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(data)
	}
	out, err := json.Marshal(numbers(v))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// tableRows reads a MySQL table as sorted lines, columns joined by ", ".
func tableRows(t *testing.T, dsn, table string) []string {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return testenv.TableLines(t, db, table, ", ", "null")
}

// mysqlExec runs statements on the test database.
func mysqlExec(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("mysql: %s: %v", s, err)
		}
	}
}

// dsnPassword is the password a DSN holds.
func dsnPassword(t *testing.T, dsn string) string {
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(fmt.Errorf("test DSN: %w", err))
	}
	return c.Passwd
}

// numbers replaces the json.Numbers in v by their float64 values.
func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return f
		}
	case map[string]any:
		for k, x := range v {
			v[k] = numbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = numbers(x)
		}
	}
	return v
}
