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
	skip *skip
	// matchesEmpty: the pattern matches the empty string, so its
	// matches one after another are Java's only with javaFindAll.
	matchesEmpty bool
}

func newPattern(re *regexp.Regexp) *pattern {
	p := &pattern{Regexp: re, matchesEmpty: re.MatchString("")}
	if parsed, err := syntax.Parse(re.String(), syntax.Perl); err == nil {
		parsed = parsed.Simplify()
		p.need = requiredText(parsed)
		p.skip = newSkip(re, parsed)
	}
	return p
}

// cannotMatch reports that s holds no match, from the text alone.
func (p *pattern) cannotMatch(s string) bool {
	return p.need != "" && !strings.Contains(s, p.need)
}

// from is where in s the matcher starts and the matcher for s from
// there (see skip); -1 when s cannot match.
func (p *pattern) from(s string) (int, *regexp.Regexp) {
	// The skip's search for its literal is the prefilter's when both
	// look for the same text (q21's): one search, not two.
	if (p.skip == nil || p.skip.lit != p.need) && p.cannotMatch(s) {
		return -1, nil
	}
	if p.skip == nil {
		return 0, p.Regexp
	}
	return p.skip.from(s, p.Regexp)
}

func (p *pattern) MatchString(s string) bool {
	at, re := p.from(s)
	return at >= 0 && re.MatchString(s[at:])
}

func (p *pattern) FindStringSubmatchIndex(s string) []int {
	at, re := p.from(s)
	if at < 0 {
		return nil
	}
	return shiftIndex(re.FindStringSubmatchIndex(s[at:]), at)
}

func (p *pattern) FindStringIndex(s string) []int {
	at, re := p.from(s)
	if at < 0 {
		return nil
	}
	return shiftIndex(re.FindStringIndex(s[at:]), at)
}

func (p *pattern) FindAllStringSubmatchIndex(s string, n int) [][]int {
	at, re := p.from(s)
	if at < 0 {
		return nil
	}
	all := re.FindAllStringSubmatchIndex(s[at:], n)
	for _, loc := range all {
		shiftIndex(loc, at)
	}
	return all
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
