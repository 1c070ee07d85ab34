package spec

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestParseLocalTimeZone: local_time_zone takes what Flink's
// table.local-time-zone takes (region ids, UTC, offsets); UTC leaves Zone
// nil, anything else is an error naming the key.
func TestParseLocalTimeZone(t *testing.T) {
	const base = "version: 1\nname: p\n%ssources:\n  - {name: s, type: datagen, schema: [a INT]}\nsinks:\n  - {name: o, from: s, type: blackhole}\n"
	at := time.Date(2021, 7, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		line   string
		offset int // seconds east of UTC on 2021-07-01; 0 wants Zone nil
		err    bool
	}{
		{"", 0, false},
		{"local_time_zone: UTC\n", 0, false},
		{"local_time_zone: Asia/Shanghai\n", 8 * 3600, false},
		{"local_time_zone: America/Los_Angeles\n", -7 * 3600, false},
		{"local_time_zone: \"+05:30\"\n", 5*3600 + 1800, false},
		{"local_time_zone: UTC-8\n", -8 * 3600, false},
		{"local_time_zone: GMT+0130\n", 5400, false},
		{"local_time_zone: Local\n", 0, true},
		{"local_time_zone: PST\n", 0, true},
		{"local_time_zone: Mars/Olympus\n", 0, true},
		{"local_time_zone: \"+19:00\"\n", 0, true},
		{"local_time_zone: [UTC]\n", 0, true},
	} {
		p, err := Parse("p.yaml", []byte(fmt.Sprintf(base, tc.line)), env(nil))
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), "local_time_zone") {
				t.Errorf("%q: error %v, want one naming local_time_zone", tc.line, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		if tc.offset == 0 {
			if p.Zone != nil {
				t.Errorf("%q: Zone %v, want nil (UTC)", tc.line, p.Zone)
			}
			continue
		}
		if p.Zone == nil {
			t.Errorf("%q: Zone nil", tc.line)
			continue
		}
		if _, off := at.In(p.Zone).Zone(); off != tc.offset {
			t.Errorf("%q: offset %d, want %d", tc.line, off, tc.offset)
		}
	}
}
