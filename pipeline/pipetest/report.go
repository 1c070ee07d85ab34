package pipetest

import (
	"fmt"
	"io"
	"strings"

	"github.com/etld/etld/pipeline/connector"
)

// Write prints a result: `PASS name`, or `FAIL name (file:line:col)`
// followed by why: the run's error, or a diff of the changes each
// failing sink was expected to receive and received, aligned in columns.
func Write(w io.Writer, r Result) {
	if r.Passed() {
		fmt.Fprintf(w, "PASS %s\n", r.Name)
		return
	}
	fmt.Fprintf(w, "FAIL %s (%s)\n", r.Name, r.Pos)
	if r.Err != nil {
		fmt.Fprintf(w, "    the run failed: %s\n", indentRest(r.Err.Error(), "    "))
		return
	}
	for _, s := range r.Sinks {
		if s.Passed() {
			continue
		}
		mode := s.Mode.String() + " mode"
		if s.Mode == connector.Upsert {
			mode += ", key [" + strings.Join(s.Key, ", ") + "]"
		}
		if s.Changes != nil && !s.Changes.Equal() {
			order := "in order"
			if !s.Changes.Ordered {
				order = "in any order"
			}
			fmt.Fprintf(w, "    sink %s (%s): changes differ (%s; want: expected, not received; got: received, not expected)\n", s.Sink, mode, order)
			writeDiff(w, s.Columns, s.Changes, true)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "    sink %s: %s\n", s.Sink, n)
		}
		if s.Final != nil && !s.Final.Equal() {
			fmt.Fprintf(w, "    sink %s (%s): final table differs (in any order; want: expected, not there; got: there, not expected)\n", s.Sink, mode)
			writeDiff(w, s.Columns, s.Final, false)
		}
	}
	for _, d := range r.DeadLetters {
		if d.Passed() {
			continue
		}
		fmt.Fprintf(w, "    source %s: dead letters differ (in any order; want: expected, not set aside; got: set aside, not expected)\n", d.Source)
		writeDiff(w, []string{"record", "error"}, d.Diff, false)
	}
}

// writeDiff prints a diff as a table whose columns line up: the mark,
// the kind (for changes), then one column per sink column.
func writeDiff(w io.Writer, columns []string, d *Diff, kinds bool) {
	header := []string{""}
	if kinds {
		header = append(header, "kind")
	}
	header = append(header, columns...)
	rows := [][]string{header}
	for _, e := range d.Entries {
		r := []string{e.Mark.String()}
		if kinds {
			r = append(r, e.Kind.String())
		}
		rows = append(rows, append(r, e.Values...))
	}
	if len(d.Entries) == 0 {
		rows = append(rows, []string{"(none)"})
	}
	widths := make([]int, len(header))
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], len(c))
			}
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString("      ")
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			fmt.Fprintf(&b, "%-*s  ", widths[i], c)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func indentRest(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}
