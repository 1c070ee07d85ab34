package conformance

import "strings"

// FLOOR(x TO unit) and CEIL(x TO unit) over TIMESTAMP, TIMESTAMP_LTZ, DATE
// and TIME: every unit on values at, just after and just before a boundary,
// before 1970, on a Sunday and a Monday, and NULL.

func init() { areaCases = append(areaCases, floorCeilCases) }

const (
	tableFC = "table: fc (id INT, ts TIMESTAMP(3), dt DATE, tm TIME(3)) json"
	dataFC  = `{"id":1,"ts":"2024-01-15 10:30:45.123","dt":"2024-01-15","tm":"10:30:45.123"}
{"id":2,"ts":"2024-04-01 00:00:00","dt":"2024-04-01","tm":"00:00:00"}
{"id":3,"ts":"2024-03-31 23:59:59.999","dt":"2024-03-31","tm":"23:59:59.999"}
{"id":4,"ts":"1969-12-31 23:59:59.5","dt":"1969-12-31","tm":"12:00:00"}
{"id":5,"ts":"1965-07-04 06:07:08.9","dt":"1965-07-04","tm":"06:07:08.9"}
{"id":6,"ts":null,"dt":null,"tm":null}
{"id":7,"ts":"2024-01-01 00:00:00","dt":"2024-01-01","tm":"00:00:00.5"}
{"id":8,"ts":"2024-05-01 00:00:00.001","dt":"2023-12-31","tm":"23:00:00"}
{"id":9,"ts":"1969-01-01 00:00:00","dt":"1969-10-01","tm":"00:00:01"}
{"id":10,"ts":"2023-12-31 12:00:00","dt":"2024-12-31","tm":"00:01:00"}
`
)

func floorCeilCases() []genCase {
	var out []genCase
	var addFns func(name, data, x string, fns []string, units ...string)
	add := func(name, x string, units ...string) {
		addFns(name, dataFC, x, []string{"FLOOR", "CEIL"}, units...)
	}
	addFns = func(name, data, x string, fns []string, units ...string) {
		for _, fn := range fns {
			exprs := make([]string, len(units))
			for i, u := range units {
				exprs[i] = fn + "(" + x + " TO " + u + ")"
			}
			out = append(out, genCase{name: "fn-" + strings.ToLower(fn) + "-to-" + name, header: []string{tableFC},
				query: exprQuery("fc", exprs), data: map[string]string{"fc": data}})
		}
	}
	all := []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND"}
	add("timestamp", "ts", all...)
	add("ltz", "CAST(ts AS TIMESTAMP_LTZ(3))", all...)
	add("date", "dt", "YEAR", "QUARTER", "MONTH", "WEEK", "DAY")
	add("date-hour", "dt", "HOUR", "MINUTE", "SECOND", "MILLISECOND")
	addFns("time", dataFC, "tm", []string{"FLOOR"}, "HOUR", "MINUTE", "SECOND", "MILLISECOND")
	addFns("time-day", dataFC, "tm", []string{"FLOOR"}, "DAY", "YEAR", "QUARTER", "MONTH", "WEEK")
	// CEIL of a TIME past 23:00 TO HOUR is 24:00, which fails Flink's
	// job; the other rows go on their own.
	var early []string
	for _, l := range strings.SplitAfter(dataFC, "\n") {
		if !strings.Contains(l, `"tm":"23:`) {
			early = append(early, l)
		}
	}
	addFns("time", strings.Join(early, ""), "tm", []string{"CEIL"}, "HOUR", "MINUTE", "SECOND", "MILLISECOND")
	addFns("time-day", strings.Join(early, ""), "tm", []string{"CEIL"}, "DAY")
	addFns("time-year", strings.Join(early, ""), "tm", []string{"CEIL"}, "YEAR", "QUARTER", "MONTH", "WEEK")
	addFns("time-midnight", dataFC, "tm", []string{"CEIL"}, "HOUR")
	// Row 4's CAST AS TIMESTAMP(0) is before-epoch-millis.
	out = append(out, genCase{name: "fn-ceiling-to-timestamp-precision", header: []string{tableFC, "expect: before-epoch-millis"},
		query: "SELECT id, CEILING(CAST(ts AS TIMESTAMP(6)) TO SECOND), FLOOR(CAST(ts AS TIMESTAMP(0)) TO MINUTE), CEIL(TIMESTAMP '2024-01-01 00:00:00.000001' TO SECOND) FROM fc", data: map[string]string{"fc": dataFC}})
	return out
}
