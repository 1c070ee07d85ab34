package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// etldBin is the etld binary built once for the end-to-end tests.
var etldBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "etld-e2e")
	if err != nil {
		panic(err)
	}
	etldBin = filepath.Join(dir, "etld")
	args := []string{"build", "-o", etldBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building etld: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoRoot is where the examples' relative paths start.
func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// etld runs the binary in a scratch copy of the examples, so that output
// files land in a temp dir, and returns stdout, stderr and the exit code.
func etld(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(etldBin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running etld: %v", err)
	}
	return stdout.String(), stderr.String(), code
}

// workdir copies configs/examples into a temp dir laid out like the repo.
func workdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "configs", "examples")
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		dst := filepath.Join(dir, "configs", "examples", rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestExampleHelloDatagen(t *testing.T) {
	dir := workdir(t)
	out1, stderr, code := etld(t, dir, "run", "--quiet", "configs/examples/hello-datagen.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out1), "\n")
	re := regexp.MustCompile(`^\+I\[-?\d+, (true|false)\]$`)
	if len(lines) != 3 {
		t.Fatalf("want 3 rows, got %q", out1)
	}
	for _, l := range lines {
		if !re.MatchString(l) {
			t.Errorf("line %q is not +I[INT, BOOLEAN]", l)
		}
	}
	out2, _, _ := etld(t, dir, "run", "--quiet", "configs/examples/hello-datagen.yaml")
	if out1 != out2 {
		t.Errorf("the same seed gave different rows:\n%s\n%s", out1, out2)
	}
}

func TestExampleMessages(t *testing.T) {
	stdout, stderr, code := etld(t, workdir(t), "run", "configs/examples/messages.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "+I[1, 1, hello]\n+I[2, 1, hi]\n+I[1, 2, how are you?]\n+I[3, 1, hello, world]\n+I[2, 2, bye]\n"
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	// stderr is no terminal here: no progress line, no escape codes.
	if strings.Contains(stderr, "\x1b") {
		t.Errorf("stderr, not a terminal, got escape codes: %q", stderr)
	}
	// The summary goes to stderr: a table of rows in and out, the
	// sink's mode and the bytes the file source read.
	size := fileSize(t, filepath.Join(repoRoot(t), "configs", "examples", "data", "messages.csv"))
	for _, re := range []string{
		`pipeline messages: `,
		`\n  KIND +NAME +MODE +IN +OUT +SKIPPED +READ\n`,
		fmt.Sprintf(`\n  source +messages +- +5 +5 +0 +%d B\n`, size),
		`\n  sink +console +append +5 +5 +0\n`,
	} {
		if !regexp.MustCompile(re).MatchString(stderr) {
			t.Errorf("summary lacks %s:\n%s", re, stderr)
		}
	}
}

func TestExampleSensorRename(t *testing.T) {
	dir := workdir(t)
	if _, stderr, code := etld(t, dir, "run", "--quiet", "configs/examples/sensor-rename.yaml"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `ts,sensor_id,temp_c
1547718199,sensor_1,35.8
1547718201,sensor_6,15.4
1547718202,sensor_7,6.7
1547718205,sensor_10,38.1
1547718207,sensor_1,36.3
1547718209,sensor_1,32.8
1547718212,sensor_6,15.1
1547718215,sensor_1,37.1
`
	if got := readFile(t, filepath.Join(dir, "out", "sensor-renamed.csv")); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

func TestExampleStatementSet(t *testing.T) {
	dir := workdir(t)
	if _, stderr, code := etld(t, dir, "run", "--quiet", "configs/examples/statement-set.yaml"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	hot := "sensor_1,35.8\nsensor_10,38.1\nsensor_1,36.3\nsensor_1,32.8\nsensor_1,37.1\n"
	if got := readFile(t, filepath.Join(dir, "out", "hot-sensors.csv")); got != hot {
		t.Errorf("hot-sensors.csv:\n%s\nwant:\n%s", got, hot)
	}
	nums := "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n{\"n\":5}\n"
	if got := readFile(t, filepath.Join(dir, "out", "numbers.json")); got != nums {
		t.Errorf("numbers.json:\n%s\nwant:\n%s", got, nums)
	}
}

func TestExampleSensorStatsPrintsUpdates(t *testing.T) {
	stdout, stderr, code := etld(t, workdir(t), "run", "--quiet", "configs/examples/sensor-stats.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `+I[sensor_1, 1, 35.8]
+I[sensor_6, 1, 15.4]
+I[sensor_7, 1, 6.7]
+I[sensor_10, 1, 38.1]
-U[sensor_1, 1, 35.8]
+U[sensor_1, 2, 36.3]
-U[sensor_1, 2, 36.3]
+U[sensor_1, 3, 36.3]
-U[sensor_6, 1, 15.4]
+U[sensor_6, 2, 15.4]
-U[sensor_1, 3, 36.3]
+U[sensor_1, 4, 37.1]
`
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
}

func TestExampleSensorWindows(t *testing.T) {
	dir := workdir(t)
	if _, stderr, code := etld(t, dir, "run", "--quiet", "configs/examples/sensor-windows.yaml"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "out", "sensor-windows.csv"))), "\n")
	header, rows := got[0], got[1:]
	slices.Sort(rows)
	// Flink's csv writer gives a timestamp the fraction digits it needs.
	want := []string{
		"2019-01-17 09:43:10,2019-01-17 09:43:20,sensor_1,1,35.8",
		"2019-01-17 09:43:20,2019-01-17 09:43:30,sensor_1,2,34.55",
		"2019-01-17 09:43:20,2019-01-17 09:43:30,sensor_10,1,38.1",
		"2019-01-17 09:43:20,2019-01-17 09:43:30,sensor_6,1,15.4",
		"2019-01-17 09:43:20,2019-01-17 09:43:30,sensor_7,1,6.7",
		"2019-01-17 09:43:30,2019-01-17 09:43:40,sensor_1,1,37.1",
		"2019-01-17 09:43:30,2019-01-17 09:43:40,sensor_6,1,15.1",
	}
	if header != "window_start,window_end,id,readings,avg_temp" {
		t.Errorf("header = %q", header)
	}
	if !slices.Equal(rows, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

func TestValidateExamples(t *testing.T) {
	// The examples for real services take their addresses from ${VAR}s;
	// validate connects to nothing, so loopback placeholders do.
	for name, value := range map[string]string{
		"KAFKA_BROKERS":  "127.0.0.1:9092",
		"ES_HOSTS":       "http://127.0.0.1:9200",
		"ETLD_MYSQL_DSN": "etld:pw@tcp(127.0.0.1:3306)/etld_test",
		"ETLD_PG_DSN":    "postgres://etld:pw@127.0.0.1:5432/etld_test",
	} {
		if _, set := os.LookupEnv(name); !set {
			t.Setenv(name, value)
		}
	}
	stdout, stderr, code := etld(t, workdir(t), "validate", "configs/examples")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, "is valid"); n < 6 {
		t.Errorf("validated %d pipelines, want every example:\n%s", n, stdout)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
