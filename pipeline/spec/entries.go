package spec

import (
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/row"
)

// The readers of one entry of the file: a source (with its schema and
// bad-record policy), a transform, a sink.

func (p *parser) source(n *yaml.Node, path string) *Source {
	src := &Source{Pos: p.pos(n), Path: path, Options: n}
	f := p.fields(n, path, nil)
	src.Name = p.required(f, n, path, "name")
	src.Type = p.required(f, n, path, "type")
	if t, ok := f["type"]; ok {
		src.TypePos = p.pos(t)
	}
	if v, ok := f["schema"]; ok {
		src.Schema = p.schema(v, JoinPath(path, "schema"))
	}
	if v, ok := f["key"]; ok {
		src.Key = p.strList(v, JoinPath(path, "key"))
	}
	src.OnError = p.onError(f, path)
	if v, ok := f["watermark"]; ok {
		src.Watermark = p.sql(v, JoinPath(path, "watermark"), "the watermark expression, e.g. `event_time - INTERVAL '5' SECOND`")
	}
	if v, ok := f["idle_timeout"]; ok {
		ipath := JoinPath(path, "idle_timeout")
		d, err := parseDuration(p.str(v, ipath), v)
		switch {
		case err != nil:
			p.errs.Addf(p.pos(v), ipath, "%v (0 never marks a split idle)", err)
		case src.Watermark == nil:
			p.errs.Addf(p.pos(v), ipath, "idle_timeout without a watermark: it says when an idle split stops holding the watermark back")
		}
		src.IdleTimeout = d
	}
	return src
}

func (p *parser) schema(n *yaml.Node, path string) []Column {
	var cols []Column
	seen := map[string]bool{}
	items := p.list(n, path)
	for i := 0; i < len(items); i++ {
		c := items[i]
		cpath := IndexPath(path, i)
		text := strings.TrimSpace(p.str(c, cpath))
		if text == "" {
			continue
		}
		if n.Style&yaml.FlowStyle != 0 && c.Style == 0 && unclosed(text) {
			// [d DECIMAL(10, 2)] is two items to YAML. Say so once, and
			// take the pieces after the comma as part of this column.
			whole := text
			for i+1 < len(items) && unclosed(whole) && items[i+1].Kind == yaml.ScalarNode {
				i++
				whole += ", " + strings.TrimSpace(items[i].Value)
			}
			p.errs.Addf(p.pos(c), cpath, "column %q is cut at its comma: in a flow list [...] a comma ends the item; quote it, [%q], or write the schema as a block list, one %q a line", whole, whole, "- "+whole)
			continue
		}
		col := Column{Pos: p.pos(c), Path: cpath}
		name, rest, _ := strings.Cut(text, " ")
		name = strings.Trim(name, "`")
		rest = strings.TrimSpace(rest)
		col.Name = name
		if !nameRE.MatchString(name) {
			p.errs.Addf(col.Pos, cpath, "invalid column name %q", name)
		}
		if seen[strings.ToLower(name)] {
			p.errs.Addf(col.Pos, cpath, "duplicate column %q", name)
		}
		seen[strings.ToLower(name)] = true
		if expr, ok := cutPrefixFold(rest, "AS "); ok {
			// text is c.Value trimmed, and ends with expr.
			lead := len(c.Value) - len(strings.TrimLeft(c.Value, " \t\n"))
			col.Computed = p.sqlIn(c, lead+len(text)-len(expr), expr)
			if sub := substitutionOf(c); sub != nil {
				// The expression as written: cut from the text as written
				// as expr is from the value.
				_, wrest, _ := strings.Cut(strings.TrimSpace(sub.written), " ")
				if wexpr, ok := cutPrefixFold(strings.TrimSpace(wrest), "AS "); ok {
					col.Computed.written = wexpr
				}
			}
		} else {
			var ok bool
			rest, col.Metadata, ok = p.metadataClause(rest, name, col.Pos, cpath)
			t, err := row.ParseType(rest)
			if err != nil && ok {
				p.errs.Addf(col.Pos, cpath, "column %q: %v (write each column as \"name TYPE\")", name, err)
			}
			col.Type = t
		}
		cols = append(cols, col)
	}
	return cols
}

// unclosed reports whether s opens more parentheses, or composite type
// brackets (MAP<STRING, INT>), than it closes.
func unclosed(s string) bool {
	if strings.Count(s, "(") > strings.Count(s, ")") {
		return true
	}
	// Only a composite type's < counts: c AS a < b opens nothing.
	return compositeRE.MatchString(s) && strings.Count(s, "<") > strings.Count(s, ">")
}

