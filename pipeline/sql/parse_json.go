package sql

import (
	"strings"

	"github.com/etld/etld/pipeline/row"
)

// jsonFuncs are the calls whose arguments are followed by SQL/JSON
// clauses (JSONClauses).
var jsonFuncs = map[string]bool{
	"JSON_VALUE": true, "JSON_QUERY": true, "JSON_EXISTS": true, "JSON_OBJECT": true, "JSON_ARRAY": true,
	"JSON_OBJECTAGG": true, "JSON_ARRAYAGG": true,
}

// parseJSONCall reads the arguments and clauses of a SQL/JSON function,
// the current token the first one after "(" (which is not ")"), in the
// order SQL writes them: arguments, ON NULL, RETURNING, the wrapper, ON
// EMPTY / ON ERROR.
func (p *parser) parseJSONCall(call *Call, open Pos) *Error {
	j := &JSONClauses{}
	call.JSON = j
	if err := p.jsonArgs(call); err != nil {
		return err
	}
	if p.onNullAhead() {
		if !strings.HasPrefix(call.Name, "JSON_OBJECT") && !strings.HasPrefix(call.Name, "JSON_ARRAY") {
			return p.errAt(p.tok(), "ON NULL belongs to JSON_OBJECT, JSON_ARRAY and their aggregates, not "+call.Name)
		}
		j.OnNull = p.next().up
		p.next()
		p.next()
	}
	if call.Name == "JSON_VALUE" || call.Name == "JSON_QUERY" {
		if err := p.jsonReturning(j); err != nil {
			return err
		}
	}
	if call.Name == "JSON_QUERY" {
		if err := p.jsonWrapper(j); err != nil {
			return err
		}
	}
	if call.Name == "JSON_VALUE" || call.Name == "JSON_QUERY" || call.Name == "JSON_EXISTS" {
		if err := p.jsonOnClauses(call, j); err != nil {
			return err
		}
	}
	if t := p.tok(); t.kind == tokWord && !t.is(")") {
		switch {
		case t.is("RETURNING"):
			return p.errAt(t, call.Name+" has no RETURNING clause here: RETURNING comes right after the path of JSON_VALUE and JSON_QUERY")
		case t.is("WITH") || t.is("WITHOUT"):
			return p.errAt(t, "WRAPPER clauses belong to JSON_QUERY")
		}
	}
	return p.expectClose(")", call.Name+"(", open)
}

// jsonArgs reads a SQL/JSON function's arguments: JSON_OBJECT's [KEY] k
// VALUE v pairs, JSON_ARRAY's values (both up to ON NULL), or the
// document and path of the others.
func (p *parser) jsonArgs(call *Call) *Error {
	switch call.Name {
	case "JSON_OBJECT":
		call.JSON.Keyed = true
		for !p.onNullAhead() {
			if t := p.tok(); t.is("KEY") && !p.peek(1).is("VALUE") && !p.peek(1).isPunct(",") {
				p.next()
			}
			k, err := p.expectExpr("JSON_OBJECT(")
			if err != nil {
				return err
			}
			if err := p.expectWord("VALUE", "after a JSON_OBJECT key, as in JSON_OBJECT(KEY 'k' VALUE v)"); err != nil {
				return err
			}
			v, err := p.expectExpr("VALUE")
			if err != nil {
				return err
			}
			call.Args = append(call.Args, k, v)
			if !p.acceptPunct(",") {
				break
			}
		}
	case "JSON_OBJECTAGG":
		// One [KEY] k VALUE v pair.
		call.JSON.Keyed = true
		if t := p.tok(); t.is("KEY") && !p.peek(1).is("VALUE") && !p.peek(1).isPunct(",") {
			p.next()
		}
		k, err := p.expectExpr("JSON_OBJECTAGG(")
		if err != nil {
			return err
		}
		if err := p.expectWord("VALUE", "after the JSON_OBJECTAGG key, as in JSON_OBJECTAGG(KEY k VALUE v)"); err != nil {
			return err
		}
		v, err := p.expectExpr("VALUE")
		if err != nil {
			return err
		}
		call.Args = append(call.Args, k, v)
	case "JSON_ARRAYAGG":
		v, err := p.expectExpr("JSON_ARRAYAGG(")
		if err != nil {
			return err
		}
		call.Args = append(call.Args, v)
		if p.tok().is("ORDER") && p.peek(1).is("BY") {
			// Flink 2.3 takes ORDER BY here and ignores it: the items stay
			// in arrival order. etld reads it and does the same.
			p.next()
			p.next()
			for {
				if _, err := p.expectExpr("ORDER BY"); err != nil {
					return err
				}
				if t := p.tok(); t.is("ASC") || t.is("DESC") {
					p.next()
				}
				if t := p.tok(); t.is("NULLS") && (p.peek(1).is("FIRST") || p.peek(1).is("LAST")) {
					p.next()
					p.next()
				}
				if !p.acceptPunct(",") {
					break
				}
			}
		}
	case "JSON_ARRAY":
		for !p.onNullAhead() {
			v, err := p.expectExpr("JSON_ARRAY(")
			if err != nil {
				return err
			}
			call.Args = append(call.Args, v)
			if !p.acceptPunct(",") {
				break
			}
		}
	default:
		for i := 0; i < 2; i++ {
			e, err := p.expectExpr(call.Name + "(")
			if err != nil {
				return err
			}
			call.Args = append(call.Args, e)
			if i == 0 && !p.acceptPunct(",") {
				return p.expected(`"," and the JSON path, as in `+call.Name+`(doc, '$.a')`, ",")
			}
		}
	}
	return nil
}

