package row

import (
	"encoding/binary"
	"fmt"
	"iter"
	"strings"
	"sync"
	"unsafe"
)

// The composite types ARRAY<T>, MAP<K, V> and ROW<name T, ...>, and
// MULTISET<T>: a MAP of each distinct element to its count (INT NOT
// NULL), which is how Flink keeps it, prints it ({a=2, b=1}) and writes it
// in JSON.
//
// A composite value keeps the scalar hot path as it is: it is one Value
// whose string holds its items in the codec's encoding (a uvarint count,
// then each item as AppendValue writes it; a MAP's items alternate key and
// value). Items read back share that string, so reading an element
// allocates nothing, and the value stays immutable, comparable (Equal),
// usable as a key (AppendKey) and storable in checkpoints (AppendValue) as
// any string is. Reading the i-th element walks the i before it: ETL
// arrays are small, and a walk beats a pointer per Value.

// nested is the interned description of a composite type.
type nested struct {
	elem   Type // ARRAY's element, MAP's value
	key    Type // MAP's key
	fields []Field
	text   string // the type as Flink writes it, without NOT NULL
	bag    bool   // a MULTISET: a MAP of elements to counts
}

var nestedTypes sync.Map // text -> *nested

func intern(n *nested) *nested {
	got, _ := nestedTypes.LoadOrStore(n.text, n)
	return got.(*nested)
}

// ArrayOf is the nullable ARRAY<elem>.
func ArrayOf(elem Type) Type {
	return Type{ID: Array, nest: intern(&nested{elem: elem, text: "ARRAY<" + elem.String() + ">"})}
}

// MapOf is the nullable MAP<key, value>.
func MapOf(key, value Type) Type {
	return Type{ID: Map, nest: intern(&nested{key: key, elem: value,
		text: "MAP<" + key.String() + ", " + value.String() + ">"})}
}

// MultisetOf is the nullable MULTISET<elem>, a MAP<elem, INT NOT NULL>.
func MultisetOf(elem Type) Type {
	return Type{ID: Map, nest: intern(&nested{key: elem, elem: Type{ID: Int, NotNull: true}, bag: true,
		text: "MULTISET<" + elem.String() + ">"})}
}

// Multiset reports whether t is a MULTISET (whose ID is Map).
func (t Type) Multiset() bool { return t.nest != nil && t.nest.bag }

