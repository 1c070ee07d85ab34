package main

import (
	"runtime"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs 2 CPUs")
	}
	for _, tt := range []struct {
		name    string
		a, b, n int
		err     bool
	}{
		{"cpu 0 and 1", 0, 1, 1000, false},
		{"cpu 1 and 0", 1, 0, 10, false},
		{"one round trip", 0, 1, 1, false},
		{"no such second cpu", 0, 1 << 20, 10, true},
		{"no such first cpu", -1, 0, 10, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := roundTrip(tt.a, tt.b, tt.n)
			if (err != nil) != tt.err {
				t.Fatalf("err %v, want error %v", err, tt.err)
			}
			if err == nil && d <= 0 {
				t.Fatalf("round trips took %v", d)
			}
		})
	}
}
