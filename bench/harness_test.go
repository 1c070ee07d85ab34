package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseRows(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{{"10M", 10_000_000, false}, {"500k", 500_000, false}, {"1.5M", 1_500_000, false}, {"12345", 12345, false}, {"0", 0, true}, {"x", 0, true}, {"-1M", 0, true}} {
		got, err := parseRows(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("parseRows(%q) = %d, %v; want %d (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestChecksumOrderAndFold(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a", "1,x\n2,y\n")
	b := write("b", "2,\"y\"\n1,x\n")
	c := write("c", "+I,1,x\n+I,2,z\n-U,2,z\n+U,2,y\n")
	d := write("d", "1,x\n2,z\n")
	na, sa, _ := checksum(a, false)
	nb, sb, _ := checksum(b, false)
	nc, sc, err := checksum(c, true)
	if err != nil {
		t.Fatal(err)
	}
	_, sd, _ := checksum(d, false)
	if na != 2 || nb != 2 || nc != 2 || sa != sb || sa != sc {
		t.Errorf("same rows: %d %s, %d %s, %d %s", na, sa, nb, sb, nc, sc)
	}
	if sa == sd {
		t.Errorf("different rows, same checksum %s", sa)
	}
}
