package expr

import (
	"errors"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// PRINTF(format, args...) of Flink 2.3: java.util.Formatter's
// String.format in Locale.US (printf.go) over the arguments as Flink's
// code holds them: a DECIMAL prints as its digits, a TIMESTAMP as
// Java's LocalDateTime (2024-01-02T03:04:05.678), a DATE as its number
// of days since 1970 (an Integer). A format Java refuses, or an
// argument a conversion does not take (%d of a STRING), makes the
// result NULL, as Flink catches the error; a NULL format is NULL. ARRAY,
// MAP, ROW, BYTES and TIME arguments are refused: Flink prints their
// Java objects' identities.

func init() {
	register(map[string]*funcDef{
		"PRINTF": {min: 1, max: -1, build: buildPrintf},
	})
}

// jargOf converts v of type t as PRINTF's Java code sees it.
func jargOf(v row.Value, t row.Type) jarg {
	if v.IsNull() {
		return jarg{kind: jNull}
	}
	switch t.ID {
	case row.Boolean:
		s := "false"
		if v.Bool() {
			s = "true"
		}
		return jarg{kind: jBool, s: s}
	case row.Int:
		return jarg{kind: jInt, i: v.Int64(), bits: t.IntBits()}
	case row.BigInt:
		return jarg{kind: jInt, i: v.Int64(), bits: 64}
	case row.Float:
		return jarg{kind: jFloat, f: v.Float64()}
	case row.Double:
		return jarg{kind: jDouble, f: v.Float64()}
	case row.Date:
		return jarg{kind: jInt, i: int64(v.Days()), bits: 32}
	case row.Decimal:
		return jarg{kind: jOther, s: string(row.AppendText(nil, v, t))}
	case row.Timestamp, row.TimestampLTZ:
		// Flink's TimestampData prints as a LocalDateTime, also for
		// TIMESTAMP_LTZ.
		return jarg{kind: jOther, s: row.TimestampValue(v.Micros()).String()}
	}
	return jarg{kind: jString, s: v.Str()}
}

func printfArgType(t row.Type) bool {
	switch t.ID {
	case row.Null, row.Boolean, row.Int, row.BigInt, row.Float, row.Double, row.Date, row.Decimal,
		row.Timestamp, row.TimestampLTZ, row.String:
		return true
	}
	return false
}

// buildPrintf is PRINTF(format, args...): STRING, nullable.
func buildPrintf(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy, 0); err != nil {
		return nil, err
	}
	for i := 1; i < len(args); i++ {
		if !printfArgType(args[i].t) {
			return nil, argError(e, i, args, "a number, BOOLEAN, STRING, DATE, TIMESTAMP or DECIMAL (Flink prints other values as Java object identities)")
		}
	}
	if f := args[0]; f.konst && !f.val.IsNull() {
		// A conversion etld does not do is refused here, not NULL.
		if _, err := javaFormat(f.val.Str(), make([]jarg, len(args)-1)); errors.Is(err, errUnsupported) {
			return nil, errAt(f.e.Pos(), "PRINTF: %v", err)
		}
	}
	types := make([]row.Type, len(args))
	evs := make([]evalFn, len(args))
	for i, a := range args {
		types[i], evs[i] = a.t, a.eval
	}
	text := exprString(e)
	f := func(r row.Row) (row.Value, error) {
		fv, err := evs[0](r)
		if err != nil || fv.IsNull() {
			return row.NullValue, err
		}
		ja := make([]jarg, len(args)-1)
		for i := 1; i < len(args); i++ {
			v, err := evs[i](r)
			if err != nil {
				return row.NullValue, err
			}
			ja[i-1] = jargOf(v, types[i])
		}
		out, err := javaFormat(fv.Str(), ja)
		switch {
		case errors.Is(err, errUnsupported):
			return row.NullValue, evalErr(text, err)
		case err != nil:
			return row.NullValue, nil
		}
		return row.StringValue(out), nil
	}
	return c.finish(e, row.Type{ID: row.String}, f, args...)
}