var compositeRE = regexp.MustCompile(`(?i)\b(ARRAY|MAP|ROW)\s*<`)

var metadataRE = regexp.MustCompile(`(?i)^(.*?)\s+METADATA(?:\s+FROM\s+'([^']*)')?(\s+VIRTUAL)?\s*$`)

// metadataClause splits `TYPE METADATA [FROM 'key'] [VIRTUAL]` into the
// type and the metadata key. VIRTUAL (Flink: not written back by a sink)
// is accepted and changes nothing: etld's sources only read.
func (p *parser) metadataClause(rest, name string, pos Pos, path string) (typ, key string, ok bool) {
	if !strings.Contains(strings.ToUpper(rest), "METADATA") {
		return rest, "", true
	}
	m := metadataRE.FindStringSubmatch(rest)
	if m == nil {
		p.errs.Addf(pos, path, "column %q: write a metadata column as \"name TYPE METADATA [FROM 'key'] [VIRTUAL]\"", name)
		return rest, "", false
	}
	key = m[2]
	if key == "" {
		key = name
	}
	return m[1], key, true
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return strings.TrimSpace(s[len(prefix):]), true
	}
	return s, false
}

func (p *parser) transform(n *yaml.Node, path string) *Transform {
	tr := &Transform{Pos: p.pos(n), Path: path}
	f := p.fields(n, path, []string{"name", "sql", "state_ttl", "uid", "renamed_from"})
	tr.Name = p.required(f, n, path, "name")
	if v, ok := f["uid"]; ok {
		tr.UID, tr.UIDPos = p.str(v, JoinPath(path, "uid")), p.pos(v)
		if tr.UID == "" || strings.ContainsAny(tr.UID, "/#") {
			p.errs.Addf(p.pos(v), JoinPath(path, "uid"), "uid %q: want a non-empty name without '/' or '#' (it names the transform's state)", tr.UID)
		}
	}
	if v, ok := f["renamed_from"]; ok {
		tr.RenamedFrom, tr.RenamedFromPos = p.str(v, JoinPath(path, "renamed_from")), p.pos(v)
		if tr.RenamedFrom == "" {
			p.errs.Addf(p.pos(v), JoinPath(path, "renamed_from"), "renamed_from: want the transform's former name")
		}
	}
	if v, ok := f["state_ttl"]; ok {
		d := p.stateTTL(v, JoinPath(path, "state_ttl"))
		tr.StateTTL, tr.StateTTLPos = &d, p.pos(v)
	}
	if v, ok := f["sql"]; ok {
		tr.SQL = p.sql(v, JoinPath(path, "sql"), "the transform's query, e.g. `SELECT ... FROM ...`")
	} else if n.Kind == yaml.MappingNode {
		p.errs.Addf(p.pos(n), JoinPath(path, "sql"), "missing required key")
	}
	return tr
}

// stateTTL reads a state_ttl value: a duration of at least 1ms (Flink's
// TTL counts milliseconds), or 0 for never.
func (p *parser) stateTTL(v *yaml.Node, path string) time.Duration {
	d, err := parseDuration(p.str(v, path), v)
	switch {
	case err != nil:
		p.errs.Addf(p.pos(v), path, "%v (0 keeps state forever)", err)
	case d > 0 && d < time.Millisecond:
		p.errs.Addf(p.pos(v), path, "state_ttl %s is below a millisecond, the unit state ages are counted in", d)
		d = 0
	}
	return d
}

func (p *parser) sink(n *yaml.Node, path string) *Sink {
	sk := &Sink{Pos: p.pos(n), Path: path, Options: n, Mode: "auto"}
	f := p.fields(n, path, nil)
	sk.Name = p.required(f, n, path, "name")
	sk.Type = p.required(f, n, path, "type")
	if t, ok := f["type"]; ok {
		sk.TypePos = p.pos(t)
	}
	if v, ok := f["from"]; ok {
		sk.From, sk.FromPos = p.str(v, JoinPath(path, "from")), p.pos(v)
	}
	if v, ok := f["mode"]; ok {
		sk.Mode, sk.ModePos = p.str(v, JoinPath(path, "mode")), p.pos(v)
		switch sk.Mode {
		case "auto", "append", "upsert", "retract":
		default:
			p.errs.Addf(p.pos(v), JoinPath(path, "mode"), "unknown mode %q: want auto, append, upsert or retract", sk.Mode)
		}
	}
	if v, ok := f["key"]; ok {
		sk.Key, sk.KeyPos = p.strList(v, JoinPath(path, "key")), p.pos(v)
	}
	sk.OnError = p.onError(f, path)
	return sk
}
