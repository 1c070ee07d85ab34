package expr

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// maxStringLen bounds the strings REPEAT and the PAD functions build, so
// that one bad row cannot exhaust memory.
const maxStringLen = 64 << 20

var errTooLong = fmt.Errorf("the result would be longer than %d bytes", maxStringLen)

func strType(args ...*node) row.Type { return row.Type{ID: row.String, NotNull: allNotNull(args...)} }
func intType(args ...*node) row.Type { return row.Type{ID: row.Int, NotNull: allNotNull(args...)} }

func init() {
	register(map[string]*funcDef{
		"CONCAT":           {min: 1, max: -1, build: buildConcat},
		"CONCAT_WS":        {min: 2, max: -1, build: buildConcatWS},
		"UPPER":            {min: 1, max: 1, build: strMap(javaUpper)},
		"LOWER":            {min: 1, max: 1, build: strMap(strings.ToLower)},
		"INITCAP":          {min: 1, max: 1, build: strMap(initCap)},
		"REVERSE":          {min: 1, max: 1, build: strMap(reverse)},
		"CHAR_LENGTH":      {min: 1, max: 1, build: buildCharLength},
		"CHARACTER_LENGTH": {min: 1, max: 1, build: buildCharLength},
		"SUBSTRING":        {min: 2, max: 3, build: buildSubstring},
		"SUBSTR":           {min: 2, max: 3, build: buildSubstring},
		"POSITION":         {min: 2, max: 2, build: buildLocate},
		"LOCATE":           {min: 2, max: 3, build: buildLocate},
		"REPLACE":          {min: 3, max: 3, build: buildReplace},
		"LTRIM":            {min: 1, max: 2, build: buildTrimFunc(sql.TrimLeading)},
		"RTRIM":            {min: 1, max: 2, build: buildTrimFunc(sql.TrimTrailing)},
		"BTRIM":            {min: 1, max: 2, build: buildTrimFunc(sql.TrimBoth)},
		"LPAD":             {min: 3, max: 3, build: buildPad(true)},
		"RPAD":             {min: 3, max: 3, build: buildPad(false)},
		"REPEAT":           {min: 2, max: 2, build: buildRepeat},
		"LEFT":             {min: 2, max: 2, build: buildLeftRight(true)},
		"RIGHT":            {min: 2, max: 2, build: buildLeftRight(false)},
		"SPLIT_INDEX":      {min: 3, max: 3, build: buildSplitIndex},
		"ASCII":            {min: 1, max: 1, build: buildASCII},
		"CHR":              {min: 1, max: 1, build: buildChr},
		"MD5":              {min: 1, max: 1, build: hashFunc(func(b []byte) []byte { s := md5.Sum(b); return s[:] })},
		"SHA1":             {min: 1, max: 1, build: hashFunc(func(b []byte) []byte { s := sha1.Sum(b); return s[:] })},
		"SHA256":           {min: 1, max: 1, build: hashFunc(func(b []byte) []byte { s := sha256.Sum256(b); return s[:] })},
		"TO_BASE64":        {min: 1, max: 1, build: buildToBase64},
		"FROM_BASE64":      {min: 1, max: 1, build: buildFromBase64},
	})
}

func (c *compiler) concatOp(e *sql.Binary, l, r *node) (*node, error) {
	id := row.String
	switch {
	case l.t.ID == row.Bytes && (r.t.ID == row.Bytes || r.t.ID == row.Null), r.t.ID == row.Bytes && l.t.ID == row.Null:
		id = row.Bytes
	case !isStringy(l.t) || !isStringy(r.t):
		return nil, errAt(e.OpAt, "|| joins strings, not %s and %s; CAST the other operand to STRING", typeName(l.t), typeName(r.t))
	}
	t := row.Type{ID: id, NotNull: allNotNull(l, r)}
	return c.fn2(e, t, l, r, func(a, b row.Value) (row.Value, error) {
		if id == row.Bytes {
			return row.BytesValue([]byte(a.Str() + b.Str())), nil
		}
		return row.StringValue(a.Str() + b.Str()), nil
	})
}

func buildConcat(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	t := strType(args...)
	if len(args) == 2 {
		return c.fn2(e, t, args[0], args[1], func(a, b row.Value) (row.Value, error) {
			return row.StringValue(a.Str() + b.Str()), nil
		})
	}
	return c.fnN(e, t, args, func(vals []row.Value) (row.Value, error) {
		n := 0
		for _, v := range vals {
			n += len(v.Str())
		}
		var b strings.Builder
		b.Grow(n)
		for _, v := range vals {
			b.WriteString(v.Str())
		}
		return row.StringValue(b.String()), nil
	})
}

