package testenv

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/etld/etld/internal/redact"
)

// SecretLeaks lists the forms of secret that text shows: the value itself,
// each encoded form redact knows (quoted, JSON, YAML, URL-escaped) and
// every piece of redact.MinPiece bytes of the value, but for a piece made
// of letters only and shorter than half the value: such a word of a
// password ("cret" of "S3cret") is ordinary text elsewhere (a test's temp
// directory), and the redactor shows it there. Tests of outputs assert
// that it returns nothing.
func SecretLeaks(text, secret string) []string {
	var found []string
	for _, f := range redact.Forms(secret) {
		if strings.Contains(text, f) {
			found = append(found, "form "+strconv.Quote(f))
		}
	}
	for i := 0; i+redact.MinPiece <= len(secret); i++ {
		piece := secret[i : i+redact.MinPiece]
		word := 2*len(piece) < len(secret) && strings.IndexFunc(piece, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
		if !word && strings.Contains(text, piece) {
			found = append(found, "piece "+strconv.Quote(piece))
		}
	}
	return found
}
