// Package redact hides secret values in text that leaves the process:
// errors, log lines, admin status. A value can come back in many shapes: as
// it is, quoted by %q or by a JSON or YAML encoder, URL-escaped inside a
// DSN, or cut into pieces by a parser that split it at a ':' or a '/'. A
// Redactor knows every one of those shapes of every secret and replaces
// each occurrence by ${NAME}, the variable the value came from.
//
// The package imports nothing of etld's, so that the spec reader, the
// daemon and the CLI can all use the same one.
package redact

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MinPiece is the shortest piece of a Partial secret that can be hidden
// on its own. Shorter secrets are hidden only whole.
const MinPiece = 4

// Secret is a value to hide and the variable it came from.
type Secret struct {
	Name  string // the variable's name, shown as ${Name}
	Value string
	// Partial hides pieces of MinPiece bytes or more of the value (in
	// every form), not only the whole value: a parser error that quotes
	// the part of a DSN before a '/' shows the first half of a password.
	// A piece is hidden where it cannot be ordinary text (hidePiece),
	// so that the words a password is made of stay words elsewhere.
	Partial bool
}

// Redactor replaces the secrets it was made with. It does not change after
// New and is safe for concurrent use; a nil *Redactor changes nothing.
type Redactor struct {
	names []string // by secret index
	whole []pattern
	// pieces maps every MinPiece-byte window of every form of a Partial
	// secret to where it is in the forms; heads has a bit for the first
	// two bytes of each, so that most windows of a text cost no map
	// lookup.
	pieces map[uint32][]place
	heads  *[1 << 16 / 64]uint64
}

type pattern struct {
	text  string
	owner int
	// short values match only as a token of their own, not inside a longer
	// run of letters and digits: a 2-character password would otherwise
	// eat every word that contains it.
	short bool
}

// place is a window's offset in a form of a secret.
type place struct {
	form  string
	at    int
	owner int
}

// New returns a redactor for secrets. Empty values are ignored.
func New(secrets []Secret) *Redactor {
	r := &Redactor{pieces: map[uint32][]place{}, heads: new([1 << 16 / 64]uint64)}
	seen := map[string]bool{}
	for _, s := range secrets {
		if s.Value == "" {
			continue
		}
		owner := len(r.names)
		r.names = append(r.names, s.Name)
		for _, f := range Forms(s.Value) {
			if s.Partial && len(f) >= MinPiece {
				// The whole form is a run of its pieces that is hidden
				// (hidePiece), under the name of the first secret it matches.
				for i := 0; i+MinPiece <= len(f); i++ {
					w := window(f, i)
					r.pieces[w] = append(r.pieces[w], place{form: f, at: i, owner: owner})
					r.heads[w>>22] |= 1 << (w >> 16 & 63)
				}
				continue
			}
			if !seen[f] {
				seen[f] = true
				r.whole = append(r.whole, pattern{text: f, owner: owner, short: len(s.Value) < MinPiece})
			}
		}
	}
	// Longest first: a value that contains another is claimed whole by the
	// longer one's variable.
	slices.SortStableFunc(r.whole, func(a, b pattern) int { return len(b.text) - len(a.text) })
	return r
}

func window(s string, i int) uint32 {
	return uint32(s[i])<<24 | uint32(s[i+1])<<16 | uint32(s[i+2])<<8 | uint32(s[i+3])
}

