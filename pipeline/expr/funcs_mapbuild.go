package expr

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// The functions of Flink 2.3 that build a MAP: STR_TO_MAP, MAP_FROM_ARRAYS
// and MAP_UNION. A map's entries keep the order Flink's map holds them
// in, which MAP_KEYS, MAP_ENTRIES and CAST to STRING show: STR_TO_MAP's
// is a java.util.HashMap's (by the keys' hash codes, javaHashOrder),
// MAP_FROM_ARRAYS's the arrays', MAP_UNION's the later map's entries
// first, then the earlier's whose keys the later lacks.

func init() {
	register(map[string]*funcDef{
		"STR_TO_MAP":      {min: 1, max: 3, build: buildStrToMap},
		"MAP_FROM_ARRAYS": {min: 2, max: 2, build: buildMapFromArrays},
		"MAP_UNION":       {min: 1, max: -1, build: buildMapUnion},
	})
}

// javaStringHash is Java's String.hashCode: over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// javaHashOrder orders keys (distinct, with their hash codes) as a
// java.util.HashMap made with room for n entries iterates them after
// they were put in this order: by bucket, the hash's spread bits masked
// by the table's size, which doubles once the entries pass three
// quarters of it; in a bucket, by insertion. (A bucket Java turns into a
// tree, past eight keys in one bucket of a table of 64 or more, keeps
// another order: not followed.) It returns the order as indexes.
func javaHashOrder(hashes []int32, n int) []int {
	size := 1
	for size < n {
		size <<= 1
	}
	bucket := func(h int32, size int) int { return int(uint32(h)^(uint32(h)>>16)) & (size - 1) }
	for i := range hashes {
		// A ninth key in one bucket makes a table smaller than 64 grow
		// (HashMap.treeifyBin), as does passing the load factor.
		if size < 64 {
			same := 0
			for _, h := range hashes[:i] {
				if bucket(h, size) == bucket(hashes[i], size) {
					same++
				}
			}
			if same >= 8 {
				size <<= 1
			}
		}
		if i+1 > size*3/4 {
			size <<= 1
		}
	}
	order := make([]int, len(hashes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return bucket(hashes[order[a]], size) < bucket(hashes[order[b]], size) })
	return order
}

// javaSplit is Java's String.split(regex, limit): the pieces between
// matches; an empty match at the start makes no empty first piece, and
// with limit 0 the empty pieces at the end are dropped.
func javaSplit(re *pattern, s string, limit int) []string {
	var out []string
	at := 0
	for _, m := range javaFindAll(re, s) {
		if limit > 0 && len(out) >= limit-1 {
			break
		}
		if at == 0 && m[0] == 0 && m[1] == 0 {
			continue
		}
		out = append(out, s[at:m[0]])
		at = m[1]
	}
	if at == 0 && len(out) == 0 {
		return []string{s}
	}
	out = append(out, s[at:])
	if limit == 0 {
		for len(out) > 0 && out[len(out)-1] == "" {
			out = out[:len(out)-1]
		}
	}
	return out
}

