package conformance

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestZZProbe(t *testing.T) {
	for _, c := range loadCases(t) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		got := c.RunEtld(ctx, t.TempDir())
		cancel()
		if got.Refused != nil {
			t.Logf("REFUSED %s: %v", c.Name, got.Refused)
		} else if got.Failed != nil {
			t.Logf("FAILED %s: %v", c.Name, got.Failed)
		}
	}
}

func TestZZShow(t *testing.T) {
	for _, c := range loadCases(t) {
		got := c.RunEtld(context.Background(), t.TempDir())
		t.Logf("%s: refused=%v failed=%v\n%s", c.Name, got.Refused, got.Failed, strings.Join(got.Lines, "\n"))
	}
}