// buildConcatWS is CONCAT_WS(sep, s...): NULL separator gives NULL, NULL
// strings are skipped.
func buildConcatWS(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	evs := make([]evalFn, len(args))
	for i, a := range args {
		evs[i] = a.eval
	}
	f := func(r row.Row) (row.Value, error) {
		sep, err := evs[0](r)
		if err != nil || sep.IsNull() {
			return row.NullValue, err
		}
		var b strings.Builder
		first := true
		for _, ev := range evs[1:] {
			v, err := ev(r)
			if err != nil {
				return row.NullValue, err
			}
			if v.IsNull() {
				continue
			}
			if !first {
				b.WriteString(sep.Str())
			}
			first = false
			b.WriteString(v.Str())
		}
		return row.StringValue(b.String()), nil
	}
	return c.finish(e, row.Type{ID: row.String, NotNull: args[0].t.NotNull}, f, args...)
}

func strMap(f func(string) string) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		if err := check(e, args, "a STRING", isStringy); err != nil {
			return nil, err
		}
		return c.fn1(e, strType(args...), args[0], func(v row.Value) (row.Value, error) {
			return row.StringValue(f(v.Str())), nil
		})
	}
}

// initCap upper-cases the first letter of each word and lower-cases the
// rest, words being runs of letters and digits.
// javaUpper is Java's String.toUpperCase for the multi-character case
// mapping users meet: ß becomes SS (UPPER('ß') is 'SS' in Flink), which
// Go's one-to-one strings.ToUpper leaves as ß.
func javaUpper(s string) string {
	u := strings.ToUpper(s)
	if strings.Contains(u, "ß") {
		u = strings.ReplaceAll(u, "ß", "SS")
	}
	return u
}

func initCap(s string) string {
	// Flink's INITCAP is Calcite's SqlFunctions.initcap: words are runs of
	// ASCII letters and digits; the first letter of each is upper-cased,
	// the rest lower-cased, and every other character (a non-ASCII letter
	// too: INITCAP('ÄÖü') is 'ÄÖü') is kept and ends a word.
	var b strings.Builder
	b.Grow(len(s))
	start := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		digit, upper, lower := c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z'
		switch {
		case !digit && !upper && !lower:
			start = true
		case start:
			if lower {
				c -= 'a' - 'A'
			}
			start = false
		case upper:
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

func reverse(s string) string {
	rs := []rune(s)
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return string(rs)
}

func buildCharLength(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	return c.fn1(e, intType(args...), args[0], func(v row.Value) (row.Value, error) {
		return row.IntValue(int32(utf8.RuneCountInString(v.Str()))), nil
	})
}

// runeOffset returns the byte offset of the n-th character (0-based) of
// s, or len(s) when s is shorter.
func runeOffset(s string, n int64) int {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return i
}

// substring is Flink's SUBSTRING(s, pos, len): 1-based; a negative pos
// counts from the end; 0 is 1; a negative length gives NULL.
func substring(s string, pos, length int64, hasLen bool) (row.Value, bool) {
	if hasLen && length < 0 {
		return row.NullValue, false
	}
	if s == "" {
		return row.StringValue(""), true
	}
	n := int64(utf8.RuneCountInString(s))
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
		if start >= n {
			return row.StringValue(""), true
		}
	case pos < 0:
		start = n + pos
		if start < 0 {
			return row.StringValue(""), true
		}
	}
	end := n
	if hasLen && n-start >= length {
		end = start + length
	}
	i := runeOffset(s, start)
	j := i + runeOffset(s[i:], end-start)
	return row.StringValue(s[i:j]), true
}

func buildSubstring(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy, 0); err != nil {
		return nil, err
	}
	if err := check(e, args, "an integer", isInteger, 1, 2); err != nil {
		return nil, err
	}
	t := strType(args...)
	if len(args) == 2 {
		return c.fn2(e, t, args[0], args[1], func(s, p row.Value) (row.Value, error) {
			v, _ := substring(s.Str(), p.Int64(), 0, false)
			return v, nil
		})
	}
	t.NotNull = false // a negative length gives NULL
	return c.fn3(e, t, args[0], args[1], args[2], func(s, p, l row.Value) (row.Value, error) {
		v, _ := substring(s.Str(), p.Int64(), l.Int64(), true)
		return v, nil
	})
}

// locate is the 1-based character position of needle in s at or after
// character from (1-based), 0 when absent.
func locate(needle, s string, from int64) int32 {
	if from < 1 || from-1 > int64(utf8.RuneCountInString(s)) {
		return 0
	}
	off := runeOffset(s, from-1)
	i := strings.Index(s[off:], needle)
	if i < 0 {
		return 0
	}
	return int32(from) + int32(utf8.RuneCountInString(s[off:off+i]))
}

