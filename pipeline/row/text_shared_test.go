package row

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestSharedTextCopies: strings copied by several goroutines at once
// are each what was copied, though they share chunks and the buffers
// they were copied from are overwritten after; long ones get their own
// memory. Run with -race: no two copies write the same bytes.
func TestSharedTextCopies(t *testing.T) {
	var txt SharedText
	const workers, each = 4, 3000
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 64)
			for i := range each {
				buf = fmt.Appendf(buf[:0], "w%d-%d", w, i)
				got[w] = append(got[w], txt.String(buf))
				copy(buf, "################")
			}
		}()
	}
	wg.Wait()
	for w := range workers {
		for i, s := range got[w] {
			if want := fmt.Sprintf("w%d-%d", w, i); s != want {
				t.Fatalf("copy %d of worker %d is %q, want %q", i, w, s, want)
			}
		}
	}
	long := []byte(strings.Repeat("x", textChunk))
	if s := txt.String(long); s != string(long) || txt.String(nil) != "" {
		t.Fatal("a long or empty string copied wrong")
	}
}
