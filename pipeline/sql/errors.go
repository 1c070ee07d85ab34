package sql

import (
	"strings"
	"unicode/utf8"
)

// Error is a lexing or parsing error at a position in the SQL text. Expected
// lists what would have been accepted there (token or construct names, in
// the order the parser tried them); it may be empty.
type Error struct {
	Pos      Pos
	Msg      string
	Expected []string
}

// Error renders "line:col: msg".
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Snippet returns the line of src that holds the error and, under it, a
// caret at the error's column:
//
//	SELECT a, FROM t
//	          ^
//
// Tabs before the column are repeated so the caret lines up in a terminal.
// It returns "" when the position is not inside src.
func (e *Error) Snippet(src string) string {
	if !e.Pos.IsValid() {
		return ""
	}
	line := e.Pos.Line
	start := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(src[start:], '\n')
		if i < 0 {
			return ""
		}
		start += i + 1
	}
	text := src[start:]
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimSuffix(text, "\r")
	var caret strings.Builder
	col := 1
	for _, r := range text {
		if col >= e.Pos.Col {
			break
		}
		if r == '\t' {
			caret.WriteByte('\t')
		} else {
			caret.WriteByte(' ')
		}
		col++
	}
	// A caret past the end of the line marks "end of query": keep it one
	// column after the last character.
	for ; col < e.Pos.Col && col <= utf8.RuneCountInString(text)+1; col++ {
		caret.WriteByte(' ')
	}
	caret.WriteByte('^')
	return text + "\n" + caret.String()
}
