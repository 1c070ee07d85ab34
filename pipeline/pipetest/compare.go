package pipetest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// expectation is what one sink must receive, as text in the sink's
// column types: a value written 20.50 for a DOUBLE is the 20.5 the sink
// gets, a timestamp is compared as the instant it names.
type expectation struct {
	sink                 string
	pos                  spec.Pos
	schema               row.Schema
	mode                 connector.Mode
	key                  []int
	changes              []line
	final                []line
	hasChanges, hasFinal bool
	ordered              bool
}

// line is a change (or a final row, kind +I) as compared and shown.
type line struct {
	kind   row.Kind
	values []string
}

func (l line) id() string { return l.kind.String() + "\x00" + strings.Join(l.values, "\x00") }

func prepareExpect(e *spec.TestExpect, sk *plan.Sink, errs *spec.List) *expectation {
	schema := sk.Input.Root.Schema
	out := &expectation{
		sink: e.Sink, pos: e.Pos, schema: schema, mode: sk.Mode, key: sk.Key,
		hasChanges: e.HasChanges, hasFinal: e.HasFinal, ordered: e.Ordered,
	}
	what := fmt.Sprintf("the input of sink %s", e.Sink)
	for _, r := range e.Changes {
		if vals, ok := rowValues(r, schema, true, what, errs); ok {
			out.changes = append(out.changes, lineOf(r.Kind, vals, schema))
		}
		if sk.Mode == connector.Upsert && r.Kind == row.UpdateBefore {
			errs.Addf(r.Pos, r.Path, "sink %s runs in upsert mode, which never receives -U (key %s): leave the -U changes out", e.Sink, keyText(sk))
		}
		if sk.Mode == connector.Append && r.Kind != row.Insert {
			errs.Addf(r.Pos, r.Path, "sink %s runs in append mode and receives only +I, not %s", e.Sink, r.Kind)
		}
	}
	for _, r := range e.Final {
		if vals, ok := rowValues(r, schema, true, what, errs); ok {
			out.final = append(out.final, lineOf(row.Insert, vals, schema))
		}
	}
	return out
}

