package runtime

import (
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
)

// TestTTLChangeMigrates: an operator whose state TTL differs from the
// one its checkpoint recorded migrates, saying from what to what; one
// of a checkpoint that recorded none (format 4 and before) keeps, as
// does a TTL unchanged; a widening adds the change to its own.
func TestTTLChangeMigrates(t *testing.T) {
	n := &Node{ID: "transform/q/group_aggregate#1", Kind: "transform", Fingerprint: "fp", StateTTL: 10 * time.Second}
	for _, c := range []struct {
		saved  time.Duration
		v      Verdict
		action Action
		change string
	}{
		{time.Hour, Verdict{Action: Keep}, Migrate, "state TTL 1h -> 10s"},
		{0, Verdict{Action: Keep}, Migrate, "state TTL none -> 10s"},
		{-1, Verdict{Action: Keep}, Keep, ""},
		{10 * time.Second, Verdict{Action: Keep}, Keep, ""},
		{90 * time.Minute, Verdict{Action: Migrate, Change: "INT -> BIGINT on column v", Why: "widened"}, Migrate, "INT -> BIGINT on column v, state TTL 1h30m -> 10s"},
		{time.Hour, Verdict{Action: Refuse}, Refuse, ""},
	} {
		v := c.v
		ttlChange(&v, n, &checkpoint.Component{StateTTL: c.saved})
		if v.Action != c.action || v.Change != c.change {
			t.Errorf("saved TTL %v, %+v: %s %q, want %s %q", c.saved, c.v, v.Action, v.Change, c.action, c.change)
		}
	}
	n.StateTTL = 0
	v := Verdict{Action: Keep}
	if ttlChange(&v, n, &checkpoint.Component{StateTTL: time.Minute}); v.Change != "state TTL 1m -> none" {
		t.Errorf("TTL dropped: %q", v.Change)
	}
}
