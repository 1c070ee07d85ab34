package aggop

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// argCheck is one test Check makes of a row: the argument of aggregate
// agg (its type), or with filter its FILTER column (a BOOLEAN or NULL).
type argCheck struct {
	agg    int
	filter bool
}

// layChecks lists the aggregates' tests in Check's order, each argument
// and then each FILTER, leaving out a test an earlier one makes already:
// the same column against the same type (and the same test of a wide
// DECIMAL), or the same FILTER column. Aggregates over one column with
// FILTERs (COUNT(DISTINCT bidder) FILTER (WHERE ...), three times) test
// the column and each filter once a row, not once per aggregate. A test
// left out could only fail where the earlier one failed first, so the
// first failure, the one reported, is the same.
func (s *Store) layChecks() {
	type argKey struct {
		col       int
		id        row.TypeID
		scale     int
		wideCheck bool
	}
	args, filters := map[argKey]bool{}, map[int]bool{}
	s.checks = s.checks[:0]
	for i := range s.Aggs {
		a := &s.Aggs[i]
		if a.kind != accRows {
			k := argKey{a.call.Arg, a.call.ArgType.ID, a.call.ArgType.Scale, a.kind == accWord}
			if !args[k] {
				args[k] = true
				s.checks = append(s.checks, argCheck{agg: i})
			}
		}
		if a.call.HasFilter && !filters[a.call.Filter] {
			filters[a.call.Filter] = true
			s.checks = append(s.checks, argCheck{agg: i, filter: true})
		}
	}
}

// Check reports an argument value of the wrong type, before update
// changes anything.
func (s *Store) Check(r row.Row) error {
	if s.userErr != nil {
		return s.userErr
	}
	for _, c := range s.checks {
		a := &s.Aggs[c.agg]
		if !c.filter {
			if err := a.checkArg(r[a.call.Arg]); err != nil {
				return err
			}
			continue
		}
		if v := r[a.call.Filter]; !v.IsNull() && v.Type() != row.Boolean {
			return fmt.Errorf("%s: filter value %s has type %s, want BOOLEAN", a.call, v, v.Type())
		}
	}
	return nil
}