func keyText(sk *plan.Sink) string {
	names := make([]string, len(sk.Key))
	for i, k := range sk.Key {
		names[i] = sk.Input.Root.Schema.Fields[k].Name
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func lineOf(k row.Kind, r row.Row, schema row.Schema) line {
	l := line{kind: k, values: make([]string, len(r))}
	for i, v := range r {
		l.values[i] = show(v, schema.Fields[i].Type)
	}
	return l
}

// show renders a value for the diff: NULL as null; a string quoted when
// it could be mistaken (empty, blanks at its ends, "null").
func show(v row.Value, t row.Type) string {
	if v.IsNull() {
		return "null"
	}
	s := v.Text(t)
	if t.ID == row.String || t.ID == row.Bytes {
		if s == "" || s == "null" || strings.TrimSpace(s) != s || strings.ContainsAny(s, "\"\n\t") {
			return strconv.Quote(s)
		}
	}
	return s
}

// SinkResult is the comparison at one sink.
type SinkResult struct {
	Sink string
	Mode connector.Mode
	// Key names the upsert key (upsert mode).
	Key     []string
	Columns []string
	// Changes and Final are the diffs; nil when the test expects none.
	Changes, Final *Diff
	// Notes are anomalies that fail the test on their own: a -D of a row
	// the sink does not hold.
	Notes []string
}

// Passed reports whether the sink got what was expected.
func (s SinkResult) Passed() bool {
	return len(s.Notes) == 0 && (s.Changes == nil || s.Changes.Equal()) && (s.Final == nil || s.Final.Equal())
}

// Diff compares expected and actual rows: each entry is in both (Same),
// expected only (Want) or actual only (Got).
type Diff struct {
	Ordered bool
	Entries []Entry
}

// Entry is one line of a diff.
type Entry struct {
	Mark   Mark
	Kind   row.Kind
	Values []string
}

// Mark says where a diff line is.
type Mark uint8

const (
	Same Mark = iota // expected and received
	Want             // expected, not received
	Got              // received, not expected
)

func (m Mark) String() string { return [...]string{"ok", "want", "got"}[m] }

// Equal reports whether the diff has no Want or Got line.
func (d *Diff) Equal() bool {
	for _, e := range d.Entries {
		if e.Mark != Same {
			return false
		}
	}
	return true
}

func (e *expectation) compare(sink *memSink) SinkResult {
	res := SinkResult{Sink: e.sink, Mode: e.mode, Columns: e.schema.Names()}
	for _, k := range e.key {
		res.Key = append(res.Key, e.schema.Fields[k].Name)
	}
	var got []line
	for _, c := range sink.changes {
		got = append(got, lineOf(c.Kind, c.Row, e.schema))
	}
	if e.hasChanges {
		if e.ordered {
			res.Changes = orderedDiff(e.changes, got)
		} else {
			res.Changes = unorderedDiff(e.changes, got)
		}
	}
	if e.hasFinal {
		table, notes := e.fold(sink.changes)
		res.Notes = notes
		res.Final = unorderedDiff(e.final, table)
	}
	return res
}

// fold applies the changes as the sink's target would: an upsert sink
// keeps the last row of each key and deletes on -D; the others keep a
// multiset of rows, which +I and +U add to and -U and -D take from.
func (e *expectation) fold(changes []row.Change) ([]line, []string) {
	var notes []string
	if e.mode == connector.Upsert {
		var order []string
		byKey := map[string]row.Row{}
		for _, c := range changes {
			k := string(row.KeyOf(nil, c.Row, e.key))
			if c.Kind.IsAdd() {
				if _, ok := byKey[k]; !ok {
					order = append(order, k)
				}
				byKey[k] = c.Row
				continue
			}
			if _, ok := byKey[k]; !ok {
				notes = append(notes, fmt.Sprintf("%s of a key the sink does not hold: %s", c.Kind, c.Row))
			}
			delete(byKey, k)
		}
		var out []line
		for _, k := range order {
			if r, ok := byKey[k]; ok {
				out = append(out, lineOf(row.Insert, r, e.schema))
			}
		}
		return out, notes
	}
	var rows []line
	for _, c := range changes {
		l := lineOf(row.Insert, c.Row, e.schema)
		if c.Kind.IsAdd() {
			rows = append(rows, l)
			continue
		}
		found := false
		for i := range rows {
			if rows[i].id() == l.id() {
				rows = append(rows[:i], rows[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			notes = append(notes, fmt.Sprintf("%s of a row the sink does not hold: %s", c.Kind, c.Row))
		}
	}
	return rows, notes
}

// orderedDiff is the shortest edit script from want to got (a longest
// common subsequence), as a line diff shows it.
func orderedDiff(want, got []line) *Diff {
	n, m := len(want), len(got)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i].id() == got[j].id() {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	d := &Diff{Ordered: true}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && want[i].id() == got[j].id():
			d.add(Same, want[i])
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			// What was expected first, then what came instead.
			d.add(Want, want[i])
			i++
		default:
			d.add(Got, got[j])
			j++
		}
	}
	return d
}

// unorderedDiff compares want and got as multisets, shown sorted.
func unorderedDiff(want, got []line) *Diff {
	left := map[string]int{}
	for _, l := range got {
		left[l.id()]++
	}
	d := &Diff{}
	for _, l := range want {
		if left[l.id()] > 0 {
			left[l.id()]--
			d.add(Same, l)
		} else {
			d.add(Want, l)
		}
	}
	matched := map[string]int{}
	for _, l := range want {
		matched[l.id()]++
	}
	for _, l := range got {
		if matched[l.id()] > 0 {
			matched[l.id()]--
			continue
		}
		d.add(Got, l)
	}
	sortEntries(d.Entries)
	return d
}

// sortEntries sorts the lines of a diff compared in any order by their
// values, then kinds; lines that are equal keep their order.
func sortEntries(es []Entry) {
	sort.SliceStable(es, func(a, b int) bool {
		x, y := es[a], es[b]
		if c := compareValues(x.Values, y.Values); c != 0 {
			return c < 0
		}
		return x.Kind < y.Kind
	})
}

func compareValues(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			// Numbers sort as numbers, the rest as text.
			x, xerr := strconv.ParseFloat(a[i], 64)
			y, yerr := strconv.ParseFloat(b[i], 64)
			if xerr == nil && yerr == nil && x != y {
				if x < y {
					return -1
				}
				return 1
			}
			return strings.Compare(a[i], b[i])
		}
	}
	return len(a) - len(b)
}

func (d *Diff) add(m Mark, l line) {
	d.Entries = append(d.Entries, Entry{Mark: m, Kind: l.kind, Values: l.values})
}
