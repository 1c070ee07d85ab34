package human

import (
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{31_700_000, "30.2 MiB"},
		{1 << 20, "1.0 MiB"},
		{3_328_599_654, "3.1 GiB"},
		{1 << 50, "1.0 PiB"},
	} {
		if got := Bytes(tt.n); got != tt.want {
			t.Errorf("Bytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    float64
		want string
	}{
		{0, "0"},
		{999, "999"},
		{1000, "1.0k"},
		{1234, "1.2k"},
		{999_960, "1.0M"},
		{1_234_567, "1.2M"},
		{3.4e9, "3.4G"},
		{5e15, "5000.0T"},
		{-1500, "-1.5k"},
	} {
		if got := Count(tt.n); got != tt.want {
			t.Errorf("Count(%v) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestClock(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0:00"},
		{-time.Second, "0:00"},
		{7 * time.Second, "0:07"},
		{12*time.Minute + 34*time.Second + 400*time.Millisecond, "12:34"},
		{59*time.Minute + 59*time.Second + 600*time.Millisecond, "1:00:00"},
		{time.Hour + 2*time.Minute + 3*time.Second, "1:02:03"},
	} {
		if got := Clock(tt.d); got != tt.want {
			t.Errorf("Clock(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
