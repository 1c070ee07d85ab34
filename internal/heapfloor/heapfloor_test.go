package heapfloor

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

func TestPercentFor(t *testing.T) {
	for _, tt := range []struct {
		live, floor uint64
		want        int
	}{
		{0, 64 << 20, maxPercent},
		{1 << 10, 64 << 20, maxPercent}, // tiny: capped
		{16 << 20, 64 << 20, 300},       // goal 16 × 4 = 64 MiB
		{32 << 20, 64 << 20, 100},       // 2 × live reaches the floor: Go's default
		{500 << 20, 64 << 20, 100},      // a large heap: Go's default
		{21 << 20, 64 << 20, 204},       // (64-21)/21
	} {
		if got := percentFor(tt.live, tt.floor); got != tt.want {
			t.Errorf("percentFor(%d, %d) = %d, want %d", tt.live, tt.floor, got, tt.want)
		}
	}
}

func gogc() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// The floor follows the collections: after each GC cycle, GOGC is set
// for the live heap; Stop gives GOGC back its default.
func TestFloorAdjustsAfterEachCollection(t *testing.T) {
	adjusted := make(chan int, 100)
	f := start(1<<30, func(p int) {
		select {
		case adjusted <- p:
		default:
		}
	})
	<-adjusted // the first, at start
	for i := range 3 {
		runtime.GC()
		p := <-adjusted // the cleanup of the cycle's sentinel
		if p <= 100 {
			t.Fatalf("cycle %d: GOGC %d for a test's small heap under a 1 GiB floor, want more than 100", i, p)
		}
	}
	if got := gogc(); got <= 100 {
		t.Fatalf("GOGC is %d while the floor runs", got)
	}
	f.Stop()
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC is %d after Stop, want 100", got)
	}
}

func TestStartLeavesAUserGOGCAlone(t *testing.T) {
	t.Setenv("GOGC", "150")
	if f := Start(Default); f != nil {
		f.Stop()
		t.Fatal("Start ran with GOGC set in the environment")
	}
}
