package aggop

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/etld/etld/pipeline/row"
)

// ARRAY_AGG, JSON_ARRAYAGG and JSON_OBJECTAGG, as Flink 2.3's
// ArrayAggFunction, JsonArrayAggFunction and JsonObjectAggFunction keep
// them.
//
// ARRAY_AGG(x) keeps its values in arrival order (NULLs too unless
// IGNORE NULLS). A retraction removes the earliest equal value; one that
// finds none is kept aside in a retract list, which only a merge (window
// slices) reads: the merged lists are concatenated, then each value kept
// aside removes its earliest equal one. Its result is the ARRAY, NULL for
// no values.
//
// JSON_ARRAYAGG(x) is a value list (accList) of the items' JSON texts:
// the planner projects JSON_STRING(x), and 'null' for a NULL under NULL
// ON NULL, so the list holds text only; its result is the JSON array.
//
// JSON_OBJECTAGG(KEY k VALUE v) reads a ROW(k, the key's JSON text, v's
// JSON text) the planner projects. Its state is key → value text, an
// empty text standing for NULL (NULL ON NULL), and a retract map that
// only merges read. A key present twice, or a NULL key, fails the job
// as Flink's does. A retraction removes the key when its value equals
// the stored one, a NULL the NULL marker (Flink 2.3 removes a member
// written null when its row is retracted; conformance's
// agg29-jsonobject-retract-null).

// arrayAcc is ARRAY_AGG's accumulator.
type arrayAcc struct{ vals, retract []row.Value }

// add accumulates (or retracts) v.
func (a *arrayAcc) add(v row.Value, add bool) {
	if add {
		a.vals = append(a.vals, v)
		return
	}
	if i := indexValue(a.vals, v); i >= 0 {
		a.vals = slices.Delete(a.vals, i, i+1)
		return
	}
	a.retract = append(a.retract, v)
}

// merge adds src after a's values (before them with ahead), then
// applies every retraction kept aside, as ArrayAggFunction.merge does.
func (a *arrayAcc) merge(src *arrayAcc, ahead bool) {
	if len(src.vals) == 0 && len(src.retract) == 0 {
		return
	}
	pending := append(a.retract, src.retract...)
	if ahead {
		a.vals = append(slices.Clip(src.vals), a.vals...)
		pending = append(slices.Clip(src.retract), a.retract...)
	} else {
		a.vals = append(a.vals, src.vals...)
	}
	a.retract = nil
	for _, v := range pending {
		if i := indexValue(a.vals, v); i >= 0 {
			a.vals = slices.Delete(a.vals, i, i+1)
		} else {
			a.retract = append(a.retract, v)
		}
	}
}

func indexValue(vals []row.Value, v row.Value) int {
	for i, x := range vals {
		if row.Equal(x, v) {
			return i
		}
	}
	return -1
}

// arrayOf is s's accumulator of a in slot id, made on first use.
func (s *Store) arrayOf(id int32, a *aggSlot) *arrayAcc {
	p := &s.exts[int(id)*s.extW+a.ext]
	acc, _ := (*p).(*arrayAcc)
	if acc == nil {
		acc = &arrayAcc{}
		*p = acc
	}
	return acc
}

func (s *Store) arrayResult(id int32, a *aggSlot) row.Value {
	acc, _ := s.exts[int(id)*s.extW+a.ext].(*arrayAcc)
	if acc == nil || len(acc.vals) == 0 {
		return row.NullValue
	}
	return row.ArrayValue(acc.vals)
}

// jsonArrayResult is JSON_ARRAYAGG's array of the item texts.
func jsonArrayResult(l *valueList) row.Value {
	var b strings.Builder
	b.WriteByte('[')
	if l != nil {
		for i, v := range l.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(v.Str())
		}
	}
	b.WriteByte(']')
	return row.StringValue(b.String())
}

// objectEntry is one member of JSON_OBJECTAGG's object: the key's JSON
// text and the value's, NULL for a NULL value.
type objectEntry struct {
	quoted string
	val    row.Value
}

// nullMarker stands for a NULL value: no JSON text is empty.
var nullMarker = row.StringValue("")

// objectAcc is JSON_OBJECTAGG's accumulator, by key.
type objectAcc struct{ m, retract map[string]objectEntry }

