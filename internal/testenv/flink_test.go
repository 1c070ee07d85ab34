package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunFlink checks the runner against real Flink: a query's rows come
// back as the print connector writes them, in both modes, a statement set
// runs as one statement, and a failing script leaves its cause and does
// not stop the next.
func TestRunFlink(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "in.csv")
	write(t, data, "1,a\n2,b\n1,c\n")
	source := "CREATE TABLE t (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = '" + data + "', 'format' = 'csv');\n"
	scripts := map[string]string{
		"stream.sql": "-- counts; per id\n" + source +
			"SELECT id, COUNT(*) AS n FROM t GROUP BY id;\n",
		"broken.sql": "SELECT * FROM missing;\n",
		"batch.sql": "SET 'execution.runtime-mode' = 'batch';\n" + source +
			"CREATE TABLE o1 (id INT, n BIGINT) WITH ('connector' = 'print');\n" +
			"EXECUTE STATEMENT SET BEGIN\nINSERT INTO o1 SELECT id, COUNT(*) FROM t GROUP BY id;\nEND;\n",
	}
	var paths []string
	for _, name := range []string{"stream.sql", "broken.sql", "batch.sql"} {
		p := filepath.Join(dir, name)
		write(t, p, scripts[name])
		paths = append(paths, p)
	}
	results := RunFlink(t, 2*time.Minute, paths...)

	if got, want := results[0].Out, "+I[1, 1]\n+I[2, 1]\n-U[1, 1]\n+U[1, 2]\n"; got != want || results[0].Err != "" {
		t.Errorf("streaming query: got %q (err %q), want %q", got, results[0].Err, want)
	}
	if !strings.Contains(results[1].Err, "missing") || results[1].Out != "" {
		t.Errorf("failing script: got out %q err %q, want the missing table named", results[1].Out, results[1].Err)
	}
	if got, want := results[2].Out, "+I[1, 2]\n+I[2, 1]\n"; got != want || results[2].Err != "" {
		t.Errorf("batch statement set: got %q (err %q), want %q", got, results[2].Err, want)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
