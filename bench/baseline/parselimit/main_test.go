package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryLineOnce: split among 1 to 7 workers, every record of a file
// is parsed once (the same count and checksum as one worker), whatever
// byte the ranges cut at; a last line without its newline counts.
func TestEveryLineOnce(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "%d,k%d,%d,2024-01-01 00:00:%02d.000\n", i, i%37, i*i%1000, i%60)
	}
	b.WriteString("1000,last,5,2024-01-01 00:00:00.000")
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rows1, sum1, err := parseFile(path, 1, parseCSV)
	if err != nil || rows1 != 1001 {
		t.Fatalf("one worker: %d rows, %v", rows1, err)
	}
	for w := 2; w <= 7; w++ {
		rows, sum, err := parseFile(path, w, parseCSV)
		if err != nil || rows != rows1 || sum != sum1 {
			t.Errorf("%d workers: %d rows sum %x, %v; want %d sum %x", w, rows, sum, err, rows1, sum1)
		}
	}
}

func TestParseJSON(t *testing.T) {
	got := parseJSON([]byte(`{"id":12,"sk":"ab\"c","z":-3}`))
	// 12, the string's 7 bytes with its quotes, and -3's digits.
	if want := uint64(12 + 7 + 3); got != want {
		t.Errorf("parseJSON = %d, want %d", got, want)
	}
}