// Forms returns the shapes in which a value can appear in text: as it is,
// inside Go quotes (%q, strconv.Quote, also quoted twice), inside JSON and
// YAML strings, and URL-escaped as a path, a query value or the password
// of a URL.
func Forms(v string) []string {
	goq := inner(strconv.Quote(v))
	forms := []string{
		v,
		goq,
		inner(strconv.QuoteToASCII(v)),
		inner(strconv.Quote(goq)),
		jsonString(v, true),
		jsonString(v, false),
		jsonString(goq, false),
		strings.ReplaceAll(v, "'", "''"), // YAML and SQL single quotes
		yamlString(v),
		url.PathEscape(v),
		url.QueryEscape(v),
		strings.TrimPrefix(url.UserPassword("", v).String(), ":"),
	}
	out := forms[:0]
	for _, f := range forms {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func inner(quoted string) string {
	if len(quoted) >= 2 {
		return quoted[1 : len(quoted)-1]
	}
	return quoted
}

func jsonString(v string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(v) // a string always encodes
	return inner(strings.TrimSuffix(b.String(), "\n"))
}

// yamlString is the value as a YAML encoder writes it on one line, quoted
// or not; "" for a value it writes as a block (a newline in it).
func yamlString(v string) string {
	out, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	s := strings.TrimSuffix(string(out), "\n")
	if strings.Contains(s, "\n") {
		return ""
	}
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') {
		return inner(s)
	}
	return s
}

// markerRE finds ${NAME} references, which are never redacted: they are
// what redaction writes, and what error messages show instead of values.
var markerRE = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`)

// String returns text with every secret replaced by ${NAME}.
func (r *Redactor) String(text string) string {
	if r == nil || len(r.names) == 0 || text == "" {
		return text
	}
	markers := markerRE.FindAllStringIndex(text, -1)
	if markers == nil {
		return r.segment(text)
	}
	var b strings.Builder
	last := 0
	for _, m := range markers {
		b.WriteString(r.segment(text[last:m[0]]))
		b.WriteString(text[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(r.segment(text[last:]))
	return b.String()
}

// segment redacts text that holds no ${NAME} marker.
func (r *Redactor) segment(text string) string {
	// owner[i] is 1 + the index of the secret that covers byte i; nil
	// until something matches, which is the common case.
	var owner []int
	cover := func(from, to, who int) {
		if owner == nil {
			owner = make([]int, len(text))
		}
		for i := from; i < to; i++ {
			if owner[i] == 0 {
				owner[i] = who + 1
			}
		}
	}
	for _, p := range r.whole {
		for at := 0; at+len(p.text) <= len(text); {
			i := strings.Index(text[at:], p.text)
			if i < 0 {
				break
			}
			from, to := at+i, at+i+len(p.text)
			if !p.short || standsAlone(text, from, to) {
				cover(from, to, p.owner)
			}
			at = from + 1
		}
	}
	if len(r.pieces) > 0 {
		for i := 0; i+MinPiece <= len(text); i++ {
			head := uint32(text[i])<<8 | uint32(text[i+1])
			if r.heads[head>>6]&(1<<(head&63)) == 0 {
				continue
			}
			for _, p := range r.pieces[window(text, i)] {
				// Each run of text that matches the form is judged once,
				// whole, from where it begins.
				if i > 0 && p.at > 0 && text[i-1] == p.form[p.at-1] {
					continue
				}
				n := MinPiece
				for i+n < len(text) && p.at+n < len(p.form) && text[i+n] == p.form[p.at+n] {
					n++
				}
				if hidePiece(p.form, p.at, p.at+n) {
					cover(i, i+n, p.owner)
				}
			}
		}
	}
	if owner == nil {
		return text
	}
	// A piece may begin inside a UTF-8 character: take the whole character.
	for i := 1; i < len(text); i++ {
		if owner[i] != 0 && owner[i-1] == 0 && !utf8.RuneStart(text[i]) {
			for k := i - 1; k >= 0 && owner[k] == 0; k-- {
				owner[k] = owner[i]
				if utf8.RuneStart(text[k]) {
					break
				}
			}
		}
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		if owner[i] == 0 {
			b.WriteByte(text[i])
			i++
			continue
		}
		// One marker for a run of covered bytes, named after the secret
		// that covers its first byte (two secrets can share pieces), and
		// widened to the end of a UTF-8 character.
		j := i
		for j < len(text) && owner[j] != 0 {
			j++
		}
		for j < len(text) && !utf8.RuneStart(text[j]) {
			j++
		}
		b.WriteString("${" + r.names[owner[i]-1] + "}")
		i = j
	}
	return b.String()
}

func standsAlone(text string, from, to int) bool {
	if from > 0 {
		if r, _ := utf8.DecodeLastRuneInString(text[:from]); isWord(r) {
			return false
		}
	}
	if to < len(text) {
		if r, _ := utf8.DecodeRuneInString(text[to:]); isWord(r) {
			return false
		}
	}
	return true
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// hidePiece reports whether f[i:j], a part of a form of a secret that
// a text shows, is to be hidden: when it tells much of the value (half of
// it or more), when it cannot be ordinary text, or when it is whole parts
// of the value cut at the value's own delimiters ("abc-tok" of
// "tok-abc-tok-abc"), as a parser that splits the value shows them. A
// shorter part that reads as ordinary text (a password's word "test", a
// client id "etld") stays: hiding it eats that word everywhere and tells
// the reader that the password holds it.
func hidePiece(f string, i, j int) bool {
	p := f[i:j]
	if 2*len(p) >= len(f) || !ordinary(p) {
		return true
	}
	before, _ := utf8.DecodeLastRuneInString(f[:i])
	after, _ := utf8.DecodeRuneInString(f[j:])
	cut := (i == 0 || !isWord(before)) && (j == len(f) || !isWord(after))
	inner := strings.TrimFunc(p, func(r rune) bool { return !isWord(r) })
	return cut && strings.IndexFunc(inner, func(r rune) bool { return !isWord(r) }) >= 0
}

// ordinary reports whether p can be ordinary text: valid UTF-8 of
// letters, digits, spaces and the punctuation of names, paths and
// addresses (- _ . / : @ ,), with no digit between two letters ("Tr0ub").
// Anything else (a quote, a backslash, %, &, a control character, a
// character cut in two) is what passwords hold and words do not.
func ordinary(p string) bool {
	if !utf8.ValidString(p) {
		return false
	}
	var prev2, prev rune
	for _, c := range p {
		if !isWord(c) && c != ' ' && !strings.ContainsRune("-_./:@,", c) {
			return false
		}
		if unicode.IsLetter(prev2) && unicode.IsDigit(prev) && unicode.IsLetter(c) {
			return false
		}
		prev2, prev = prev, c
	}
	return true
}
