package plan

import (
	"fmt"
	"time"
)

// honoursTTL reports whether n's operator keeps keyed state that
// `state_ttl` expires (its operator is a runtime.TTLSetter that takes
// the TTL). TestHonoursTTLMatchesOperators keeps it in step with the
// operators Graph builds.
func (n *Node) honoursTTL() bool {
	if n.batch {
		return false
	}
	switch n.Kind {
	case GroupAggNode, DistinctNode, RankNode, DedupNode, OverAggNode, SetOpNode:
		return true
	case JoinNode:
		// Interval, window and event-time temporal joins free state by
		// the watermark.
		return n.joined().regular()
	}
	return false
}

// stateTTL is the retention n's operator runs with: the owning
// transform's own `state_ttl` when it sets one, else the pipeline's; 0
// when the operator keeps its state forever or has none to expire.
func (p *Plan) stateTTL(n *Node, transform string) time.Duration {
	if !n.honoursTTL() {
		return 0
	}
	ttl := p.Spec.StateTTL
	for _, t := range p.Spec.Transforms {
		if t.Name == transform && t.StateTTL != nil {
			ttl = *t.StateTTL
		}
	}
	return ttl
}

// ttlText is explain's note of a node's retention, ", stateTtl=[1h]",
// or nothing when none applies.
func (p *Plan) ttlText(n *Node, transform string) string {
	ttl := p.stateTTL(n, transform)
	if ttl <= 0 {
		return ""
	}
	return fmt.Sprintf(", stateTtl=[%s]", durationText(ttl))
}

// durationText writes d in the pipeline file's units (7d, 2h, 90s,
// 1500ms): the largest unit that divides it.
func durationText(d time.Duration) string {
	ms := d.Milliseconds()
	for _, u := range []struct {
		ms   int64
		name string
	}{{86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}} {
		if ms%u.ms == 0 {
			return fmt.Sprintf("%d%s", ms/u.ms, u.name)
		}
	}
	return fmt.Sprintf("%dms", ms)
}

// ExpiringState reports whether the named transform owns an operator
// whose state `state_ttl` expires: only then does its retention change
// what it computes (the Flink export compares it with the pipeline's).
func (p *Plan) ExpiringState(transform string) bool {
	_, owners := p.opOwners()
	for n, t := range owners {
		if t == transform && n.honoursTTL() {
			return true
		}
	}
	return false
}