// RowOf is the nullable ROW<name type, ...>.
func RowOf(fields ...Field) Type {
	var b strings.Builder
	b.WriteString("ROW<")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`" + strings.ReplaceAll(f.Name, "`", "``") + "` " + f.Type.String())
	}
	b.WriteString(">")
	return Type{ID: Struct, nest: intern(&nested{fields: append([]Field(nil), fields...), text: b.String()})}
}

// Elem is the element type of an ARRAY or the value type of a MAP.
func (t Type) Elem() Type {
	if t.nest == nil {
		return Type{}
	}
	return t.nest.elem
}

// Key is the key type of a MAP.
func (t Type) Key() Type {
	if t.nest == nil {
		return Type{}
	}
	return t.nest.key
}

// Fields are the fields of a ROW; the caller must not modify them.
func (t Type) Fields() []Field {
	if t.nest == nil {
		return nil
	}
	return t.nest.fields
}

// Nested reports whether the type is ARRAY, MAP or ROW.
func (id TypeID) Nested() bool { return id == Array || id == Map || id == Struct }

// FieldIndex returns the position of a ROW's field named name (compared
// as SQL identifiers are, exact case first), or -1.
func (t Type) FieldIndex(name string) int {
	return Schema{Fields: t.Fields()}.Index(name)
}

func encodeItems(id TypeID, count int, items []Value) Value {
	dst := binary.AppendUvarint(make([]byte, 0, 8+len(items)*4), uint64(count))
	for _, v := range items {
		dst = AppendValue(dst, v)
	}
	return Value{id: id, s: string(dst)}
}

// NestedValue is the ARRAY, MAP or ROW value (id) whose items are
// encoded in enc, as a nested value keeps them and as AppendKey and
// AppendValue write them after its length: what reads a key or a state
// back gives the value again from its bytes. The items are read when
// used, as for every nested value; enc is shared, not copied.
func NestedValue(id TypeID, enc string) (Value, error) {
	if !id.Nested() {
		return NullValue, fmt.Errorf("type %d is not ARRAY, MAP or ROW", id)
	}
	return Value{id: id, s: enc}, nil
}

// ArrayValue is the ARRAY of elems.
func ArrayValue(elems []Value) Value { return encodeItems(Array, len(elems), elems) }

// StructValue is the ROW of fields.
func StructValue(fields []Value) Value { return encodeItems(Struct, len(fields), fields) }

// MapValue is the MAP of keys[i] to values[i]. A key given twice keeps its
// first place and its last value, as Java's LinkedHashMap.put does.
func MapValue(keys, values []Value) Value {
	items := make([]Value, 0, 2*len(keys))
	for i, k := range keys {
		dup := false
		for j := 0; j < len(items); j += 2 {
			if Equal(items[j], k) {
				items[j+1], dup = values[i], true
				break
			}
		}
		if !dup {
			items = append(items, k, values[i])
		}
	}
	return encodeItems(Map, len(items)/2, items)
}

// itemDecoder reads a nested value's items, sharing its string.
func itemDecoder(s string) *Decoder {
	return &Decoder{buf: unsafe.Slice(unsafe.StringData(s), len(s)), alias: true}
}

// Len is the number of elements of an ARRAY, entries of a MAP or fields
// of a ROW; 0 for any other value.
func (v Value) Len() int {
	if !v.id.Nested() {
		return 0
	}
	n, k := binary.Uvarint([]byte(v.s[:min(len(v.s), binary.MaxVarintLen64)]))
	if k <= 0 {
		return 0
	}
	return int(n)
}

// Items yields the items of a nested value in order: the elements of an
// ARRAY, the fields of a ROW, and key, value, key, value... of a MAP.
func (v Value) Items() iter.Seq2[int, Value] {
	return func(yield func(int, Value) bool) {
		if !v.id.Nested() {
			return
		}
		d := itemDecoder(v.s)
		n := d.Uvarint()
		if v.id == Map {
			n *= 2
		}
		for i := 0; uint64(i) < n; i++ {
			x := d.Value()
			if d.err != nil || !yield(i, x) {
				return
			}
		}
	}
}

// Item returns the i-th item (0-based, as Items counts them), or false
// when there is none.
func (v Value) Item(i int) (Value, bool) {
	if i < 0 || !v.id.Nested() {
		return NullValue, false
	}
	d := Decoder{buf: unsafe.Slice(unsafe.StringData(v.s), len(v.s)), alias: true}
	n := d.Uvarint()
	if v.id == Map {
		n *= 2
	}
	if uint64(i) >= n {
		return NullValue, false
	}
	for range i {
		d.skipValue()
	}
	x := d.Value()
	if d.err != nil {
		return NullValue, false
	}
	return x, true
}

// Lookup returns the value a MAP holds for key, or false.
func (v Value) Lookup(key Value) (Value, bool) {
	var k Value
	for i, x := range v.Items() {
		if i%2 == 0 {
			k = x
		} else if Equal(k, key) {
			return x, true
		}
	}
	return NullValue, false
}

// ItemSlice returns the items as a new slice.
func (v Value) ItemSlice() []Value {
	out := make([]Value, 0, v.Len())
	for _, x := range v.Items() {
		out = append(out, x)
	}
	return out
}

// compareNested orders two values of one composite type item by item,
// the shorter first when one is a prefix of the other.
func compareNested(a, b Value) int {
	x, y := a.ItemSlice(), b.ItemSlice()
	for i := range min(len(x), len(y)) {
		if c := Compare(x[i], y[i]); c != 0 {
			return c
		}
	}
	return len(x) - len(y)
}

// appendNestedPrint writes v as the print connector shows it, Java's
// toString of Flink's external types: an array [1, 2], a map {a=1, b=2},
// a row +I[1, a]; NULL items are null.
func appendNestedPrint(dst []byte, v Value) []byte {
	open, close := "[", "]"
	switch v.id {
	case Map:
		open, close = "{", "}"
	case Struct:
		open = "+I["
	}
	dst = append(dst, open...)
	for i, x := range v.Items() {
		switch {
		case v.id == Map && i%2 == 1:
			dst = append(dst, '=')
		case i > 0:
			dst = append(dst, ", "...)
		}
		dst = x.AppendPrint(dst)
	}
	return append(dst, close...)
}

// appendNestedText writes v as CAST(v AS STRING) does in Flink (its
// ArrayToStringCastRule, MapToStringCastRule and RowToStringCastRule):
// [1, 2], {a=1, b=2}, (1, a), NULL items as NULL.
func appendNestedText(dst []byte, v Value, t Type) []byte {
	open, close := "[", "]"
	switch v.id {
	case Map:
		open, close = "{", "}"
	case Struct:
		open, close = "(", ")"
	}
	fields := t.Fields()
	dst = append(dst, open...)
	for i, x := range v.Items() {
		var it Type
		switch {
		case v.id == Map && i%2 == 1:
			dst = append(dst, '=')
			it = t.Elem()
		case i > 0:
			dst = append(dst, ", "...)
		}
		switch {
		case v.id == Array:
			it = t.Elem()
		case v.id == Map && i%2 == 0:
			it = t.Key()
		case v.id == Struct && i < len(fields):
			it = fields[i].Type
		}
		if x.IsNull() {
			dst = append(dst, "NULL"...)
			continue
		}
		if it.ID != x.id {
			it = Of(x.id)
		}
		dst = AppendText(dst, x, it)
	}
	return append(dst, close...)
}

// isNestedTypeText reports whether s starts a composite type name.
func isNestedTypeText(s string) bool {
	up := strings.ToUpper(s)
	for _, p := range []string{"ARRAY", "MAP", "MULTISET", "ROW"} {
		if rest, ok := strings.CutPrefix(up, p); ok {
			rest = strings.TrimLeft(rest, " \t\n")
			return strings.HasPrefix(rest, "<") || (p == "ROW" && strings.HasPrefix(rest, "("))
		}
	}
	return false
}

// parseNestedType reads ARRAY<T>, MAP<K, V>, MULTISET<T>, ROW<name T,
// ...> and ROW(name T, ...), nested to any depth, each optionally NOT
// NULL.
func parseNestedType(src string) (Type, error) {
	i := strings.IndexAny(src, "<(")
	name := strings.ToUpper(strings.TrimSpace(src[:i]))
	end := matchClose(src, i)
	if end < 0 {
		return Type{}, fmt.Errorf("type %q: unclosed %c", src, src[i])
	}
	var t Type
	switch tail := strings.ToUpper(strings.TrimSpace(src[end+1:])); tail {
	case "":
	case "NOT NULL":
		t.NotNull = true
	default:
		return Type{}, fmt.Errorf("type %q: unexpected %q after the closing %c", src, strings.TrimSpace(src[end+1:]), src[end])
	}
	parts := splitTop(src[i+1 : end])
	want := map[string]int{"ARRAY": 1, "MAP": 2, "MULTISET": 1}[name]
	if name != "ROW" && len(parts) != want {
		return Type{}, fmt.Errorf("type %q: %s takes %d type parameter(s), got %d", src, name, want, len(parts))
	}
	inner := make([]Type, 0, len(parts))
	var fields []Field
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if name == "ROW" {
			fname, ftext, err := cutFieldName(p)
			if err != nil {
				return Type{}, fmt.Errorf("type %q: %v", src, err)
			}
			ft, err := ParseType(ftext)
			if err != nil {
				return Type{}, fmt.Errorf("type %q: field %q: %v", src, fname, err)
			}
			for _, f := range fields {
				if strings.EqualFold(f.Name, fname) {
					return Type{}, fmt.Errorf("type %q: duplicate field %q", src, fname)
				}
			}
			fields = append(fields, Field{Name: fname, Type: ft})
			continue
		}
		it, err := ParseType(p)
		if err != nil {
			return Type{}, fmt.Errorf("type %q: %v", src, err)
		}
		inner = append(inner, it)
	}
	switch name {
	case "ARRAY":
		nn := t.NotNull
		t = ArrayOf(inner[0])
		t.NotNull = nn
	case "MAP":
		nn := t.NotNull
		t = MapOf(inner[0], inner[1])
		t.NotNull = nn
	case "MULTISET":
		nn := t.NotNull
		t = MultisetOf(inner[0])
		t.NotNull = nn
	default:
		if len(fields) == 0 {
			return Type{}, fmt.Errorf("type %q: ROW needs at least one field", src)
		}
		nn := t.NotNull
		t = RowOf(fields...)
		t.NotNull = nn
	}
	return t, nil
}

// matchClose returns the index of the bracket closing the one at open,
// skipping quoted names and strings, or -1.
func matchClose(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch c := s[i]; c {
		case '`', '\'':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return -1
			}
			i += j + 1
		case '<', '(':
			depth++
		case '>', ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitTop splits s at the commas outside brackets and quotes.
func splitTop(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '`', '\'':
			if j := strings.IndexByte(s[i+1:], c); j >= 0 {
				i += j + 1
			}
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// cutFieldName splits "name TYPE [COMMENT '...']" of a ROW field; the name
// may be `quoted`.
func cutFieldName(p string) (name, typ string, err error) {
	if strings.HasPrefix(p, "`") {
		j := strings.IndexByte(p[1:], '`')
		if j < 0 {
			return "", "", fmt.Errorf("unclosed ` in field %q", p)
		}
		name, typ = p[1:j+1], p[j+2:]
	} else {
		var ok bool
		name, typ, ok = strings.Cut(p, " ")
		if !ok {
			return "", "", fmt.Errorf("field %q: write each field as \"name TYPE\"", p)
		}
	}
	typ = strings.TrimSpace(typ)
	if k := strings.Index(strings.ToUpper(typ), " COMMENT '"); k >= 0 && strings.HasSuffix(typ, "'") {
		typ = strings.TrimSpace(typ[:k])
	}
	if name == "" || typ == "" {
		return "", "", fmt.Errorf("field %q: write each field as \"name TYPE\"", p)
	}
	return name, typ, nil
}