func buildLocate(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy, 0, 1); err != nil {
		return nil, err
	}
	if err := check(e, args, "an integer", isInteger, 2); err != nil {
		return nil, err
	}
	t := intType(args...)
	if len(args) == 2 {
		return c.fn2(e, t, args[0], args[1], func(a, b row.Value) (row.Value, error) {
			return row.IntValue(locate(a.Str(), b.Str(), 1)), nil
		})
	}
	return c.fn3(e, t, args[0], args[1], args[2], func(a, b, p row.Value) (row.Value, error) {
		return row.IntValue(locate(a.Str(), b.Str(), p.Int64())), nil
	})
}

func buildReplace(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	return c.fn3(e, strType(args...), args[0], args[1], args[2], func(s, from, to row.Value) (row.Value, error) {
		return row.StringValue(strings.ReplaceAll(s.Str(), from.Str(), to.Str())), nil
	})
}

func trimString(s, chars string, mode sql.TrimMode) string {
	cut := func(r rune) bool { return strings.ContainsRune(chars, r) }
	if chars == " " {
		cut = func(r rune) bool { return r == ' ' }
	}
	switch mode {
	case sql.TrimLeading:
		return strings.TrimLeftFunc(s, cut)
	case sql.TrimTrailing:
		return strings.TrimRightFunc(s, cut)
	}
	return strings.TrimFunc(s, cut)
}

func (c *compiler) trimNode(e sql.Expr, name string, mode sql.TrimMode, x, chars *node) (*node, error) {
	if !isStringy(x.t) {
		return nil, errAt(x.e.Pos(), "%s needs a STRING, not %s", name, typeName(x.t))
	}
	if chars == nil {
		return c.fn1(e, strType(x), x, func(v row.Value) (row.Value, error) {
			return row.StringValue(trimString(v.Str(), " ", mode)), nil
		})
	}
	if !isStringy(chars.t) {
		return nil, errAt(chars.e.Pos(), "%s characters must be a STRING, not %s", name, typeName(chars.t))
	}
	return c.fn2(e, strType(x, chars), x, chars, func(v, cs row.Value) (row.Value, error) {
		return row.StringValue(trimString(v.Str(), cs.Str(), mode)), nil
	})
}

// trim compiles TRIM([BOTH|LEADING|TRAILING] [chars] FROM x): chars is a
// set of characters, a space by default.
func (c *compiler) trim(e *sql.Trim) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	var chars *node
	if e.Chars != nil {
		if chars, err = c.compile(e.Chars); err != nil {
			return nil, err
		}
	}
	return c.trimNode(e, "TRIM", e.Mode, x, chars)
}

func buildTrimFunc(mode sql.TrimMode) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		var chars *node
		if len(args) == 2 {
			chars = args[1]
		}
		return c.trimNode(e, e.Name, mode, args[0], chars)
	}
}

// pad is Flink's LPAD/RPAD: the result has exactly n characters, s cut
// when longer; a negative n or an empty pad (when padding is needed)
// gives NULL.
func pad(s string, n int64, p string, left bool) (row.Value, error) {
	// Flink: NULL for a negative length or an empty pad, even when s
	// needs no padding (LPAD('Hello', 5, '') is NULL).
	if n < 0 || p == "" {
		return row.NullValue, nil
	}
	if n > maxStringLen {
		return row.NullValue, errTooLong
	}
	have := int64(utf8.RuneCountInString(s))
	if have >= n {
		return row.StringValue(s[:runeOffset(s, n)]), nil
	}
	need := n - have
	pr := []rune(p)
	var b strings.Builder
	if !left {
		b.WriteString(s)
	}
	for i := int64(0); i < need; i++ {
		b.WriteRune(pr[i%int64(len(pr))])
	}
	if left {
		b.WriteString(s)
	}
	return row.StringValue(b.String()), nil
}

func buildPad(left bool) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		if err := check(e, args, "a STRING", isStringy, 0, 2); err != nil {
			return nil, err
		}
		if err := check(e, args, "an integer", isInteger, 1); err != nil {
			return nil, err
		}
		return c.fn3(e, row.Type{ID: row.String}, args[0], args[1], args[2], func(s, n, p row.Value) (row.Value, error) {
			return pad(s.Str(), n.Int64(), p.Str(), left)
		})
	}
}

