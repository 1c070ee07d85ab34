package runtime

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/row"
)

// schemaChange decides what an operator does with saved state of schema
// old (a Fingerprint: its plan, then its input and output columns) now
// that its schema is new: Migrate when only column types widened in ways
// that leave every saved value as it is, or that change only the values'
// type tags (INT to BIGINT, FLOAT to DOUBLE: widen, the retagging the
// operator's restore must apply, when it can, operator.Widener), else
// Refuse, saying what changed. change, for Migrate, sums the widenings
// up by type ("INT -> BIGINT on column v"). An operator that retags by
// input column (canWidenCols, operator.ColumnWidener) migrates too when
// a column of a type others widen from stays: widenCols is then its
// retagging per input column (a join's: the left's, then the right's),
// nil when no such column stays (the retag by type is then exact).
func schemaChange(old, new string, canWiden, canWidenCols bool) (action Action, why string, widen map[row.TypeID]row.TypeID, widenCols []row.TypeID, change string) {
	oldPlan, oldCols := splitFingerprint(old)
	newPlan, newCols := splitFingerprint(new)
	if oldPlan != newPlan {
		return Refuse, fmt.Sprintf("the operator itself changed: was %s, now %s", oldPlan, newPlan), nil, nil, ""
	}
	if len(oldCols) != len(newCols) {
		return Refuse, fmt.Sprintf("its columns changed: was %s, now %s", old, new), nil, nil, ""
	}
	var widened []string
	var sum changeSum
	var inCols []row.TypeID // per input column: its retag
	// Where each input's columns are in inCols: one input's, or a
	// join's left then right.
	offset, width := map[string]int{}, 0
	for _, c := range newCols {
		if c.name == "input" || c.name == "left" || c.name == "right" {
			offset[c.name] = width
			width += len(splitColumns(c.cols))
		}
	}
	for i := range oldCols {
		if oldCols[i].name != newCols[i].name {
			return Refuse, fmt.Sprintf("its columns changed: was %s, now %s", old, new), nil, nil, ""
		}
		o, n := splitColumns(oldCols[i].cols), splitColumns(newCols[i].cols)
		if len(o) != len(n) {
			return Refuse, fmt.Sprintf("its %s columns changed: was %s, now %s", oldCols[i].name, oldCols[i].cols, newCols[i].cols), nil, nil, ""
		}
		for j := range o {
			if o[j] == n[j] {
				continue
			}
			on, ot, _ := strings.Cut(o[j], " ")
			nn, nt, _ := strings.Cut(n[j], " ")
			if on != nn {
				return Refuse, fmt.Sprintf("its %s column %s is now %s", oldCols[i].name, on, nn), nil, nil, ""
			}
			from, to, why := widens(ot, nt)
			if why == "" && from != to && !canWiden {
				why = "its saved values would need their type tag changed from " + from.String() + " to " + to.String() + ", which this operator's restore does not do"
			}
			if why != "" {
				return Refuse, fmt.Sprintf("its %s column %s changed from %s to %s: %s", oldCols[i].name, on, ot, nt, why), nil, nil, ""
			}
			if from != to {
				if widen == nil {
					widen = map[row.TypeID]row.TypeID{}
				}
				widen[from] = to
				if off, ok := offset[oldCols[i].name]; ok {
					if inCols == nil {
						inCols = make([]row.TypeID, width)
					}
					inCols[off+j] = to
				}
			}
			widened = append(widened, fmt.Sprintf("%s %s %s -> %s", oldCols[i].name, on, ot, nt))
			sum.add(ot, nt, on)
		}
	}
	// A retag by type applies to every saved value of the type: no
	// column of it may stay, unless the operator retags by input column
	// (all of its saved values are of its input columns). A set
	// operation's $side, the input a row came from, is no saved value:
	// its state keeps a count per side.
	stays := ""
	for _, c := range newCols {
		for _, col := range splitColumns(c.cols) {
			name, t, _ := strings.Cut(col, " ")
			if name == "$side" && strings.HasPrefix(newPlan, "SetOp(") {
				continue
			}
			if id, ok := family(strings.TrimSuffix(t, " NOT NULL")); ok && widen[id] != 0 && stays == "" {
				stays = fmt.Sprintf("its %s column %s stays %s while others widen from it to %s: the saved values of both read alike, so they cannot be told apart", c.name, name, t, widen[id])
			}
		}
	}
	if stays != "" && !(canWidenCols && inCols != nil) {
		return Refuse, stays, nil, nil, ""
	}
	why = "widened, the saved values and keys retagged: "
	if widen == nil {
		why = "widened, the saved values read as they are: "
	}
	if stays == "" {
		// The retag by type then widens exactly the widened columns'
		// values.
		inCols = nil
	}
	return Migrate, why + strings.Join(widened, ", "), widen, inCols, sum.String()
}

