package json

import (
	"fmt"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// DecodeMembers reads the JSON object at s[i] into r as DecodeObject
// does, except that it sets only the columns the object has a member for:
// the others keep the values r held. Canal's and Maxwell's "old" holds
// only the columns an update changed; the row before the update is the
// row after it with those members put back.
func (c *Codec) DecodeMembers(s string, i int, r row.Row) (int, error) {
	i = SkipSpace(s, i)
	if i >= len(s) || s[i] != '{' {
		return i, &connector.DecodeError{Err: syntaxErr(s, i, "expected a JSON object, got %s", describe(s, i))}
	}
	return c.readMembers(s, i, func(col int, val row.Value) error {
		if f := &c.schema.Fields[col]; f.Type.NotNull && val.IsNull() {
			return fmt.Errorf("null, but the column is %s", f.Type)
		}
		r[col] = val
		return nil
	})
}
