// Command parselimit is the physical limit beside the benchmark matrix:
// a hand-written loop that reads its files and parses every field of
// every record, on every core, and does nothing else (no query, no
// output). A number's digits are turned into its value (a timestamp's
// groups of digits each), a string's end is found; JSON objects are
// scanned key by key. Each core takes an equal byte range of each file,
// from the first line that starts in it. It prints the records read and
// a checksum of the values (so that the parsing is not optimized away).
//
// Usage: parselimit csv|json FILE...
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

func main() {
	if len(os.Args) < 3 || (os.Args[1] != "csv" && os.Args[1] != "json") {
		fmt.Fprintln(os.Stderr, "usage: parselimit csv|json FILE...")
		os.Exit(2)
	}
	parse := parseCSV
	if os.Args[1] == "json" {
		parse = parseJSON
	}
	var rows int64
	var sum uint64
	for _, path := range os.Args[2:] {
		n, s, err := parseFile(path, runtime.GOMAXPROCS(0), parse)
		if err != nil {
			fmt.Fprintln(os.Stderr, "parselimit:", err)
			os.Exit(1)
		}
		rows += n
		sum += s
	}
	fmt.Printf("%d records, checksum %x\n", rows, sum)
}

// parseFile parses path's lines on workers goroutines.
func parseFile(path string, workers int, parse func([]byte) uint64) (int64, uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size := st.Size()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		rows  int64
		sum   uint64
		first error
	)
	for w := range workers {
		lo, hi := size*int64(w)/int64(workers), size*int64(w+1)/int64(workers)
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, s, err := parseRange(f, size, lo, hi, parse)
			mu.Lock()
			defer mu.Unlock()
			rows, sum = rows+n, sum+s
			if err != nil && first == nil {
				first = fmt.Errorf("%s: %w", path, err)
			}
		}()
	}
	wg.Wait()
	return rows, sum, first
}

// parseRange parses the lines of f that start in [lo, hi).
func parseRange(f *os.File, size, lo, hi int64, parse func([]byte) uint64) (int64, uint64, error) {
	start := max(lo-1, 0)
	r := bufio.NewReaderSize(io.NewSectionReader(f, start, size-start), 1<<20)
	off := start
	if lo > 0 {
		// The line holding byte lo-1 is the previous range's; the
		// first of ours starts after its newline.
		line, err := r.ReadSlice('\n')
		off += int64(len(line))
		if err != nil {
			return 0, 0, ignoreEOF(err)
		}
	}
	var rows int64
	var sum uint64
	for off < hi {
		line, err := r.ReadSlice('\n')
		off += int64(len(line))
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		if len(line) > 0 {
			sum += parse(line)
			rows++
		}
		if err != nil {
			return rows, sum, ignoreEOF(err)
		}
	}
	return rows, sum, nil
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// parseCSV parses one line of unquoted fields: numbers (and a
// timestamp's groups of digits) to their values, strings to their
// lengths.
func parseCSV(line []byte) uint64 {
	var sum uint64
	for i := 0; i < len(line); {
		j := i
		for j < len(line) && line[j] != ',' {
			j++
		}
		sum += field(line[i:j])
		i = j + 1
	}
	return sum
}

// field is the value of a number's digits, or a string's length.
func field(b []byte) uint64 {
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return uint64(len(b))
	}
	var v, sum uint64
	for _, c := range b {
		if c >= '0' && c <= '9' {
			v = v*10 + uint64(c-'0')
			continue
		}
		sum, v = sum+v, 0
	}
	return sum + v
}

// parseJSON scans one flat object: each key's end, then its value, a
// number (to its value) or a string (to its length).
func parseJSON(line []byte) uint64 {
	var sum uint64
	i := 0
	for i < len(line) {
		if line[i] != '"' {
			i++
			continue
		}
		// A key.
		i = skipString(line, i+1)
		for i < len(line) && line[i] != ':' {
			i++
		}
		i++
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i < len(line) && line[i] == '"' {
			end := skipString(line, i+1)
			sum += uint64(end - i)
			i = end
			continue
		}
		j := i
		for j < len(line) && line[j] != ',' && line[j] != '}' {
			j++
		}
		sum += field(line[i:j])
		i = j
	}
	return sum
}

// skipString returns the index after the closing quote of the string
// whose text starts at i.
func skipString(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i + 1
		}
		i++
	}
	return i
}
