package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// sinkTable is the Flink table a `sink:` case inserts into.
const sinkTable = "conformance_sink"

// WriteData writes each table's data section to dir/NAME.data, the file
// both Flink's filesystem source and etld's file source read.
func (c *Case) WriteData(dir string) error {
	for _, t := range c.Tables {
		if err := os.WriteFile(filepath.Join(dir, t.Name+dataSectionExt), []byte(c.Data(t.Name)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// SinkDir is where a `sink:` case's Flink output lands under dir.
func SinkDir(dir string) string { return filepath.Join(dir, "flink-sink") }

// FlinkScript is the case as a Flink SQL script reading dir's data files:
// the runtime mode, one filesystem table a table line, then the query as a
// top-level SELECT (its rows printed as the print connector prints them)
// or an INSERT into a filesystem sink in the sink's format. The runner
// sets parallelism 1 and the session time zone UTC, unless the case's
// zone: line sets another.
func (c *Case) FlinkScript(dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- conformance case %s\n", c.Name)
	if c.Batch {
		b.WriteString("SET 'execution.runtime-mode' = 'batch';\n")
	}
	if c.Zone != "" {
		fmt.Fprintf(&b, "SET 'table.local-time-zone' = %s;\n", sqlString(c.Zone))
	}
	for _, t := range c.Tables {
		cols := append([]string(nil), t.Columns...)
		if t.WatermarkColumn != "" {
			cols = append(cols, fmt.Sprintf("WATERMARK FOR %s AS %s", t.WatermarkColumn, t.Watermark))
		}
		if len(t.Key) > 0 {
			cols = append(cols, fmt.Sprintf("PRIMARY KEY (%s) NOT ENFORCED", strings.Join(t.Key, ", ")))
		}
		fmt.Fprintf(&b, "CREATE TABLE %s (\n  %s\n) WITH ('connector' = 'filesystem', 'path' = %s, 'format' = '%s');\n",
			t.Name, strings.Join(cols, ",\n  "), sqlString(filepath.Join(dir, t.Name+dataSectionExt)), t.Format)
	}
	if c.Sink != nil {
		fmt.Fprintf(&b, "CREATE TABLE %s (\n  %s\n) WITH ('connector' = 'filesystem', 'path' = %s, 'format' = '%s');\n",
			sinkTable, strings.Join(c.Sink.Columns, ",\n  "), sqlString(SinkDir(dir)), c.Sink.Format)
		fmt.Fprintf(&b, "INSERT INTO %s\n%s;\n", sinkTable, c.Query())
	} else {
		fmt.Fprintf(&b, "%s;\n", c.Query())
	}
	return b.String()
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// ReadSinkDir concatenates the finished part files Flink's filesystem
// sink wrote under SinkDir(dir), in name order (hidden in-progress files
// left out).
func ReadSinkDir(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(SinkDir(dir), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasPrefix(d.Name(), ".") && !strings.HasPrefix(d.Name(), "_") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		b.Write(data)
	}
	return b.String(), nil
}

// CondenseError keeps what names a Flink failure from its exception
// chain: each exception's message line (not the stack frames), at most
// maxErrLines of them, with dir replaced by $DIR so that a record does not
// depend on where it was made.
func CondenseError(chain, dir string) string {
	const maxErrLines = 6
	var keep []string
	for _, l := range strings.Split(chain, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "...") {
			continue
		}
		t = strings.ReplaceAll(t, dir, "$DIR")
		if len(t) > 300 {
			t = t[:300] + "..."
		}
		keep = append(keep, t)
		if len(keep) == maxErrLines {
			break
		}
	}
	if len(keep) == 0 {
		keep = []string{"failed (empty exception text)"}
	}
	return strings.Join(keep, "\n") + "\n"
}
