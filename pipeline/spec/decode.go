package spec

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// NodeDecoder is implemented by option types that read themselves from YAML
// (a format given as a name or as a mapping, say).
type NodeDecoder interface {
	DecodeNode(file string, n *yaml.Node, path string) error
}

// Decode reads the YAML node n into out, a pointer to a struct whose fields
// carry `yaml:"name"` tags (`yaml:"name,required"` for required ones). Keys
// that match no field are errors, with a suggestion when one is close. All
// problems are returned at once as a List. skip names keys the caller has
// already consumed (name, type and the like).
func Decode(file string, n *yaml.Node, path string, out any, skip ...string) error {
	d := decoder{file: file}
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		panic("spec.Decode: out must be a non-nil pointer")
	}
	d.value(n, path, v.Elem(), skip)
	return d.errs.Err()
}

type decoder struct {
	file string
	errs List
}

var (
	durationType    = reflect.TypeFor[time.Duration]()
	nodeType        = reflect.TypeFor[yaml.Node]()
	nodeDecoderType = reflect.TypeFor[NodeDecoder]()
)

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	d.errs = append(d.errs, errorAt(d.file, n, path, format, args...))
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "null"
	}
	return describe(n)
}

func (d *decoder) value(n *yaml.Node, path string, v reflect.Value, skip []string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if v.CanAddr() && v.Addr().Type().Implements(nodeDecoderType) {
		d.errs.Add(v.Addr().Interface().(NodeDecoder).DecodeNode(d.file, n, path))
		return
	}
	switch v.Type() {
	case nodeType:
		v.Set(reflect.ValueOf(*n))
		if s := substitutionOf(n); s != nil && v.CanAddr() {
			remember(v.Addr().Interface().(*yaml.Node), s)
		}
		return
	case durationType:
		if n.Kind != yaml.ScalarNode {
			d.fail(n, path, "%s", notA(n, "a duration such as 500ms, 5s or 1m"))
			return
		}
		dur, err := parseDuration(n.Value, n)
		if err != nil {
			d.fail(n, path, "%v", err)
			return
		}
		v.SetInt(int64(dur))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if n.Tag == "!!null" {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.value(n, path, v.Elem(), skip)
	case reflect.Struct:
		d.structure(n, path, v, skip)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			if n.Kind == yaml.ScalarNode && v.Type().Elem().Kind() == reflect.String && n.Tag != "!!null" {
				v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), reflect.ValueOf(n.Value).Convert(v.Type().Elem())))
				return
			}
			d.fail(n, path, "%s", notA(n, "a list"))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			d.value(item, IndexPath(path, i), s.Index(i), nil)
		}
		v.Set(s)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.fail(n, path, "%s", notA(n, "a mapping"))
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			elem := reflect.New(v.Type().Elem()).Elem()
			d.value(val, JoinPath(path, key.Value), elem, nil)
			m.SetMapIndex(reflect.ValueOf(key.Value).Convert(v.Type().Key()), elem)
		}
		v.Set(m)
	default:
		d.scalar(n, path, v)
	}
}

