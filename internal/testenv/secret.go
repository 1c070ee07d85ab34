package testenv

import (
	"strconv"

	"strings"

	"github.com/etld/etld/internal/redact"
)

// SecretLeaks lists the forms of secret that text shows: the value itself,
// each encoded form redact knows (quoted, JSON, YAML, URL-escaped) and
// every piece of redact.MinPiece bytes of the value. Tests of outputs
// assert that it returns nothing.
func SecretLeaks(text, secret string) []string {
	var found []string
	for _, f := range redact.Forms(secret) {
		if strings.Contains(text, f) {
			found = append(found, "form "+strconv.Quote(f))
		}
	}
	for i := 0; i+redact.MinPiece <= len(secret); i++ {
		if piece := secret[i : i+redact.MinPiece]; strings.Contains(text, piece) {
			found = append(found, "piece "+strconv.Quote(piece))
		}
	}
	return found
}
