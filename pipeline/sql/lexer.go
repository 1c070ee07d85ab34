package sql

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// lexer turns SQL text into tokens. It stops at the first malformed token,
// which becomes a tokError carrying the message; the parser reports it only
// if it gets that far, so an earlier syntax error wins.
type lexer struct {
	src  string
	off  int
	line int
	col  int
}

// lex tokenises src. The last token is always tokEOF or tokError.
func lex(src string) []token { return lexFrom(src, Pos{Line: 1, Col: 1}) }

// lexFrom tokenises src from at (a place in src), for a parser that read
// the text before at itself (a MATCH_RECOGNIZE pattern).
func lexFrom(src string, at Pos) []token {
	l := &lexer{src: src, off: at.Offset, line: at.Line, col: at.Col}
	toks := make([]token, 0, (len(src)-at.Offset)/4+1)
	end := at
	for {
		t := l.next()
		if t.kind == tokEOF {
			// "Unexpected end of query" is clearest right after the last
			// token, not on the blank line or comment after it.
			t.pos = end
		}
		end = l.pos()
		toks = append(toks, t)
		if t.kind == tokEOF || t.kind == tokError {
			return toks
		}
	}
}

func (l *lexer) pos() Pos { return Pos{Line: l.line, Col: l.col, Offset: l.off} }

// advance moves n bytes forward, keeping line and column (in characters).
func (l *lexer) advance(n int) {
	end := min(l.off+n, len(l.src))
	for ; l.off < end; l.off++ {
		c := l.src[l.off]
		switch {
		case c == '\n':
			l.line++
			l.col = 1
		case c&0xC0 != 0x80: // not a UTF-8 continuation byte
			l.col++
		}
	}
}

func (l *lexer) peekByte(k int) byte {
	if l.off+k < len(l.src) {
		return l.src[l.off+k]
	}
	return 0
}

func (l *lexer) errorAt(p Pos, msg string) token {
	return token{kind: tokError, pos: p, end: p.Offset, text: msg}
}

func (l *lexer) next() token {
	if t, ok := l.skipSpace(); !ok {
		return t
	}
	start := l.pos()
	if l.off >= len(l.src) {
		return token{kind: tokEOF, pos: start, end: l.off}
	}
	c := l.src[l.off]
	switch {
	case c == '\'':
		return l.quoted(start, '\'', tokString)
	case c == '`':
		return l.quoted(start, '`', tokQuoted)
	case c == '"':
		return l.errorAt(start, "double quotes are not used in etld SQL: write 'text' for a string or `name` for a name")
	case (c == 'x' || c == 'X') && l.peekByte(1) == '\'':
		l.advance(1)
		t := l.quoted(start, '\'', tokBytes)
		if t.kind == tokError {
			return t
		}
		t.pos = start
		return l.checkHex(t)
	case isDigit(c) || (c == '.' && isDigit(l.peekByte(1))):
		return l.number(start)
	case c < utf8.RuneSelf && isIdentStart(rune(c)):
		return l.word(start)
	case c >= utf8.RuneSelf:
		r, size := utf8.DecodeRuneInString(l.src[l.off:])
		if r != utf8.RuneError && isIdentStart(r) {
			return l.word(start)
		}
		if r == utf8.RuneError && size <= 1 {
			return l.errorAt(start, "invalid UTF-8 in query text")
		}
		return l.errorAt(start, "unexpected character "+quoteRune(r))
	}
	return l.punct(start)
}

// skipSpace skips blanks and comments. It returns ok=false with an error
// token for an unterminated block comment.
func (l *lexer) skipSpace() (token, bool) {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.advance(1)
		case c == '-' && l.peekByte(1) == '-':
			i := strings.IndexByte(l.src[l.off:], '\n')
			if i < 0 {
				i = len(l.src) - l.off
			}
			l.advance(i)
		case c == '/' && l.peekByte(1) == '*':
			start := l.pos()
			i := strings.Index(l.src[l.off+2:], "*/")
			if i < 0 {
				return l.errorAt(start, "unterminated comment: /* has no closing */"), false
			}
			l.advance(i + 4)
		default:
			return token{}, true
		}
	}
	return token{}, true
}

