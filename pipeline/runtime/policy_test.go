package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
)

// Under on_error: fail the policy's error keeps the bad record in its
// chain: the daemon tells a data error (running again reads the same
// record again) from a transient one by it.
func TestPolicyFailKeepsTheBadRecord(t *testing.T) {
	for _, kind := range []string{"source", "sink"} {
		t.Run(kind, func(t *testing.T) {
			p, err := NewPolicy(kind, "x", "fail", nil, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			cause := errors.New("column n: not an integer")
			rerr := p.Feed().Reject(connector.BadRecord{Position: "data/in.csv:7", Raw: []byte("a,b"), Err: cause})
			if !errors.Is(rerr, cause) {
				t.Errorf("errors.Is(%v, the record's error) = false", rerr)
			}
			wrapped := fmt.Errorf("pipeline p: %s %q: read: %w", kind, "x", rerr)
			var bad connector.BadRecord
			if !errors.As(wrapped, &bad) || bad.Position != "data/in.csv:7" {
				t.Fatalf("errors.As(%v, BadRecord) = false or wrong position %q", wrapped, bad.Position)
			}
			want := "data/in.csv:7: column n: not an integer (on_error: fail; set on_error: skip or dead-letter to go on past bad records)"
			if rerr.Error() != want {
				t.Errorf("error = %q\nwant    %q", rerr, want)
			}
			if strings.Count(rerr.Error(), "data/in.csv:7") != 1 {
				t.Errorf("position repeated: %q", rerr)
			}
		})
	}
}
