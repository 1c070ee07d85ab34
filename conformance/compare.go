package conformance

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/row"
)

// doubleDigits is the significant digits DOUBLE values are compared at:
// summation order is not semantics, so the last bits may differ.
const doubleDigits = 12

// Changelog is a printed changelog folded into its final table.
type Changelog struct {
	// Final is the final table's rows (without kinds), sorted.
	Final []string
	// Kinds are the row kinds that occur, in +I -U +U -D order.
	Kinds []string
	// Problems are retractions of rows that were not there.
	Problems []string
}

// ChangeLines splits printed changes (+I[...], -U[...], ...): a line that
// does not start with a row kind continues the change before it (a
// STRING holding a line break prints on two lines). Lines before the
// first change are dropped.
func ChangeLines(text string) []string {
	var out []string
	for _, l := range splitLines(text) {
		switch {
		case len(l) >= 3 && l[2] == '[' && isKind(l[:2]):
			out = append(out, l)
		case len(out) > 0:
			out[len(out)-1] += "\n" + l
		}
	}
	return out
}

func isKind(k string) bool {
	switch k {
	case "+I", "-U", "+U", "-D":
		return true
	}
	return false
}

func isChange(l string) bool {
	return len(l) >= 4 && l[len(l)-1] == ']' && l[2] == '[' && isKind(l[:2])
}

// Fold folds printed changes into the final table. schema, when it has
// as many columns as a row shows, says which columns are DOUBLE (compared
// at doubleDigits).
func Fold(lines []string, schema row.Schema) Changelog {
	var c Changelog
	count := map[string]int{}
	kinds := map[string]bool{}
	for _, l := range lines {
		if !isChange(l) {
			c.Problems = append(c.Problems, fmt.Sprintf("not a change: %q", l))
			continue
		}
		kind, body := l[:2], normalise(l[3:len(l)-1], schema)
		kinds[kind] = true
		switch kind {
		case "+I", "+U":
			count[body]++
		default:
			if count[body] == 0 {
				c.Problems = append(c.Problems, fmt.Sprintf("%s of a row that is not there: %s", kind, l))
				continue
			}
			count[body]--
		}
	}
	for body, n := range count {
		for range n {
			c.Final = append(c.Final, "["+body+"]")
		}
	}
	sort.Strings(c.Final)
	for _, k := range []string{"+I", "-U", "+U", "-D"} {
		if kinds[k] {
			c.Kinds = append(c.Kinds, k)
		}
	}
	return c
}

// normalise rounds the DOUBLE fields of a printed row to doubleDigits.
// A row whose ", "-split does not match the schema (a string holding ", ")
// is left as it is.
func normalise(body string, schema row.Schema) string {
	hasDouble := false
	for _, f := range schema.Fields {
		if f.Type.ID == row.Double {
			hasDouble = true
		}
	}
	if !hasDouble {
		return body
	}
	fields := strings.Split(body, ", ")
	if len(fields) != len(schema.Fields) {
		return body
	}
	for i, f := range schema.Fields {
		if f.Type.ID != row.Double {
			continue
		}
		if v, err := strconv.ParseFloat(fields[i], 64); err == nil && fields[i] != "NaN" && !strings.Contains(fields[i], "Infinity") {
			fields[i] = strconv.FormatFloat(v, 'g', doubleDigits, 64)
		}
	}
	return strings.Join(fields, ", ")
}

// Verdict is the comparison of etld's outcome with an expected one.
type Verdict struct {
	Same bool
	// Why says what differs, for the test's message.
	Why string
}

// Expected is a recorded result: changelog lines (or a file sink's
// lines), or an error.
type Expected struct {
	Lines []string
	// Err is the recorded error text; Failed says there was one.
	Err    string
	Failed bool
}

// Compare compares etld's outcome with an expected result. For a print
// case the folded final tables and the row kinds must match; for a
// `sink:` case the output lines in any order; a failure matches a
// failure (a refusal at load or an error in the run: both refuse the
// query or the data). errMatch, if set, is a text etld's error must hold.
func Compare(want Expected, got Outcome, sinkCase bool, errMatch string) Verdict {
	gotErr := got.Err()
	switch {
	case want.Failed && gotErr != nil:
		if errMatch != "" && !strings.Contains(gotErr.Error(), errMatch) {
			return Verdict{Why: fmt.Sprintf("etld failed, but not with %q: %v", errMatch, gotErr)}
		}
		return Verdict{Same: true}
	case want.Failed:
		return Verdict{Why: fmt.Sprintf("expected a failure (%s), etld gave %d lines", firstLine(want.Err), len(got.Lines))}
	case gotErr != nil:
		return Verdict{Why: fmt.Sprintf("etld failed: %v", gotErr)}
	}
	if sinkCase {
		w, g := append([]string(nil), want.Lines...), append([]string(nil), got.Lines...)
		sort.Strings(w)
		sort.Strings(g)
		if d := diffLines(w, g); d != "" {
			return Verdict{Why: "output differs (sorted):\n" + d}
		}
		return Verdict{Same: true}
	}
	wf, gf := Fold(want.Lines, got.Schema), Fold(got.Lines, got.Schema)
	var why []string
	if len(gf.Problems) > 0 {
		why = append(why, "etld's changelog: "+strings.Join(gf.Problems, "; "))
	}
	if d := diffLines(wf.Final, gf.Final); d != "" {
		why = append(why, "final table differs (sorted):\n"+d)
	}
	if strings.Join(wf.Kinds, " ") != strings.Join(gf.Kinds, " ") {
		why = append(why, fmt.Sprintf("row kinds differ: want %v, got %v", wf.Kinds, gf.Kinds))
	}
	if len(why) > 0 {
		return Verdict{Why: strings.Join(why, "\n")}
	}
	return Verdict{Same: true}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// diffLines shows the lines only in want (-) and only in got (+) of two
// sorted lists; "" when they are equal.
func diffLines(want, got []string) string {
	var b strings.Builder
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j >= len(got) || (i < len(want) && want[i] < got[j]):
			fmt.Fprintf(&b, "  - %s\n", want[i])
			i++
		case i >= len(want) || got[j] < want[i]:
			fmt.Fprintf(&b, "  + %s\n", got[j])
			j++
		default:
			i++
			j++
		}
	}
	return b.String()
}
