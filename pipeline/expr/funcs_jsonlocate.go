package expr

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Following a JSON path through the raw text of a document: the path
// parser (mode word, then $, .key, ."quoted key", ['key'], ["key"], [n]
// and the steps of funcs_jsonpath.go), a scanner that skips whole JSON
// values without decoding them, and jsonLocate, which walks the path and
// says whether it found a value, nothing, or an error.

// jsonStep is one step of a path: a member name, or an array index when
// key is "" and index >= 0, or (kind not zero) one of the steps that
// select several values (funcs_jsonpath.go).
type jsonStep struct {
	key   string
	index int
	kind  jsonStepKind
	multi *jsonMulti
}

func parseJSONPath(p string) ([]jsonStep, error) {
	steps, _, err := parseJSONPathMode(p)
	return steps, err
}

// parseJSONPathMode parses a path and its mode: lax is false (strict)
// unless the path starts with the word lax.
func parseJSONPathMode(p string) ([]jsonStep, bool, error) {
	s := strings.TrimSpace(p)
	lax := false
	for _, mode := range []string{"lax", "strict"} {
		if len(s) > len(mode) && strings.EqualFold(s[:len(mode)], mode) && (s[len(mode)] == ' ' || s[len(mode)] == '\t' || s[len(mode)] == '\n') {
			s = strings.TrimSpace(s[len(mode):])
			lax = mode == "lax"
		}
	}
	bad := func(i int, why string) ([]jsonStep, bool, error) {
		return nil, false, fmt.Errorf("JSON path %q: %s at character %d", p, why, i+1)
	}
	if !strings.HasPrefix(s, "$") {
		return bad(0, "a path starts with $")
	}
	var steps []jsonStep
	for i := 1; i < len(s); {
		switch s[i] {
		case '.':
			i++
			if i < len(s) && s[i] == '.' {
				// ..: a deep scan, then the step that follows.
				steps = append(steps, jsonStep{kind: stepDeep, index: -1})
				continue
			}
			if i < len(s) && s[i] == '[' {
				continue // $.["a.b"], as Jayway reads it
			}
			if i < len(s) && s[i] == '"' {
				end := strings.IndexByte(s[i+1:], '"')
				if end < 0 {
					return bad(i, "unclosed quoted name")
				}
				steps = append(steps, jsonStep{key: s[i+1 : i+1+end], index: -1})
				i += end + 2
				continue
			}
			start := i
			for i < len(s) && s[i] != '.' && s[i] != '[' {
				i++
			}
			if start == i {
				return bad(start, "expected a member name after .")
			}
			name := s[start:i]
			if name == "*" {
				steps = append(steps, jsonStep{kind: stepWildcard, index: -1})
				continue
			}
			steps = append(steps, jsonStep{key: name, index: -1})
		case '[':
			if strings.HasPrefix(s[i:], "[?(") {
				st, n, err := parseJSONFilter(s[i:])
				if err != nil {
					return bad(i, err.Error())
				}
				steps = append(steps, st)
				i += n
				continue
			}
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return bad(i, "unclosed [")
			}
			inner := strings.TrimSpace(s[i+1 : i+end])
			switch {
			case len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0]:
				steps = append(steps, jsonStep{key: inner[1 : len(inner)-1], index: -1})
			default:
				if st, ok := parseJSONSubscript(inner); ok {
					steps = append(steps, st)
					break
				}
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 {
					return bad(i+1, fmt.Sprintf("expected an array index, *, a list or slice of indexes, a filter or a quoted name, found %q", inner))
				}
				steps = append(steps, jsonStep{index: n})
			}
			i += end + 1
		case ' ', '\t':
			i++
		default:
			return bad(i, fmt.Sprintf("unexpected %q", s[i]))
		}
	}
	return steps, lax, nil
}

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at s[i] == '"'.
func skipString(s string, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(s)
}

// skipValue returns the index after the (valid) JSON value at s[i].
func skipValue(s string, i int) int {
	i = skipWS(s, i)
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for i < len(s) {
			switch s[i] {
			case '"':
				i = skipString(s, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(s) && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' && s[i] != '\t' && s[i] != '\r' {
		i++
	}
	return i
}

// jsonString decodes the JSON string literal raw (quotes included).
func jsonString(raw string) string {
	if !strings.Contains(raw, `\`) {
		return raw[1 : len(raw)-1]
	}
	var out string
	if json.Unmarshal([]byte(raw), &out) != nil {
		return raw[1 : len(raw)-1]
	}
	return out
}

// jsonStepInto moves from the value at s[i] along one step; ok is false
// when the step leads nowhere.
func jsonStepInto(s string, i int, st jsonStep) (int, bool) {
	i = skipWS(s, i)
	if i >= len(s) {
		return 0, false
	}
	if st.index >= 0 {
		if s[i] != '[' {
			return 0, false
		}
		i = skipWS(s, i+1)
		for n := 0; i < len(s) && s[i] != ']'; n++ {
			if n == st.index {
				return i, true
			}
			i = skipWS(s, skipValue(s, i))
			if i < len(s) && s[i] == ',' {
				i = skipWS(s, i+1)
			}
		}
		return 0, false
	}
	if s[i] != '{' {
		return 0, false
	}
	i = skipWS(s, i+1)
	for i < len(s) && s[i] == '"' {
		end := skipString(s, i)
		key := jsonString(s[i:end])
		i = skipWS(s, end)
		if i >= len(s) || s[i] != ':' {
			return 0, false
		}
		i = skipWS(s, i+1)
		if key == st.key {
			return i, true
		}
		i = skipWS(s, skipValue(s, i))
		if i < len(s) && s[i] == ',' {
			i = skipWS(s, i+1)
		}
	}
	return 0, false
}

// jsonFound is the outcome of following a path.
type jsonFound uint8

const (
	jsonHit   jsonFound = iota // a value (not JSON null) is at the path
	jsonEmpty                  // nothing, or JSON null, is there (lax mode)
	jsonError                  // (strict) the text is not JSON, or nothing is there
)

// jsonLocate follows path in doc and returns the raw text of the value
// found.
func jsonLocate(doc string, path []jsonStep, lax bool) (string, jsonFound) {
	if !json.Valid([]byte(doc)) {
		// Calcite's jsonApiCommonSyntax: in lax mode a text that is not
		// JSON reads as nothing there (ON EMPTY), in strict mode it is
		// an error (ON ERROR).
		if lax {
			return "", jsonEmpty
		}
		return "", jsonError
	}
	if jsonIndefinite(path) {
		// Several values: Jayway gives them as a list, even of one or
		// none, which JSON_QUERY writes as an array.
		if out, ok := jsonSelectAll(doc, path); ok {
			return out, jsonHit
		}
		if lax {
			return "", jsonEmpty
		}
		return "", jsonError
	}
	i := 0
	for _, st := range path {
		var ok bool
		if i, ok = jsonStepInto(doc, i, st); !ok {
			if lax {
				return "", jsonEmpty
			}
			return "", jsonError
		}
	}
	i = skipWS(doc, i)
	raw := doc[i:skipValue(doc, i)]
	if raw == "" || raw == "null" {
		return "", jsonEmpty
	}
	return raw, jsonHit
}