// changeSum sums widened columns up by their change of type, in the
// order first met: "INT -> BIGINT on column v, FLOAT -> DOUBLE on
// columns f, m". A column of the same name in the input and the output
// counts once.
type changeSum struct {
	kinds []string
	cols  map[string][]string
}

func (c *changeSum) add(from, to, col string) {
	from = strings.TrimSuffix(from, " NOT NULL")
	k := from + " -> " + to
	if c.cols == nil {
		c.cols = map[string][]string{}
	}
	if _, ok := c.cols[k]; !ok {
		c.kinds = append(c.kinds, k)
	}
	if !slices.Contains(c.cols[k], col) {
		c.cols[k] = append(c.cols[k], col)
	}
}

func (c *changeSum) String() string {
	var parts []string
	for _, k := range c.kinds {
		cols := c.cols[k]
		word := "column"
		if len(cols) > 1 {
			word = "columns"
		}
		parts = append(parts, fmt.Sprintf("%s on %s %s", k, word, strings.Join(cols, ", ")))
	}
	return strings.Join(parts, ", ")
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

// widens returns why a value saved under type o does not read as the
// same value under type n, "" when it does: from == to when as it is,
// else after its type tag goes from from to to. The saved encoding
// carries the value's type family (INT, BIGINT, DOUBLE, ...) and, for
// DECIMAL, its scale: a change within the family that keeps the scale
// reads as it is; INT to BIGINT and FLOAT to DOUBLE keep the payload
// and change the tag.
func widens(o, n string) (from, to row.TypeID, why string) {
	o = strings.TrimSuffix(o, " NOT NULL")
	if strings.HasSuffix(n, " NOT NULL") {
		return 0, 0, "NOT NULL was added: saved state may hold NULLs"
	}
	if o == n {
		return 0, 0, ""
	}
	intRank := map[string]int{"TINYINT": 1, "SMALLINT": 2, "INT": 3}
	if ro, ok := intRank[o]; ok {
		if rn, ok := intRank[n]; ok && rn >= ro {
			return 0, 0, ""
		}
		if n == "BIGINT" {
			return row.Int, row.BigInt, ""
		}
	}
	if o == "FLOAT" && n == "DOUBLE" {
		return row.Float, row.Double, ""
	}
	if ob, op, ok := typeArgs(o); ok {
		nb, np, ok := typeArgs(n)
		switch {
		case ob == "VARCHAR" && n == "STRING":
			return 0, 0, ""
		case !ok || ob != nb:
		case ob == "DECIMAL" && len(op) == 2 && len(np) == 2:
			if op[1] != np[1] {
				return 0, 0, "the scale changed, and the saved values keep theirs"
			}
			if np[0] >= op[0] {
				return 0, 0, ""
			}
		case len(op) == 1 && len(np) == 1 && np[0] >= op[0]:
			return 0, 0, "" // VARCHAR(n), TIMESTAMP(p), TIMESTAMP_LTZ(p), TIME(p)
		}
	}
	return 0, 0, "only widenings migrate in place (TINYINT, SMALLINT or INT to a wider integer, FLOAT to DOUBLE, DECIMAL precision up at the same scale, VARCHAR longer, TIMESTAMP precision up, NOT NULL dropped); this one would change the saved values, which is not supported"
}

// family is the type tag the saved values of a column of type t carry,
// for the types a widening retags.
func family(t string) (row.TypeID, bool) {
	switch t {
	case "TINYINT", "SMALLINT", "INT":
		return row.Int, true
	case "FLOAT":
		return row.Float, true
	}
	return 0, false
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
