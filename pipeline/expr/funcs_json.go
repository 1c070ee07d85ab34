package expr

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// JSON_VALUE(json, path) extracts a scalar as STRING, in Flink's default
// lax mode: a path that leads nowhere, to an object or array, or into text
// that is not JSON gives NULL; JSON null gives NULL. Paths are the common
// subset of SQL/JSON paths: $, .key, ."quoted key", ['key'], ["key"], [n],
// optionally after the mode word lax or strict (strict is read as lax).
// The path must be a constant; it is parsed once. (The parser has no
// RETURNING clause yet: CAST the result.)

func init() {
	register(map[string]*funcDef{
		"JSON_VALUE": {min: 2, max: 2, build: buildJSONValue},
	})
}

// jsonStep is one step of a path: a member name, or an array index when
// key is "" and index >= 0.
type jsonStep struct {
	key   string
	index int
}

func parseJSONPath(p string) ([]jsonStep, error) {
	s := strings.TrimSpace(p)
	for _, mode := range []string{"lax ", "strict "} {
		if len(s) >= len(mode) && strings.EqualFold(s[:len(mode)], mode) {
			s = strings.TrimSpace(s[len(mode):])
		}
	}
	bad := func(i int, why string) error {
		return fmt.Errorf("JSON path %q: %s at character %d", p, why, i+1)
	}
	if !strings.HasPrefix(s, "$") {
		return nil, bad(0, "a path starts with $")
	}
	var steps []jsonStep
	for i := 1; i < len(s); {
		switch s[i] {
		case '.':
			i++
			if i < len(s) && s[i] == '"' {
				end := strings.IndexByte(s[i+1:], '"')
				if end < 0 {
					return nil, bad(i, "unclosed quoted name")
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
				return nil, bad(start, "expected a member name after .")
			}
			name := s[start:i]
			if name == "*" {
				return nil, bad(start, "wildcards select several values; JSON_VALUE returns one")
			}
			steps = append(steps, jsonStep{key: name, index: -1})
		case '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return nil, bad(i, "unclosed [")
			}
			inner := strings.TrimSpace(s[i+1 : i+end])
			switch {
			case len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0]:
				steps = append(steps, jsonStep{key: inner[1 : len(inner)-1], index: -1})
			default:
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 {
					return nil, bad(i+1, fmt.Sprintf("expected an array index or a quoted name, found %q", inner))
				}
				steps = append(steps, jsonStep{index: n})
			}
			i += end + 1
		case ' ', '\t':
			i++
		default:
			return nil, bad(i, fmt.Sprintf("unexpected %q", s[i]))
		}
	}
	return steps, nil
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

// jsonValue walks path in doc and returns the scalar there as text.
func jsonValue(doc string, path []jsonStep) row.Value {
	if !json.Valid([]byte(doc)) {
		return row.NullValue
	}
	i := 0
	for _, st := range path {
		var ok bool
		if i, ok = jsonStepInto(doc, i, st); !ok {
			return row.NullValue
		}
	}
	i = skipWS(doc, i)
	end := skipValue(doc, i)
	raw := doc[i:end]
	switch {
	case raw == "" || raw == "null" || raw[0] == '{' || raw[0] == '[':
		return row.NullValue
	case raw[0] == '"':
		return row.StringValue(jsonString(raw))
	}
	return row.StringValue(raw)
}

func buildJSONValue(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	pv, err := constArg(e, args, 1, "the JSON path")
	if err != nil {
		return nil, err
	}
	if pv.IsNull() {
		return constNode(e, row.Type{ID: row.String}, row.NullValue), nil
	}
	path, err := parseJSONPath(pv.Str())
	if err != nil {
		return nil, errAt(args[1].e.Pos(), "%v", err)
	}
	return c.fn1(e, row.Type{ID: row.String}, args[0], func(v row.Value) (row.Value, error) {
		return jsonValue(v.Str(), path), nil
	})
}