// quoted reads a string or identifier delimited by q, where q doubled
// stands for itself.
func (l *lexer) quoted(start Pos, q byte, kind tokKind) token {
	l.advance(1)
	var b strings.Builder
	from := l.off
	for {
		i := strings.IndexByte(l.src[l.off:], q)
		if i < 0 {
			l.advance(len(l.src) - l.off)
			if kind == tokQuoted {
				return l.errorAt(start, "unterminated quoted name: ` has no closing `")
			}
			return l.errorAt(start, "unterminated string literal: ' has no closing '")
		}
		l.advance(i)
		if l.peekByte(1) == q {
			b.WriteString(l.src[from : l.off+1])
			l.advance(2)
			from = l.off
			continue
		}
		b.WriteString(l.src[from:l.off])
		l.advance(1)
		break
	}
	text := b.String()
	if kind == tokQuoted && text == "" {
		return l.errorAt(start, "empty quoted name ``")
	}
	return token{kind: kind, pos: start, end: l.off, text: text}
}

func (l *lexer) checkHex(t token) token {
	for i := 0; i < len(t.text); i++ {
		if !isHex(t.text[i]) {
			return l.errorAt(t.pos, "binary string X'...' holds a non-hex character "+quoteRune(rune(t.text[i])))
		}
	}
	if len(t.text)%2 != 0 {
		return l.errorAt(t.pos, "binary string X'...' needs an even number of hex digits")
	}
	return t
}

// number reads 12, 1.5, .5, 1., 1e3, 1.5E-3.
func (l *lexer) number(start Pos) token {
	s := l.src
	i := l.off
	kind := tokInt
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '.' {
		kind = tokDecimal
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j >= len(s) || !isDigit(s[j]) {
			return l.errorAt(start, "malformed number "+s[start.Offset:j]+": the exponent needs digits")
		}
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		kind, i = tokApprox, j
	}
	if i < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[i:]); isIdentPart(r) || r == '.' {
			end := i
			for end < len(s) {
				r, size := utf8.DecodeRuneInString(s[end:])
				if !isIdentPart(r) && r != '.' {
					break
				}
				end += size
			}
			return l.errorAt(start, "malformed number "+s[start.Offset:end])
		}
	}
	text := s[l.off:i]
	l.advance(i - l.off)
	return token{kind: kind, pos: start, end: l.off, text: text}
}

func (l *lexer) word(start Pos) token {
	i := l.off
	for i < len(l.src) {
		r, size := utf8.DecodeRuneInString(l.src[i:])
		if !isIdentPart(r) {
			break
		}
		i += size
	}
	text := l.src[l.off:i]
	l.advance(i - l.off)
	return token{kind: tokWord, pos: start, end: l.off, text: text, up: strings.ToUpper(text)}
}

var twoCharOps = [...]string{"<>", "<=", ">=", "!=", "||", "=>"}

func (l *lexer) punct(start Pos) token {
	rest := l.src[l.off:]
	for _, op := range twoCharOps {
		if strings.HasPrefix(rest, op) {
			l.advance(2)
			return token{kind: tokPunct, pos: start, end: l.off, text: op}
		}
	}
	c := rest[0]
	switch c {
	case '(', ')', ',', '.', ';', '*', '+', '-', '/', '%', '=', '<', '>', '[', ']':
		l.advance(1)
		return token{kind: tokPunct, pos: start, end: l.off, text: string(c)}
	case '|':
		return l.errorAt(start, "unexpected character '|': write || to concatenate strings, OR for a logical or")
	case '!':
		return l.errorAt(start, "unexpected character '!': write <> or != for not equal, NOT for negation")
	case '&':
		return l.errorAt(start, "unexpected character '&': write AND for a logical and")
	}
	return l.errorAt(start, "unexpected character "+quoteRune(rune(c)))
}

func quoteRune(r rune) string {
	if !unicode.IsPrint(r) {
		return fmt.Sprintf("U+%04X", r)
	}
	return "'" + string(r) + "'"
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isIdentStart(r rune) bool {
	return r == '_' || (r < utf8.RuneSelf && (r|0x20 >= 'a' && r|0x20 <= 'z')) || (r >= utf8.RuneSelf && unicode.IsLetter(r))
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || r == '$' || (r >= '0' && r <= '9') || (r >= utf8.RuneSelf && unicode.IsDigit(r))
}
