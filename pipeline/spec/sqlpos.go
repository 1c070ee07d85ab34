package spec

import (
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// SQL is a piece of SQL text from the file with what it takes to turn a
// position inside the text into a position in the file.
type SQL struct {
	Text string
	Pos  Pos // where the text begins
	src  *scalar
	// written is the text as the file has it when a ${VAR} was
	// substituted into it, "" otherwise; sub is that substitution.
	written string
	sub     *substitution
}

// Vars returns the ${VAR} references substituted into the scalar the SQL
// is in, with their values.
func (s *SQL) Vars() []Var {
	if s == nil || s.sub == nil {
		return nil
	}
	out := make([]Var, len(s.sub.names))
	for i, name := range s.sub.names {
		out[i] = Var{Name: name, Value: s.sub.values[i]}
	}
	return out
}

// Written returns the SQL as the file has it, its ${VAR} references
// unexpanded, when a ${VAR} was substituted into it (ok false
// otherwise): etld export flink writes the references, never the values.
func (s *SQL) Written() (written string, ok bool) {
	if s == nil || s.written == "" {
		return "", false
	}
	return s.written, true
}

// scalar is the YAML scalar a piece of SQL was taken from, with the file's
// lines: the text YAML read from them, once folded and unescaped, is
// matched back to them character by character.
type scalar struct {
	lines  []string
	line   int // the node's line and column (in characters), from 1
	col    int
	style  yaml.Style
	value  string
	offset int // the byte where the SQL text begins in value
}

// sqlIn makes the SQL text that begins at byte offset of the scalar n's
// value.
func (p *parser) sqlIn(n *yaml.Node, offset int, text string) *SQL {
	s := &SQL{Text: text, Pos: p.pos(n)}
	if sub := substitutionOf(n); sub != nil {
		s.sub = sub
		if offset == 0 {
			s.written = sub.written
		}
	}
	if p.lines == nil {
		return s
	}
	s.src = &scalar{lines: p.lines, line: n.Line, col: n.Column, style: n.Style, value: n.Value, offset: offset}
	if offset > 0 {
		if pos, ok := s.src.locate(offset); ok {
			s.Pos.Line, s.Pos.Col = pos.Line, pos.Col
		}
	}
	return s
}

// FilePos maps a 1-based line and column (in characters) inside the SQL
// text to the file.
func (s *SQL) FilePos(line, col int) Pos {
	if s == nil {
		return Pos{}
	}
	if s.src != nil {
		if p, ok := s.src.locate(s.src.offset + byteOffset(s.Text, line, col)); ok {
			p.File = s.Pos.File
			return p
		}
	}
	// A value that does not match the file (a ${VAR} was expanded in it):
	// count from where the text begins.
	p := s.Pos
	p.Line += line - 1
	if line == 1 {
		p.Col += col - 1
	} else {
		p.Col = col
	}
	return p
}

// byteOffset is the byte in text at a 1-based line and column; past the
// end of a line it is the line's end, past the end of text its length.
func byteOffset(text string, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	for c := 1; c < col && off < len(text) && text[off] != '\n'; c++ {
		_, size := utf8.DecodeRuneInString(text[off:])
		off += size
	}
	return off
}

// locate finds where the byte at offset of the scalar's value was written.
// It walks the value and the file together: equal bytes match; what YAML
// dropped (indentation, line breaks folded into one space, trailing
// blanks, the second quote of ”, escape sequences) is stepped over. It
// fails when the two differ otherwise.
func (sc *scalar) locate(offset int) (Pos, bool) {
	c := cursor{lines: sc.lines}
	switch sc.style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		// The text starts on the line after the indicator, at the
		// indentation of its first non-blank line.
		c.line = sc.line
		c.strip = blockIndent(sc.lines, sc.line)
		if c.line < len(c.lines) {
			c.i = leadingSpaces(c.lines[c.line], c.strip)
		}
	default:
		c.line = sc.line - 1
		if c.line >= 0 && c.line < len(c.lines) {
			c.i = byteAtCol(c.lines[c.line], sc.col)
		}
		if sc.style == yaml.DoubleQuotedStyle || sc.style == yaml.SingleQuotedStyle {
			c.i++ // the opening quote
		}
	}
	if c.line < 0 || c.line >= len(c.lines) {
		return Pos{}, false
	}
	v := sc.value
	for i := 0; ; {
		if i >= len(v) {
			return c.pos(), true
		}
		ch, ok := c.peek()
		if !ok {
			return Pos{}, false
		}
		escape := sc.style == yaml.DoubleQuotedStyle && ch == '\\'
		if escape && c.after() == '\n' {
			c.next() // an escaped line break: not in the value
			c.next()
			continue
		}
		if !escape && v[i] != ch && !(v[i] == ' ' && ch == '\n') {
			if ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' {
				c.next() // indentation, a blank line, trailing blanks
				continue
			}
			return Pos{}, false
		}
		if i >= offset {
			return c.pos(), true
		}
		switch {
		case escape:
			c.next()
			for range 1 + escapeDigits(c) {
				c.next()
			}
			_, size := utf8.DecodeRuneInString(v[i:])
			i += size
		case sc.style == yaml.SingleQuotedStyle && ch == '\'':
			i++
			c.next()
			c.next() // '' is one '
		default: // the same byte, or a line break folded into a space
			i++
			c.next()
		}
	}
}

// escapeDigits is the number of hex digits after the letter of the escape
// sequence at c (\x41, \u00e9, \U0001F600).
func escapeDigits(c cursor) int {
	switch e, _ := c.peek(); e {
	case 'x':
		return 2
	case 'u':
		return 4
	case 'U':
		return 8
	}
	return 0
}

// cursor walks the file's lines byte by byte, a line break reading as
// '\n'; on each new line it skips strip columns of indentation.
type cursor struct {
	lines []string
	line  int // 0-based
	i     int // byte in lines[line]
	strip int
}

func (c *cursor) peek() (byte, bool) {
	l := c.lines[c.line]
	if c.i < len(l) {
		return l[c.i], true
	}
	return '\n', c.line+1 < len(c.lines)
}

// after is the byte after the one at c, '\n' at the end of the line.
func (c *cursor) after() byte {
	if l := c.lines[c.line]; c.i+1 < len(l) {
		return l[c.i+1]
	}
	return '\n'
}

func (c *cursor) next() {
	if c.i < len(c.lines[c.line]) {
		c.i++
		return
	}
	if c.line+1 < len(c.lines) {
		c.line++
		c.i = leadingSpaces(c.lines[c.line], c.strip)
	}
}

func (c *cursor) pos() Pos {
	l := c.lines[c.line]
	return Pos{Line: c.line + 1, Col: utf8.RuneCountInString(l[:min(c.i, len(l))]) + 1}
}

// blockIndent is the indentation of a block scalar's first non-blank
// line, from the 0-based line first.
func blockIndent(lines []string, first int) int {
	for _, l := range lines[min(first, len(lines)):] {
		if t := strings.TrimLeft(l, " "); strings.TrimSpace(t) != "" {
			return len(l) - len(t)
		}
	}
	return 0
}

// leadingSpaces is the number of spaces l starts with, at most max.
func leadingSpaces(l string, max int) int {
	n := 0
	for n < max && n < len(l) && l[n] == ' ' {
		n++
	}
	return n
}

// byteAtCol is the byte where the 1-based column col (in characters) of
// l begins.
func byteAtCol(l string, col int) int {
	i := 0
	for c := 1; c < col && i < len(l); c++ {
		_, size := utf8.DecodeRuneInString(l[i:])
		i += size
	}
	return i
}
