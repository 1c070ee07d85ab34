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
	next := 0
	var colErr error
	end, err := walkObject(s, i, func(key string, _, v int) (int, error) {
		col := c.column(key, next)
		if col < 0 {
			return skipValue(s, v, 1)
		}
		next = col + 1
		val, end, err := c.decodeValue(s, v, col)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				colErr = err
			}
			return end, err
		}
		if f := &c.schema.Fields[col]; f.Type.NotNull && val.IsNull() {
			colErr = fmt.Errorf("null, but the column is %s", f.Type)
			return end, colErr
		}
		r[col] = val
		return end, nil
	})
	if err != nil {
		if colErr != nil {
			return end, &connector.DecodeError{Column: c.schema.Fields[next-1].Name, Err: colErr}
		}
		return end, &connector.DecodeError{Err: err}
	}
	return end, nil
}