// errNullKey and errDuplicateKey are Flink's failures of JSON_OBJECTAGG.
var errNullKey = fmt.Errorf("JSON_OBJECTAGG: a key is NULL (Flink: \"Map views don't support null keys.\")")

func errDuplicateKey(k string) error {
	return fmt.Errorf("JSON_OBJECTAGG: key '%s' is already present; duplicate keys are not allowed in JSON_OBJECTAGG (as in Flink)", k)
}

// objectOf is s's accumulator of a in slot id, made on first use.
func (s *Store) objectOf(id int32, a *aggSlot) *objectAcc {
	p := &s.exts[int(id)*s.extW+a.ext]
	acc, _ := (*p).(*objectAcc)
	if acc == nil {
		acc = &objectAcc{m: map[string]objectEntry{}}
		*p = acc
	}
	return acc
}

// objectStep accumulates or retracts one ROW(k, quoted k, value text);
// a failure is the store's (Err), as Flink fails the job.
func (s *Store) objectStep(id int32, a *aggSlot, v row.Value, add bool) {
	var f [3]row.Value
	for i, x := range v.Items() {
		if i < len(f) {
			f[i] = x
		}
	}
	if f[0].IsNull() {
		s.fail(errNullKey)
		return
	}
	k := strings.Clone(f[0].Str())
	e := objectEntry{quoted: strings.Clone(f[1].Str()), val: row.DetachValue(f[2])}
	acc := s.objectOf(id, a)
	if err := acc.step(k, e, add, a.call.KeepNulls); err != nil {
		s.fail(err)
	}
}

// step is JsonObjectAggFunction's accumulate (add) or retract.
func (acc *objectAcc) step(k string, e objectEntry, add, keepNulls bool) error {
	if e.val.IsNull() {
		e.val = nullMarker
	}
	if !add {
		if cur, ok := acc.m[k]; ok && row.Equal(cur.val, e.val) {
			delete(acc.m, k)
			return nil
		}
		if acc.retract == nil {
			acc.retract = map[string]objectEntry{}
		}
		acc.retract[k] = e
		return nil
	}
	if _, ok := acc.m[k]; ok {
		return errDuplicateKey(k)
	}
	if e.val == nullMarker && !keepNulls {
		return nil
	}
	acc.m[k] = e
	return nil
}

// merge is JsonObjectAggFunction.merge: src's retractions first, then
// its members.
func (acc *objectAcc) merge(src *objectAcc) error {
	for k, e := range src.retract {
		if cur, ok := acc.m[k]; ok && row.Equal(cur.val, e.val) {
			delete(acc.m, k)
			continue
		}
		if acc.retract == nil {
			acc.retract = map[string]objectEntry{}
		}
		acc.retract[k] = e
	}
	for k, e := range src.m {
		if r, ok := acc.retract[k]; ok && row.Equal(r.val, e.val) {
			delete(acc.retract, k)
			continue
		}
		if _, ok := acc.m[k]; ok {
			return errDuplicateKey(k)
		}
		acc.m[k] = e
	}
	return nil
}

// objectResult writes the object with its keys in Java's string order,
// as Flink's JSON serializer sorts them.
func (s *Store) objectResult(id int32, a *aggSlot) row.Value {
	acc, _ := s.exts[int(id)*s.extW+a.ext].(*objectAcc)
	if acc == nil || len(acc.m) == 0 {
		return row.StringValue("{}")
	}
	keys := make([]string, 0, len(acc.m))
	for k := range acc.m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, javaCompare)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		e := acc.m[k]
		b.WriteString(e.quoted)
		b.WriteByte(':')
		if t := e.val.Str(); t == "" {
			b.WriteString("null")
		} else {
			b.WriteString(t)
		}
	}
	b.WriteByte('}')
	return row.StringValue(b.String())
}

// javaCompare orders strings as Java's String.compareTo: by UTF-16 code
// units (a character past U+FFFF sorts before U+E000..U+FFFF).
func javaCompare(a, b string) int {
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(x, y)
}

// fail keeps the store's first failure (Err).
func (s *Store) fail(err error) {
	if s.userErr == nil {
		s.userErr = err
	}
}
