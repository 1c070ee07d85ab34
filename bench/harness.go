package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// parseRows reads a row count such as 10M, 500k, 1.5M or 12345.
func parseRows(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1e3, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult, s = 1e6, s[:len(s)-1]
	case strings.HasSuffix(s, "G"), strings.HasSuffix(s, "g"):
		mult, s = 1e9, s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f*mult > 1e12 {
		return 0, fmt.Errorf("rows %q: want a positive count such as 10M, 500k or 12345", s)
	}
	return int64(f*mult + 0.5), nil
}

// median of xs (the mean of the middle two for an even count); 0 when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// measure is one run of one engine.
type measure struct {
	Wall    float64 `json:"wall_s"`
	CPU     float64 `json:"cpu_s"`    // user+sys of the child (wait4 rusage)
	PeakRSS int64   `json:"peak_rss"` // bytes (rusage maxrss)
	Inner   float64 `json:"inner_s,omitempty"`
	// Script is FlinkRun's own time of the script (its "ok in" line):
	// between the JVM's start (left out) and the job (Inner).
	Script float64 `json:"script_s,omitempty"`
	Rows   int64   `json:"out_rows"`
	Sum    string  `json:"checksum,omitempty"`
	Err    string  `json:"error,omitempty"`
}

// runChild runs argv with env added and returns its wall time and rusage;
// stderr is kept in errPath.
func runChild(argv []string, env []string, dir, errPath string, timeout time.Duration) (measure, []byte, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return measure{}, nil, err
	}
	timer := time.AfterFunc(timeout, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	m := measure{Wall: time.Since(t0).Seconds()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.CPU = tv(ru.Utime) + tv(ru.Stime)
		m.PeakRSS = ru.Maxrss * 1024 // KiB on Linux
	}
	if errPath != "" {
		_ = os.WriteFile(errPath, stderr.Bytes(), 0o644)
	}
	if err != nil {
		return m, stderr.Bytes(), fmt.Errorf("%s: %w: %s", filepath.Base(argv[0]), err, lastLines(stderr.Bytes(), 3))
	}
	return m, stderr.Bytes(), nil
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// flinkInner is the script time FlinkRun prints ("x.sql ok in 12.3s"):
// the job without the JVM's start.
var flinkInner = regexp.MustCompile(`\.sql\S* .*in ([0-9.]+)s`)

func parseFlinkInner(stderr []byte) float64 {
	m := flinkInner.FindSubmatch(stderr)
	if m == nil {
		return 0
	}
	f, _ := strconv.ParseFloat(string(m[1]), 64)
	return f
}

// checksum counts the lines of an output (a file, or every file of a
// directory: Flink's part files) and hashes them independently of their
// order: the sum and the xor of each line's 64-bit FNV-1a hash, so two
// outputs agree when their sorted lines do (up to a hash collision)
// without sorting 10M lines. Double quotes are dropped first (Flink's
// csv writer quotes text holding a space; etld's and DuckDB's do not).
// With retract set, lines start with an op column (+I,-U,+U,-D): the
// changes are folded into the final table first.
func checksum(path string, retract bool) (int64, string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, "", err
	}
	files := []string{path}
	if st.IsDir() {
		files = nil
		err := filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".crc") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return 0, "", err
		}
	}
	var h multisetHash
	folded := map[string]int{}
	for _, f := range files {
		if err := eachLine(f, func(line []byte) {
			line = bytes.ReplaceAll(line, []byte{'"'}, nil)
			if !retract {
				h.add(line, 1)
				return
			}
			op, rest, _ := bytes.Cut(line, []byte{','})
			switch string(op) {
			case "+I", "+U":
				folded[string(rest)]++
			case "-U", "-D":
				folded[string(rest)]--
			}
		}); err != nil {
			return 0, "", err
		}
	}
	for k, n := range folded {
		if n < 0 {
			return 0, "", fmt.Errorf("%s: a retraction of %q that was never inserted", path, k)
		}
		h.add([]byte(k), n)
	}
	return h.n, h.String(), nil
}

type multisetHash struct {
	n        int64
	sum, xor uint64
}

func (m *multisetHash) add(line []byte, times int) {
	f := fnv.New64a()
	f.Write(line)
	v := f.Sum64()
	for range times {
		m.n++
		m.sum += v
		m.xor ^= v * 0x9e3779b97f4a7c15
	}
}

func (m *multisetHash) String() string { return fmt.Sprintf("%016x%016x", m.sum, m.xor) }

func eachLine(path string, fn func([]byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if line := bytes.TrimRight(sc.Bytes(), "\r"); len(line) > 0 {
			fn(line)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// checkpointBytes is the size of the largest checkpoint file under dir
// (a bounded run's last checkpoint holds its final state).
func checkpointBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, e := d.Info(); e == nil && info.Mode().IsRegular() && strings.HasPrefix(d.Name(), "chk-") {
			n = max(n, info.Size())
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return n, err
}
