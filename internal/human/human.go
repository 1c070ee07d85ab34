// Package human writes numbers for people: sizes in IEC units (1.3 GiB),
// counts with an SI suffix (1.2M) and durations as a clock (1:02:03), for
// the progress line and the summary of a one-shot run.
package human

import (
	"fmt"
	"time"
)

// Bytes writes n bytes with one decimal in the largest IEC unit that
// keeps the number at 1 or more: 512 B, 31.7 MiB, 3.1 GiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Count writes n as is below 1000, else with one decimal and k, M, G or
// T: 999, 1.2k, 3.4M.
func Count(n float64) string {
	if n < 0 {
		return "-" + Count(-n)
	}
	if n < 1000 {
		return fmt.Sprintf("%.0f", n)
	}
	for _, s := range "kMGT" {
		n /= 1000
		// Round first: 999,960 is 1.0M, not 1000.0k.
		if n < 999.95 || s == 'T' {
			return fmt.Sprintf("%.1f%c", n, s)
		}
	}
	panic("unreachable")
}

// Clock writes d rounded to the second as m:ss, or h:mm:ss from an hour
// on: 0:07, 12:34, 1:02:03. A negative d is written as 0:00.
func Clock(d time.Duration) string {
	s := int64(max(d, 0).Round(time.Second) / time.Second)
	h, m, s := s/3600, s/60%60, s%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}
