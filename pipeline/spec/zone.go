package spec

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	// Every zone Java knows, without the system's zoneinfo: the image is
	// FROM scratch, and local_time_zone and CONVERT_TZ must take
	// Asia/Shanghai there as Flink does anywhere.
	_ "time/tzdata"

	"gopkg.in/yaml.v3"
)

// localTimeZone reads `local_time_zone`, Flink's table.local-time-zone:
// a region id (Asia/Shanghai, America/Los_Angeles), UTC, or a fixed
// offset (+08:00, UTC+8, GMT-05:30), as java.time.ZoneId.of reads them.
// UTC gives nil: the default every operator assumes.
func (p *parser) localTimeZone(v *yaml.Node, pl *Pipeline) {
	name := strings.TrimSpace(p.str(v, "local_time_zone"))
	loc, err := ParseZone(name)
	if err != nil {
		p.errs.Addf(p.pos(v), "local_time_zone", "%v", err)
		return
	}
	pl.LocalTimeZone = name
	if loc != time.UTC {
		pl.Zone = loc
	}
}

// ParseZone reads a zone as local_time_zone takes it.
func ParseZone(name string) (*time.Location, error) {
	up := strings.ToUpper(name)
	switch {
	case up == "UTC" || up == "GMT" || up == "Z" || up == "UTC+0" || up == "+00:00":
		return time.UTC, nil
	case strings.HasPrefix(up, "UTC+") || strings.HasPrefix(up, "UTC-") || strings.HasPrefix(up, "GMT+") || strings.HasPrefix(up, "GMT-"):
		return fixedZone(name, up[3:])
	case strings.HasPrefix(up, "+") || strings.HasPrefix(up, "-"):
		return fixedZone(name, up)
	}
	// Region ids only: time.LoadLocation would also take "" and "Local"
	// (the machine's zone) and abbreviations Java refuses.
	if name == "" || name == "Local" || !strings.Contains(name, "/") {
		return nil, fmt.Errorf("unknown time zone %q: want a region id (Asia/Shanghai), UTC or an offset (+08:00)", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: want a region id (Asia/Shanghai), UTC or an offset (+08:00)", name)
	}
	return loc, nil
}

// fixedZone reads +h, +hh, +hh:mm or +hhmm (at most 18 hours, as
// java.time.ZoneOffset).
func fixedZone(name, off string) (*time.Location, error) {
	bad := fmt.Errorf("time zone %q: want an offset as +hh:mm, at most 18 hours", name)
	sign := 1
	if off[0] == '-' {
		sign = -1
	}
	digits := strings.ReplaceAll(off[1:], ":", "")
	var h, m int
	var err error
	switch len(digits) {
	case 1, 2:
		h, err = strconv.Atoi(digits)
	case 3, 4:
		h, err = strconv.Atoi(digits[:len(digits)-2])
		if err == nil {
			m, err = strconv.Atoi(digits[len(digits)-2:])
		}
	default:
		return nil, bad
	}
	if err != nil || m > 59 || h*60+m > 18*60 {
		return nil, bad
	}
	secs := sign * (h*3600 + m*60)
	if secs == 0 {
		return time.UTC, nil
	}
	return time.FixedZone(name, secs), nil
}
