package connector

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// CheckTableInput is what a database table sink (mysql, postgres) takes
// of its input: append or upsert, at least one column, no column of type
// NULL, and a key for upsert unless the sink may replace the whole table
// (replace_table). who names the sink in the errors, e.g.
// `sink "out" (postgres table t)`.
func CheckTableInput(in SinkInput, who string, replace bool) error {
	switch in.Mode {
	case Append, Upsert:
	default:
		return fmt.Errorf("%s: cannot run in %s mode: a table takes append or upsert", who, in.Mode)
	}
	if in.Schema.Len() == 0 {
		return fmt.Errorf("%s: the input has no columns", who)
	}
	for _, f := range in.Schema.Fields {
		if f.Type.ID == row.Null {
			return fmt.Errorf("%s: column %s has type NULL, which no table column has; CAST it in the query", who, f.Name)
		}
	}
	if in.Mode == Upsert && len(in.Key) == 0 && !replace {
		return Errorf("replace_table", "%s: the input is an upsert stream with no key (one row, as a global aggregate gives), which the sink can only keep exact by deleting every row of the table before it writes that row; set replace_table: true if the table holds nothing else, or give the query a key (GROUP BY a column)", who)
	}
	return nil
}