func (d *decoder) structure(n *yaml.Node, path string, v reflect.Value, skip []string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "%s", notA(n, "a mapping"))
		return
	}
	t := v.Type()
	type field struct {
		index    int
		required bool
		seen     bool
	}
	fields := map[string]*field{}
	var names []string
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" || tag == "-" || !t.Field(i).IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fields[name] = &field{index: i, required: opts == "required"}
		names = append(names, name)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if seen[key.Value] {
			d.fail(key, JoinPath(path, key.Value), "duplicate key")
			continue
		}
		seen[key.Value] = true
		if contains(skip, key.Value) {
			continue
		}
		f, ok := fields[key.Value]
		if !ok {
			// The keys the caller consumed are keys of this mapping too:
			// on_eror is a typo of on_error whoever reads it.
			known := append(append([]string(nil), skip...), names...)
			hint := ""
			if c := Closest(key.Value, known); c != "" {
				hint = fmt.Sprintf("; did you mean %q?", c)
			} else if len(names) > 0 {
				hint = "; known keys: " + strings.Join(known, ", ")
			}
			d.fail(key, JoinPath(path, key.Value), "unknown key%s", hint)
			continue
		}
		f.seen = true
		d.value(val, JoinPath(path, key.Value), v.Field(f.index), nil)
	}
	for _, name := range names {
		if f := fields[name]; f.required && !f.seen {
			d.fail(n, JoinPath(path, name), "missing required key")
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *decoder) scalar(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "%s", notA(n, "a single value"))
		return
	}
	s := n.Value
	switch v.Kind() {
	case reflect.String:
		if n.Tag == "!!null" {
			d.fail(n, path, "want a string, got null")
			return
		}
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			d.fail(n, path, "%s", notA(n, "true or false"))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, v.Type().Bits())
		if err != nil {
			d.fail(n, path, "%s", notA(n, "an integer"))
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, v.Type().Bits())
		if err != nil {
			d.fail(n, path, "%s", notA(n, "a non-negative integer"))
			return
		}
		v.SetUint(i)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), v.Type().Bits())
		if err != nil || math.IsNaN(f) {
			d.fail(n, path, "%s", notA(n, "a number"))
			return
		}
		v.SetFloat(f)
	default:
		panic(fmt.Sprintf("spec.Decode: unsupported field type %s", v.Type()))
	}
}

// ParseDuration reads 500ms, 5s, 1m, 2h, 1d as Go and Flink durations are
// written. A bare 0 is allowed; other bare numbers need a unit.
func ParseDuration(s string) (time.Duration, error) { return parseDuration(s, nil) }

// parseDuration is ParseDuration for the value of node n (nil: none),
// whose errors name the variable when the value came from ${VAR}.
func parseDuration(s string, n *yaml.Node) (time.Duration, error) {
	if n != nil && substitutionOf(n) != nil {
		dur, err := parseDuration(s, nil)
		if err != nil {
			return 0, fmt.Errorf("%s is not a duration such as 500ms, 5s or 1m", describe(n))
		}
		return dur, nil
	}
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseInt(days, 10, 64); err == nil {
			const maxDays = int64(math.MaxInt64 / (24 * time.Hour))
			switch {
			case n < 0:
				return 0, fmt.Errorf("duration %q is negative", s)
			case n > maxDays:
				return 0, fmt.Errorf("duration %q is too long (at most %dd)", s, maxDays)
			}
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
			return 0, fmt.Errorf("duration %q needs a unit, such as %sms or %ss", s, s, s)
		}
		return 0, fmt.Errorf("want a duration such as 500ms, 5s or 1m, got %q", s)
	}
	if dur < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return dur, nil
}

// byteUnits are the units of a size, IEC (KiB, powers of 1024) and SI
// (KB, powers of 1000).
var byteUnits = []struct {
	name string
	mul  float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"PiB", 1 << 50},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15}, {"B", 1},
}

// parseBytes reads a size: a number of bytes, or a number with a unit
// (512MiB, 1.5GiB, 100MB), or unlimited (-1).
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "unlimited" {
		return -1, nil
	}
	num, mul := s, 1.0
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(s, u.name); ok {
			num, mul = strings.TrimSpace(n), u.mul
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || math.IsNaN(f) || strings.ContainsAny(num, "eExXpP_") {
		return 0, fmt.Errorf("want a size such as 512MiB or 2GiB, or unlimited, got %q", s)
	}
	v := f * mul
	switch {
	case v >= math.MaxInt64:
		return 0, fmt.Errorf("size %q is too large", s)
	case v < 1:
		return 0, fmt.Errorf("%s bytes would fail every stateful pipeline: set a size, or unlimited", s)
	}
	return int64(v), nil
}
