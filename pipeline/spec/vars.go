package spec

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"weak"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/internal/redact"
)

// A value that came from ${VAR} is never quoted in an error: the error
// names the variable instead ("the value of ${DB_PORT} is not an
// integer"). expand remembers, for each scalar it substituted into, the
// text as written and the variables it used. The record is kept beside
// the node rather than in it, so that every holder of the node (the spec,
// a connector's options, a format's) finds it without passing a table
// around; weak keys let it go with the node.
var substituted sync.Map // weak.Pointer[yaml.Node] -> *substitution

type substitution struct {
	written string   // the scalar as the file has it, ${VAR} and all
	names   []string // the variables used, in order
	values  []string // the value each name gave
	// secrets are the values among them that are secret
	// (redact.Classify: by the variable's name or the option it is used
	// in); the others are shown in errors like any value of the file.
	secrets []redact.Secret
}

func remember(n *yaml.Node, s *substitution) {
	key := weak.Make(n)
	substituted.Store(key, s)
	runtime.AddCleanup(n, func(key weak.Pointer[yaml.Node]) { substituted.Delete(key) }, key)
}

func substitutionOf(n *yaml.Node) *substitution {
	if n == nil {
		return nil
	}
	if s, ok := substituted.Load(weak.Make(n)); ok {
		return s.(*substitution)
	}
	return nil
}

// FromVar reports whether n's value, or a value anywhere below n, came
// from ${VAR}.
func FromVar(n *yaml.Node) bool {
	if n == nil {
		return false
	}
	if substitutionOf(n) != nil {
		return true
	}
	for _, c := range n.Content {
		if FromVar(c) {
			return true
		}
	}
	return false
}

func secretsBelow(n *yaml.Node, out []redact.Secret) []redact.Secret {
	if n == nil {
		return out
	}
	if s := substitutionOf(n); s != nil {
		out = append(out, s.secrets...)
	}
	for _, c := range n.Content {
		out = secretsBelow(c, out)
	}
	return out
}

// Redact returns msg with every secret value substituted from ${VAR}
// into n or below it replaced by ${VAR}, in every form and in pieces of 4
// bytes or more (internal/redact). It is for messages that others wrote
// about n: a connector's complaint about an option, a driver's DSN parse
// error that quotes half a password. A value is secret when its
// variable's name says so or it is used in a credential option
// (redact.Classify); a path or a topic from ${VAR} is shown.
func Redact(n *yaml.Node, msg string) string {
	secrets := secretsBelow(n, nil)
	if len(secrets) == 0 {
		return msg
	}
	return redact.New(secrets).String(msg)
}

// describe names n's value for a message: quoted as it is, or, when it
// came from ${VAR}, by the variable ("the value of ${PORT}") or by the
// text as written ("the value of \"${HOST}:${PORT}\"").
func describe(n *yaml.Node) string {
	s := substitutionOf(n)
	if s == nil {
		return strconv.Quote(n.Value)
	}
	if len(s.names) == 1 && s.written == "${"+s.names[0]+"}" {
		return "the value of " + s.written
	}
	return "the value of " + strconv.Quote(s.written)
}

// notA says that n's value is not what it should be: "want an integer,
// got \"x\"", or "the value of ${ROWS} is not an integer".
func notA(n *yaml.Node, what string) string {
	if substitutionOf(n) != nil {
		return fmt.Sprintf("%s is not %s", describe(n), what)
	}
	return fmt.Sprintf("want %s, got %s", what, kindName(n))
}

// expandScalar substitutes ${VAR} in n's value and remembers what it did.
func (p *parser) expandScalar(n *yaml.Node, path string) {
	written := n.Value
	var names, values []string
	var secrets []redact.Secret
	n.Value = varRE.ReplaceAllStringFunc(n.Value, func(m string) string {
		if m == "$$" {
			return "$"
		}
		if m == "${" {
			// The rest of the value may be a secret: not shown.
			p.errs.Addf(p.pos(n), path, `unclosed variable reference: "${" without "}"; write ${NAME}, or $$ for a literal $`)
			return m
		}
		name := m[2 : len(m)-1]
		if !nameRE.MatchString(name) {
			p.errs.Addf(p.pos(n), path, "invalid variable reference %q: want ${NAME} with letters, digits and _", m)
			return m
		}
		v, ok := p.lookup(name)
		if !ok {
			p.errs.Addf(p.pos(n), path, "environment variable %s is not set", name)
			return ""
		}
		names = append(names, name)
		values = append(values, v)
		secrets = append(secrets, redact.Classify(path, name, v)...)
		return v
	})
	if len(names) > 0 {
		s := &substitution{written: written, names: names, values: values, secrets: secrets}
		remember(n, s)
		if p.substituted == nil {
			p.substituted = map[string]*substitution{}
		}
		p.substituted[path] = s
	}
}

// redactErrors hides, in each error the parser found, the values that
// were substituted into the field the error is about: the checks of the
// pipeline's own keys quote what they refuse ("unknown mode \"x\"").
func (p *parser) redactErrors() {
	for _, e := range p.errs {
		if s := p.substituted[e.Path]; s != nil {
			e.Msg = redact.New(s.secrets).String(e.Msg)
		}
	}
}

// errorAt is Errorf for an error about node n: a message that a check
// wrote with n's value in it (a type name, a duration) is redacted.
func errorAt(file string, n *yaml.Node, path, format string, args ...any) *Error {
	e := Errorf(At(file, n), path, format, args...)
	if FromVar(n) {
		e.Msg = Redact(n, e.Msg)
	}
	return e
}

// Written returns the text of n's value as the file has it, ${VAR} and
// all, when the value came from ${VAR} expansion (ok false otherwise).
// etld export flink writes it instead of the value, so that an exported
// script keeps its references and never holds what they stand for.
func Written(n *yaml.Node) (written string, names []string, ok bool) {
	s := substitutionOf(n)
	if s == nil {
		return "", nil, false
	}
	return s.written, s.names, true
}

// Var is a ${NAME} reference of the file and the value it was given.
type Var struct{ Name, Value string }

// Vars returns the references substituted into n or below it, in file
// order, with their values: etld export flink writes the reference back
// wherever a value shows.
func Vars(n *yaml.Node) []Var {
	var out []Var
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil {
			return
		}
		if s := substitutionOf(n); s != nil {
			for i, name := range s.names {
				out = append(out, Var{Name: name, Value: s.values[i]})
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return out
}

// ReplaceVars returns written, a text as the file has it, with each
// ${NAME} replaced by ref(NAME) and each $$ by $: the text expansion
// made, with what the caller chooses in place of the values.
func ReplaceVars(written string, ref func(name string) string) string {
	return varRE.ReplaceAllStringFunc(written, func(m string) string {
		switch {
		case m == "$$":
			return "$"
		case len(m) > 3:
			return ref(m[2 : len(m)-1])
		}
		return m
	})
}

// SecretValues returns the values of the secret variables (by name or
// by the option they are used in) substituted into n or below it, whole
// (a password inside a DSN is one of them). etld export flink keeps
// every option that holds one out of the script.
func SecretValues(n *yaml.Node) []string {
	var out []string
	for _, s := range secretsBelow(n, nil) {
		if s.Value != "" {
			out = append(out, s.Value)
		}
	}
	return out
}
