package export

// ${VAR} references in the script: the file's references are written
// back wherever the values they were given would show (an option, a
// view's SQL, a path in a difference), so that a script holds no value
// of the environment it was exported in, as the file holds none.

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/spec"
	"github.com/etld/etld/pipeline/sql"
)

// unexpand returns text with the values that ${VAR}s gave the scalars at
// or below n written back as references: a scalar's whole value as the
// file has it ("${DIR}/in.csv"), else each variable's value ("${DIR}"
// where a connector quotes the directory of that path). It returns the
// names it wrote.
func unexpand(text string, n *yaml.Node) (string, []string) {
	var pairs []replacement
	for _, c := range substituted(n, nil) {
		written, names, _ := spec.Written(c)
		pairs = append(pairs, replacement{c.Value, written, names})
	}
	for _, v := range spec.Vars(n) {
		pairs = append(pairs, replacement{v.Value, "${" + v.Name + "}", []string{v.Name}})
	}
	return replaceValues(text, pairs)
}

type replacement struct {
	value, ref string
	names      []string
}

// replaceValues replaces each pair's value in text by its reference, the
// longest values first, in one pass (a reference is never replaced in).
func replaceValues(text string, pairs []replacement) (string, []string) {
	slices.SortStableFunc(pairs, func(a, b replacement) int { return len(b.value) - len(a.value) })
	var args []string
	var names []string
	for _, p := range pairs {
		if p.value == "" || !strings.Contains(text, p.value) {
			continue
		}
		args = append(args, p.value, p.ref)
		for _, n := range p.names {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if len(args) == 0 {
		return text, nil
	}
	return strings.NewReplacer(args...).Replace(text), names
}

// formatSQL writes a piece of SQL in canonical form (parse, then
// sql.Format), its ${VAR} references as the file has them: each is
// parsed as a name no text holds, which the formatted text gets back as
// the reference. SQL that does not parse that way (a reference inside a
// number) is written as the file has it.
func (x *exporter) formatSQL(s *spec.SQL, parse func(string) (sql.Node, error), path, element string) (string, error) {
	vars := s.Vars()
	written, ok := s.Written()
	if len(vars) == 0 {
		n, err := parse(s.Text)
		if err != nil {
			return "", err
		}
		return sql.Format(n), nil
	}
	for _, v := range vars {
		x.place(v.Name, fmt.Sprintf("%s (%s)", path, element))
	}
	if !ok {
		// Only a column's name holds a reference: write the values
		// back in the text as it was read.
		n, err := parse(s.Text)
		if err != nil {
			return "", err
		}
		pairs := make([]replacement, len(vars))
		for i, v := range vars {
			pairs[i] = replacement{v.Value, "${" + v.Name + "}", []string{v.Name}}
		}
		out, _ := replaceValues(sql.Format(n), pairs)
		return out, nil
	}
	stand := map[string]string{} // stand-in name -> reference
	in := spec.ReplaceVars(written, func(name string) string {
		ref := "${" + name + "}"
		for k, r := range stand {
			if r == ref {
				return k
			}
		}
		k := fmt.Sprintf("etldvar%dz", len(stand))
		for strings.Contains(written, k) {
			k += "x"
		}
		stand[k] = ref
		return k
	})
	n, err := parse(in)
	if err != nil {
		return strings.TrimSpace(written), nil
	}
	args := make([]string, 0, 2*len(stand))
	for k, ref := range stand {
		args = append(args, k, ref)
	}
	return strings.NewReplacer(args...).Replace(sql.Format(n)), nil
}

func parseQuery(text string) (sql.Node, error) { return sql.Parse(text) }
func parseExpr(text string) (sql.Node, error)  { return sql.ParseExpr(text) }