// jsonReturning reads the optional RETURNING type of JSON_VALUE and
// JSON_QUERY.
func (p *parser) jsonReturning(j *JSONClauses) *Error {
	if !p.tok().is("RETURNING") {
		return nil
	}
	p.next()
	j.ReturningAt = p.tok().pos
	text, err := p.returningType()
	if err != nil {
		return err
	}
	typ, terr := row.ParseType(text)
	if terr != nil {
		return &Error{Pos: j.ReturningAt, Msg: terr.Error(), Expected: []string{"type"}}
	}
	j.Returning, j.ReturningText = typ, text
	return nil
}

// jsonOnClauses reads the `behaviour ON EMPTY` and `behaviour ON ERROR`
// clauses, EMPTY first, each at most once (JSON_EXISTS has only ON ERROR).
func (p *parser) jsonOnClauses(call *Call, j *JSONClauses) *Error {
	for {
		b, ok, err := p.jsonBehavior(call)
		if err != nil || !ok {
			return err
		}
		on := p.tok()
		if err := p.expectWord("ON", "after "+b.Kind+" in "+call.Name+": ON EMPTY or ON ERROR"); err != nil {
			return err
		}
		target := &j.OnError
		switch w := p.tok(); {
		case w.is("EMPTY") && call.Name != "JSON_EXISTS":
			if j.OnError.Kind != "" {
				return p.errAt(w, "ON EMPTY comes before ON ERROR")
			}
			target = &j.OnEmpty
		case w.is("ERROR"):
		default:
			if call.Name == "JSON_EXISTS" {
				return p.expected("ERROR after ON: JSON_EXISTS has only an ON ERROR clause", "ERROR")
			}
			return p.expected("EMPTY or ERROR after ON", "EMPTY", "ERROR")
		}
		if target.Kind != "" {
			return p.errAt(on, "ON "+p.tok().up+" is written twice")
		}
		p.next()
		*target = b
	}
}

// onNullAhead reports whether the next tokens are {NULL | ABSENT} ON NULL.
func (p *parser) onNullAhead() bool {
	t := p.tok()
	return (t.is("NULL") || t.is("ABSENT")) && p.peek(1).is("ON") && p.peek(2).is("NULL")
}

// returningType gathers a type name after RETURNING, stopping at the
// clause words that may follow it.
func (p *parser) returningType() (string, *Error) {
	var b strings.Builder
	depth, angles := 0, 0
	for {
		t := p.tok()
		switch {
		case depth == 0 && angles == 0 && (t.is("NULL") || t.is("ERROR") || t.is("DEFAULT") || t.is("ON") || t.is("WITH") || t.is("WITHOUT") || t.is("EMPTY")):
			if b.Len() == 0 {
				return "", p.expected("a type name after RETURNING", "type")
			}
			return b.String(), nil
		case t.kind == tokWord:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "(") && !strings.HasSuffix(b.String(), "<") && !strings.HasSuffix(b.String(), " ") {
				b.WriteByte(' ')
			}
			b.WriteString(t.text)
		case t.kind == tokInt && depth > 0:
			b.WriteString(t.text)
		case t.isPunct("("):
			depth++
			b.WriteByte('(')
		case t.isPunct(")") && depth > 0:
			depth--
			b.WriteByte(')')
		case t.isPunct(",") && (depth > 0 || angles > 0):
			b.WriteString(", ")
		case t.isPunct("<"):
			angles++
			b.WriteByte('<')
		case t.isPunct(">") && angles > 0:
			angles--
			b.WriteByte('>')
		default:
			if b.Len() == 0 {
				return "", p.expected("a type name after RETURNING", "type")
			}
			return b.String(), nil
		}
		p.next()
	}
}

// jsonWrapper reads JSON_QUERY's optional wrapper clause.
func (p *parser) jsonWrapper(j *JSONClauses) *Error {
	t := p.tok()
	switch {
	case t.is("WITHOUT"):
		p.next()
		j.Wrapper = "WITHOUT"
	case t.is("WITH"):
		p.next()
		j.Wrapper = "WITH UNCONDITIONAL"
		if p.acceptWord("CONDITIONAL") {
			j.Wrapper = "WITH CONDITIONAL"
		} else {
			p.acceptWord("UNCONDITIONAL")
		}
	default:
		return nil
	}
	p.acceptWord("ARRAY")
	return p.expectWord("WRAPPER", "in "+j.Wrapper+" [ARRAY] WRAPPER")
}

// jsonBehavior reads the behaviour before ON EMPTY / ON ERROR, if any.
func (p *parser) jsonBehavior(call *Call) (JSONBehavior, bool, *Error) {
	t := p.tok()
	b := JSONBehavior{At: t.pos}
	switch {
	case t.is("ERROR"), t.is("NULL") && call.Name != "JSON_EXISTS":
		b.Kind = t.up
		p.next()
	case call.Name == "JSON_VALUE" && t.is("DEFAULT"):
		p.next()
		x, err := p.expectExpr("DEFAULT")
		if err != nil {
			return b, false, err
		}
		b.Kind, b.Arg = "DEFAULT", len(call.Args)
		call.Args = append(call.Args, x)
	case call.Name == "JSON_EXISTS" && (t.is("TRUE") || t.is("FALSE") || t.is("UNKNOWN")):
		b.Kind = t.up
		p.next()
	case call.Name == "JSON_QUERY" && t.is("EMPTY") && (p.peek(1).is("ARRAY") || p.peek(1).is("OBJECT")):
		b.Kind = "EMPTY " + p.peek(1).up
		p.next()
		p.next()
	default:
		return b, false, nil
	}
	return b, true, nil
}
