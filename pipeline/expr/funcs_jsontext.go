package expr

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// JSON text as Flink's Jackson writes the values it read: numbers as
// Java's BigDecimal writes them, object members sorted by name.

// javaNumberText writes the JSON number raw as BigDecimal.toString does
// (an integer as BigInteger.toString): the digits of the unscaled value
// and the scale taken from the text, plain while the scale is not
// negative and the adjusted exponent at least -6, else one digit, a
// point, the rest and E with the signed adjusted exponent.
func javaNumberText(raw string) string {
	if !strings.ContainsAny(raw, ".eE") {
		// An integer: JSON allows no leading zeros, so only -0 changes.
		if raw == "-0" {
			return "0"
		}
		return raw
	}
	neg := strings.HasPrefix(raw, "-")
	mant, exp, hasExp := strings.Cut(strings.TrimPrefix(raw, "-"), "e")
	if !hasExp {
		mant, exp, hasExp = strings.Cut(mant, "E")
	}
	whole, frac, _ := strings.Cut(mant, ".")
	e := 0
	if hasExp {
		n, err := strconv.Atoi(strings.TrimPrefix(exp, "+"))
		if err != nil {
			return raw
		}
		e = n
	}
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		digits, neg = "0", false
	}
	scale := len(frac) - e
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	adjusted := len(digits) - 1 - scale
	switch {
	case scale == 0:
		b.WriteString(digits)
	case scale > 0 && adjusted >= -6:
		if point := len(digits) - scale; point > 0 {
			b.WriteString(digits[:point])
			b.WriteByte('.')
			b.WriteString(digits[point:])
		} else {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -point))
			b.WriteString(digits)
		}
	default:
		b.WriteByte(digits[0])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('E')
		if adjusted >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(adjusted))
	}
	return b.String()
}

// compactJSON writes raw (valid JSON) without insignificant whitespace,
// as Jackson serialises the node Flink found. Invalid UTF-8 in its
// strings becomes U+FFFD, as in the Java string Flink parsed (javautf8).
func compactJSON(raw string) string {
	return string(appendJacksonJSON(nil, raw))
}

// appendJacksonJSON writes the valid JSON raw as Flink's Jackson writes
// the value it read: compact, strings re-escaped (appendJSONString),
// numbers as Java writes the BigDecimal read (1.5e3 as 1.5E+3), and the members of every object sorted by name
// (Flink's mapper sets ORDER_MAP_ENTRIES_BY_KEYS), a name given twice
// keeping its last value.
func appendJacksonJSON(dst []byte, raw string) []byte {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return dst
	}
	switch raw[0] {
	case '"':
		return appendJSONString(dst, jsonString(raw))
	case '[':
		dst = append(dst, '[')
		n := 0
		jsonItems(raw, func(_, v string) {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = appendJacksonJSON(dst, v)
		})
		return append(dst, ']')
	case '{':
		var keys, vals []string
		at := map[string]int{}
		jsonItems(raw, func(k, v string) {
			if i, ok := at[k]; ok {
				vals[i] = v
				return
			}
			at[k] = len(keys)
			keys, vals = append(keys, k), append(vals, v)
		})
		dst = append(dst, '{')
		for n, i := range javaOrder(keys) {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendJSONString(dst, keys[i]), ':')
			dst = appendJacksonJSON(dst, vals[i])
		}
		return append(dst, '}')
	case 't', 'f', 'n':
		return append(dst, raw...)
	}
	// A number: Jackson writes the BigDecimal (or integer) it read.
	return append(dst, javaNumberText(raw)...)
}

// javaOrder gives the indexes of names in Java's string order (names
// are distinct).
func javaOrder(names []string) []int {
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return javaLess(names[order[a]], names[order[b]]) })
	return order
}

// javaLess orders strings as Java's String.compareTo does, by UTF-16
// code units.
func javaLess(a, b string) bool {
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := range min(len(x), len(y)) {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return len(x) < len(y)
}
