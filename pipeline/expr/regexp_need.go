package expr

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// pattern is a compiled regular expression and a text every match of it
// contains, if it has one: a string without that text cannot match, and
// strings.Contains says so far faster than the matcher, which has no
// such prefilter (RE2's own has one). A pattern such as Nexmark q21's
// '(&|^)channel_id=([^&]*)' starts with an alternation, so Go's regexp
// finds no literal prefix and steps through every byte of a URL that
// holds no channel_id at all.
type pattern struct {
	*regexp.Regexp
	need string
}

func newPattern(re *regexp.Regexp) *pattern {
	p := &pattern{Regexp: re}
	if parsed, err := syntax.Parse(re.String(), syntax.Perl); err == nil {
		p.need = requiredText(parsed.Simplify())
	}
	return p
}

// cannotMatch reports that s holds no match, from the text alone.
func (p *pattern) cannotMatch(s string) bool {
	return p.need != "" && !strings.Contains(s, p.need)
}

func (p *pattern) MatchString(s string) bool {
	return !p.cannotMatch(s) && p.Regexp.MatchString(s)
}

func (p *pattern) FindStringSubmatchIndex(s string) []int {
	if p.cannotMatch(s) {
		return nil
	}
	return p.Regexp.FindStringSubmatchIndex(s)
}

func (p *pattern) FindStringIndex(s string) []int {
	if p.cannotMatch(s) {
		return nil
	}
	return p.Regexp.FindStringIndex(s)
}

func (p *pattern) FindAllStringSubmatchIndex(s string, n int) [][]int {
	if p.cannotMatch(s) {
		return nil
	}
	return p.Regexp.FindAllStringSubmatchIndex(s, n)
}

// requiredText is the longest literal text every match of re contains,
// or "" when none is known. Literals matched without regard to case are
// none, and so is one holding U+FFFD, which also matches an invalid
// UTF-8 byte of the input.
func requiredText(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return ""
		}
		s := string(re.Rune)
		if strings.ContainsRune(s, utf8.RuneError) {
			return ""
		}
		return s
	case syntax.OpCapture, syntax.OpPlus:
		return requiredText(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredText(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if s := requiredText(sub); len(s) > len(best) {
				best = s
			}
		}
		return best
	}
	return ""
}
