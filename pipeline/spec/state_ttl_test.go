package spec

import (
	"strings"
	"testing"
	"time"
)

func ttlPipeline(top, transform string) string {
	var b strings.Builder
	b.WriteString("version: 1\nname: p\n")
	if top != "" {
		b.WriteString("state_ttl: " + top + "\n")
	}
	b.WriteString("sources:\n  - name: s\n    type: datagen\n    schema: [k BIGINT]\ntransforms:\n  - name: t\n    sql: SELECT k, COUNT(*) AS n FROM s GROUP BY k\n")
	if transform != "" {
		b.WriteString("    state_ttl: " + transform + "\n")
	}
	b.WriteString("sinks:\n  - name: o\n    from: t\n    type: print\n")
	return b.String()
}

func TestStateTTL(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		top, transform string
		want           time.Duration
		wantTr         *time.Duration
		err            string
	}{
		{want: 0},
		{top: "1h", want: time.Hour},
		{top: "0", want: 0},
		{top: "1d", transform: "30m", want: day, wantTr: ptr(30 * time.Minute)},
		{top: "1h", transform: "0", want: time.Hour, wantTr: ptr(0)},
		{top: "5", err: `p.yaml:3:12: state_ttl: duration "5" needs a unit, such as 5ms or 5s (0 keeps state forever)`},
		{top: "-1h", err: `p.yaml:3:12: state_ttl: duration "-1h" is negative`},
		{top: "10us", err: `p.yaml:3:12: state_ttl: state_ttl 10µs is below a millisecond`},
		{transform: "soon", err: `p.yaml:10:16: transforms[0].state_ttl: want a duration such as 500ms, 5s or 1m, got "soon"`},
	}
	for _, tt := range tests {
		p, err := Parse("p.yaml", []byte(ttlPipeline(tt.top, tt.transform)), env(nil))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("state_ttl %q / %q: error %v, want %q", tt.top, tt.transform, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("state_ttl %q / %q: %v", tt.top, tt.transform, err)
			continue
		}
		if p.StateTTL != tt.want {
			t.Errorf("state_ttl %q: %v, want %v", tt.top, p.StateTTL, tt.want)
		}
		got := p.Transforms[0].StateTTL
		if (got == nil) != (tt.wantTr == nil) || got != nil && *got != *tt.wantTr {
			t.Errorf("transform state_ttl %q: %v, want %v", tt.transform, got, tt.wantTr)
		}
	}
}

func ptr(d time.Duration) *time.Duration { return &d }