// strToMap is Flink's STR_TO_MAP: the text split into pairs at list,
// each pair at the first kv; a pair without kv maps to NULL, a key given
// again takes the later value.
func strToMap(text string, list, kv *pattern) row.Value {
	if text == "" {
		return row.MapValue(nil, nil)
	}
	pairs := javaSplit(list, text, 0)
	var keys []string
	vals := map[string]row.Value{}
	for _, p := range pairs {
		k, v := p, row.NullValue
		if parts := javaSplit(kv, p, 2); len(parts) == 2 {
			k, v = parts[0], row.StringValue(parts[1])
		}
		if _, ok := vals[k]; !ok {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	hashes := make([]int32, len(keys))
	for i, k := range keys {
		hashes[i] = javaStringHash(k)
	}
	ks := make([]row.Value, len(keys))
	vs := make([]row.Value, len(keys))
	for i, j := range javaHashOrder(hashes, len(pairs)) {
		ks[i], vs[i] = row.StringValue(keys[j]), vals[keys[j]]
	}
	return row.MapValue(ks, vs)
}

var defaultPairSep, defaultKVSep = newPattern(regexp.MustCompile(",")), newPattern(regexp.MustCompile("="))

// buildStrToMap is STR_TO_MAP(text [, listDelimiter, keyValueDelimiter]):
// MAP<STRING, STRING>, the delimiters regular expressions (',' and '='
// by default). NULL when an argument is; the empty text is the empty
// map.
func buildStrToMap(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if len(args) == 2 {
		return nil, errAt(e.At, "STR_TO_MAP takes 1 or 3 arguments (the text, or the text and both delimiters), got 2")
	}
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	t := row.MapOf(row.Type{ID: row.String}, row.Type{ID: row.String})
	t.NotNull = allNotNull(args...)
	if len(args) == 1 {
		return c.fn1(e, t, args[0], func(s row.Value) (row.Value, error) {
			return strToMap(s.Str(), defaultPairSep, defaultKVSep), nil
		})
	}
	list, err := newRegexpArg(e, args, 1)
	if err != nil {
		return nil, err
	}
	kv, err := newRegexpArg(e, args, 2)
	if err != nil {
		return nil, err
	}
	return c.fn3(e, t, args[0], args[1], args[2], func(s, l, k row.Value) (row.Value, error) {
		lre, err := list.get(l.Str())
		if err != nil {
			return row.NullValue, err
		}
		kre, err := kv.get(k.Str())
		if err != nil {
			return row.NullValue, err
		}
		return strToMap(s.Str(), lre, kre), nil
	})
}

// buildMapFromArrays is MAP_FROM_ARRAYS(keys, values): the map of
// keys[i] to values[i], NULL when either array is; arrays of other
// lengths fail the row, as in Flink. A key given twice keeps its first
// place and its last value (row.MapValue), where Flink's map holds it
// twice.
func buildMapFromArrays(c *compiler, e *sql.Call, args []*node) (*node, error) {
	for i, a := range args {
		if a.t.ID != row.Array && a.t.ID != row.Null {
			return nil, argError(e, i, args, "an ARRAY")
		}
	}
	elem := func(a *node) row.Type {
		if a.t.ID == row.Null {
			return row.Type{ID: row.Null}
		}
		return a.t.Elem()
	}
	t := row.MapOf(elem(args[0]), elem(args[1]))
	t.NotNull = allNotNull(args...)
	return c.fn2(e, t, args[0], args[1], func(k, v row.Value) (row.Value, error) {
		ks, vs := k.ItemSlice(), v.ItemSlice()
		if len(ks) != len(vs) {
			return row.NullValue, fmt.Errorf("the keys array has %d elements and the values array %d: they must have as many", len(ks), len(vs))
		}
		return row.MapValue(ks, vs), nil
	})
}

// buildMapUnion is MAP_UNION(m1, m2, ...): the maps merged, a later
// map's value winning for a key; NULL when any map is.
func buildMapUnion(c *compiler, e *sql.Call, args []*node) (*node, error) {
	t := row.Type{ID: row.Null, NotNull: true}
	for i, a := range args {
		if (a.t.ID != row.Map || a.t.Multiset()) && a.t.ID != row.Null {
			return nil, argError(e, i, args, "a MAP")
		}
		u, ok := commonType(t, a.t)
		if !ok {
			return nil, argError(e, i, args, "a MAP of the others' types")
		}
		t = u
	}
	if t.ID == row.Null {
		return nil, errAt(e.At, "MAP_UNION needs a MAP argument of known type (CAST the NULL)")
	}
	if _, err := c.unify("MAP_UNION", args); err != nil {
		return nil, err
	}
	return c.fnN(e, t, args, func(maps []row.Value) (row.Value, error) {
		out := maps[0]
		for _, m := range maps[1:] {
			if m.Len() > 0 {
				out = mapUnion(out, m)
			}
		}
		return out, nil
	})
}

// mapUnion is a's entries over b's as Flink's MapDataForMapUnion orders
// them: b's entries, then a's whose key b lacks (a NULL key of a only
// when b has none).
func mapUnion(a, b row.Value) row.Value {
	items := b.ItemSlice()
	var ks, vs []row.Value
	for i := 0; i+1 < len(items); i += 2 {
		ks, vs = append(ks, items[i]), append(vs, items[i+1])
	}
	n := len(ks)
	ai := a.ItemSlice()
	for i := 0; i+1 < len(ai); i += 2 {
		seen := false
		for _, k := range ks[:n] {
			if row.Equal(k, ai[i]) {
				seen = true
				break
			}
		}
		if !seen {
			ks, vs = append(ks, ai[i]), append(vs, ai[i+1])
		}
	}
	return row.MapValue(ks, vs)
}