// buildLeftRight is LEFT(s, n) / RIGHT(s, n): the first or last n
// characters; a negative n gives ”.
func buildLeftRight(left bool) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		if err := check(e, args, "a STRING", isStringy, 0); err != nil {
			return nil, err
		}
		if err := check(e, args, "an integer", isInteger, 1); err != nil {
			return nil, err
		}
		return c.fn2(e, strType(args...), args[0], args[1], func(s, n row.Value) (row.Value, error) {
			str, k := s.Str(), n.Int64()
			if k <= 0 {
				return row.StringValue(""), nil
			}
			if left {
				return row.StringValue(str[:runeOffset(str, k)]), nil
			}
			have := int64(utf8.RuneCountInString(str))
			if k >= have {
				return s, nil
			}
			return row.StringValue(str[runeOffset(str, have-k):]), nil
		})
	}
}

func buildRepeat(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy, 0); err != nil {
		return nil, err
	}
	if err := check(e, args, "an integer", isInteger, 1); err != nil {
		return nil, err
	}
	return c.fn2(e, strType(args...), args[0], args[1], func(s, n row.Value) (row.Value, error) {
		k := n.Int64()
		if k <= 0 || s.Str() == "" {
			return row.StringValue(""), nil
		}
		if k > maxStringLen/int64(len(s.Str())) {
			return row.NullValue, errTooLong
		}
		return row.StringValue(strings.Repeat(s.Str(), int(k))), nil
	})
}

// splitIndex is Flink's SPLIT_INDEX(s, sep, i): the i-th (0-based) piece
// of s split at every sep, NULL when out of range. An empty s has no
// pieces; an empty sep splits at whitespace.
func splitIndex(s, sep string, idx int64) row.Value {
	if idx < 0 || s == "" {
		return row.NullValue
	}
	if sep == "" {
		fields := strings.FieldsFunc(s, unicode.IsSpace)
		if idx >= int64(len(fields)) {
			return row.NullValue
		}
		return row.StringValue(fields[idx])
	}
	for i := int64(0); ; i++ {
		j := strings.Index(s, sep)
		if i == idx {
			if j < 0 {
				return row.StringValue(s)
			}
			return row.StringValue(s[:j])
		}
		if j < 0 {
			return row.NullValue
		}
		s = s[j+len(sep):]
	}
}

func buildSplitIndex(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy, 0, 1); err != nil {
		return nil, err
	}
	if err := check(e, args, "an integer", isInteger, 2); err != nil {
		return nil, err
	}
	return c.fn3(e, row.Type{ID: row.String}, args[0], args[1], args[2], func(s, sep, i row.Value) (row.Value, error) {
		return splitIndex(s.Str(), sep.Str(), i.Int64()), nil
	})
}

func buildASCII(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	return c.fn1(e, intType(args...), args[0], func(v row.Value) (row.Value, error) {
		s := v.Str()
		if s == "" {
			return row.IntValue(0), nil
		}
		// Flink gives the first byte of the UTF-8 text as a Java byte,
		// signed: ASCII('Ä') is -61 (0xC3), not the code point 196.
		return row.IntValue(int32(int8(s[0]))), nil
	})
}

func buildChr(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "an integer", isInteger); err != nil {
		return nil, err
	}
	return c.fn1(e, row.Type{ID: row.String}, args[0], func(v row.Value) (row.Value, error) {
		// Flink's CHR: the character of the lowest byte (so CHR(300) is
		// CHR(44), ','), the empty string for a negative n.
		n := v.Int64()
		if n < 0 {
			return row.StringValue(""), nil
		}
		return row.StringValue(string(rune(n & 0xFF))), nil
	})
}

func hashFunc(sum func([]byte) []byte) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		if err := check(e, args, "a STRING or BYTES", func(t row.Type) bool { return isStringy(t) || t.ID == row.Bytes }); err != nil {
			return nil, err
		}
		return c.fn1(e, strType(args...), args[0], func(v row.Value) (row.Value, error) {
			return row.StringValue(hex.EncodeToString(sum([]byte(v.Str())))), nil
		})
	}
}

func buildToBase64(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING or BYTES", func(t row.Type) bool { return isStringy(t) || t.ID == row.Bytes }); err != nil {
		return nil, err
	}
	return c.fn1(e, strType(args...), args[0], func(v row.Value) (row.Value, error) {
		return row.StringValue(base64.StdEncoding.EncodeToString([]byte(v.Str()))), nil
	})
}

func buildFromBase64(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	return c.fn1(e, strType(args...), args[0], func(v row.Value) (row.Value, error) {
		b, err := base64.StdEncoding.DecodeString(v.Str())
		if err != nil {
			var ce base64.CorruptInputError
			if errors.As(err, &ce) {
				return row.NullValue, fmt.Errorf("invalid base64 at byte %d", int64(ce))
			}
			return row.NullValue, err
		}
		return row.StringValue(string(b)), nil
	})
}
