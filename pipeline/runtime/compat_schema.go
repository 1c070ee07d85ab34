package runtime

import (
	"fmt"
	"strconv"
	"strings"
)

// schemaChange decides what an operator does with saved state of schema
// old (a Fingerprint: its plan, then its input and output columns) now
// that its schema is new: Migrate when only column types widened in ways
// that leave every saved value as it is, else Refuse, saying what changed.
func schemaChange(old, new string) (Action, string) {
	oldPlan, oldCols := splitFingerprint(old)
	newPlan, newCols := splitFingerprint(new)
	if oldPlan != newPlan {
		return Refuse, fmt.Sprintf("the operator itself changed: was %s, now %s", oldPlan, newPlan)
	}
	if len(oldCols) != len(newCols) {
		return Refuse, fmt.Sprintf("its columns changed: was %s, now %s", old, new)
	}
	var widened []string
	for i := range oldCols {
		if oldCols[i].name != newCols[i].name {
			return Refuse, fmt.Sprintf("its columns changed: was %s, now %s", old, new)
		}
		o, n := splitColumns(oldCols[i].cols), splitColumns(newCols[i].cols)
		if len(o) != len(n) {
			return Refuse, fmt.Sprintf("its %s columns changed: was %s, now %s", oldCols[i].name, oldCols[i].cols, newCols[i].cols)
		}
		for j := range o {
			if o[j] == n[j] {
				continue
			}
			on, ot, _ := strings.Cut(o[j], " ")
			nn, nt, _ := strings.Cut(n[j], " ")
			if on != nn {
				return Refuse, fmt.Sprintf("its %s column %s is now %s", oldCols[i].name, on, nn)
			}
			if why := widens(ot, nt); why != "" {
				return Refuse, fmt.Sprintf("its %s column %s changed from %s to %s: %s", oldCols[i].name, on, ot, nt, why)
			}
			widened = append(widened, fmt.Sprintf("%s %s %s -> %s", oldCols[i].name, on, ot, nt))
		}
	}
	return Migrate, "widened, the saved values read as they are: " + strings.Join(widened, ", ")
}

// columns is one named column list of a fingerprint: "input (a INT)".
type columns struct{ name, cols string }

// splitFingerprint cuts a fingerprint into its plan and its column lists
// (input, or left and right; then output), read from the end: the plan
// text may hold anything.
func splitFingerprint(fp string) (string, []columns) {
	var cols []columns
	rest := fp
	for _, name := range []string{"output", "right", "left", "input"} {
		i := strings.LastIndex(rest, ", "+name+" (")
		if i < 0 {
			continue
		}
		cols = append([]columns{{name, rest[i+len(name)+3:]}}, cols...)
		rest = rest[:i]
	}
	return rest, cols
}

// splitColumns splits "(a INT, b DECIMAL(10, 2))" into its columns.
func splitColumns(list string) []string {
	list = strings.TrimSuffix(strings.TrimPrefix(list, "("), ")")
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(list); i++ {
		switch list[i] {
		case '(', '<', '[':
			depth++
		case ')', '>', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(list[start:i]))
				start = i + 1
			}
		}
	}
	if s := strings.TrimSpace(list[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// widens returns "" when a value saved under type o reads as the same
// value under type n, else why not. The saved encoding carries the
// value's type family (INT, BIGINT, DOUBLE, ...) and, for DECIMAL, its
// scale: a change within the family that keeps the scale is a widening,
// one across families (INT to BIGINT, FLOAT to DOUBLE) rewrites every
// saved value and key, which is not supported yet.
func widens(o, n string) string {
	o = strings.TrimSuffix(o, " NOT NULL")
	if strings.HasSuffix(n, " NOT NULL") {
		return "NOT NULL was added: saved state may hold NULLs"
	}
	if o == n {
		return ""
	}
	intRank := map[string]int{"TINYINT": 1, "SMALLINT": 2, "INT": 3}
	if ro, ok := intRank[o]; ok {
		if rn, ok := intRank[n]; ok && rn >= ro {
			return ""
		}
	}
	if ob, op, ok := typeArgs(o); ok {
		nb, np, ok := typeArgs(n)
		switch {
		case ob == "VARCHAR" && n == "STRING":
			return ""
		case !ok || ob != nb:
		case ob == "DECIMAL" && len(op) == 2 && len(np) == 2:
			if op[1] != np[1] {
				return "the scale changed, and the saved values keep theirs"
			}
			if np[0] >= op[0] {
				return ""
			}
		case len(op) == 1 && len(np) == 1 && np[0] >= op[0]:
			return "" // VARCHAR(n), TIMESTAMP(p), TIMESTAMP_LTZ(p), TIME(p)
		}
	}
	return "only widenings that keep the saved values as they are migrate in place (TINYINT or SMALLINT to INT, DECIMAL precision up at the same scale, VARCHAR longer, TIMESTAMP precision up, NOT NULL dropped); this one would rewrite every saved value, which is not supported yet"
}

// typeArgs splits "DECIMAL(10, 2)" into DECIMAL and [10 2].
func typeArgs(t string) (string, []int, bool) {
	base, args, ok := strings.Cut(t, "(")
	if !ok || !strings.HasSuffix(args, ")") {
		return t, nil, false
	}
	var out []int
	for _, a := range strings.Split(strings.TrimSuffix(args, ")"), ",") {
		v, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil {
			return t, nil, false
		}
		out = append(out, v)
	}
	return base, out, true
}
