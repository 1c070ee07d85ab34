package expr

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Skipping ahead: the prefilter (need) only answers "no match"; a text
// that holds the required literal is still stepped through from its first
// byte. A pattern that is a concatenation with a literal after a part of
// bounded width (q21's '(&|^)channel_id=([^&]*)': at most one byte, then
// "channel_id=") cannot start a match more than that width before the
// literal's first occurrence, so the matcher can start there. Go's
// matcher has no start offset that keeps the text before it as context,
// so the text is cut: sound only when no assertion of the pattern looks
// at that context. ^ (begin of text) does, but it can only match at the
// text's start, so the cut text is searched with a second matcher in
// which ^ never matches; a pattern with \b, \B or a multi-line ^ is not
// skipped.
type skip struct {
	lit    string         // the literal every match holds at a bounded distance from its start
	before int            // the most bytes a match holds before lit
	tail   *regexp.Regexp // the pattern for a text cut after its start
}

// newSkip is the skip of re, whose simplified parse is parsed, or nil
// when it has none.
func newSkip(re *regexp.Regexp, parsed *syntax.Regexp) *skip {
	if !skippable(parsed) {
		return nil
	}
	top := parsed
	for top.Op == syntax.OpCapture {
		top = top.Sub[0]
	}
	subs := []*syntax.Regexp{top}
	if top.Op == syntax.OpConcat {
		subs = top.Sub
	}
	before := 0
	for _, sub := range subs {
		if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 && !containsRuneError(sub.Rune) {
			tail, ok := cutMatcher(re, parsed)
			if !ok {
				return nil
			}
			return &skip{lit: string(sub.Rune), before: before, tail: tail}
		}
		w := maxBytes(sub)
		if w < 0 {
			return nil
		}
		before += w
	}
	return nil
}

// cutMatcher is the matcher for a text cut after its start: re itself
// when it has no ^ (begin of text), else re with ^ never matching,
// compiled from its parse's text; re's own parse must read back from its
// text as the same text (the parser drops a branch that never matches,
// so the cut matcher's text cannot be compared), with as many groups.
func cutMatcher(re *regexp.Regexp, parsed *syntax.Regexp) (*regexp.Regexp, bool) {
	if !hasBeginText(parsed) {
		return re, true
	}
	text := parsed.String()
	back, err := syntax.Parse(text, syntax.Perl)
	if err != nil || back.Simplify().String() != text {
		return nil, false
	}
	tail, err := regexp.Compile(neverAtStart(parsed).String())
	if err != nil || tail.NumSubexp() != re.NumSubexp() {
		return nil, false
	}
	return tail, true
}

func hasBeginText(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText {
		return true
	}
	for _, sub := range re.Sub {
		if hasBeginText(sub) {
			return true
		}
	}
	return false
}

func containsRuneError(rs []rune) bool {
	for _, r := range rs {
		if r == utf8.RuneError {
			return true
		}
	}
	return false
}

// skippable reports that no assertion of re looks at the text before the
// position it is at, but ^ (begin of text).
func skippable(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return false
	}
	for _, sub := range re.Sub {
		if !skippable(sub) {
			return false
		}
	}
	return true
}

// neverAtStart is a copy of re in which ^ (begin of text) never matches.
func neverAtStart(re *syntax.Regexp) *syntax.Regexp {
	if re.Op == syntax.OpBeginText {
		return &syntax.Regexp{Op: syntax.OpNoMatch}
	}
	c := *re
	c.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, sub := range re.Sub {
		c.Sub[i] = neverAtStart(sub)
	}
	return &c
}

// maxBytes is the most bytes of text re matches, -1 when unbounded.
func maxBytes(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpNoMatch:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				n += utf8.UTFMax // a rune's other case may be longer (k, U+212A)
			} else {
				n += utf8.RuneLen(r)
			}
		}
		return n
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxBytes(re.Sub[0])
	case syntax.OpRepeat:
		w := maxBytes(re.Sub[0])
		if w < 0 || re.Max < 0 {
			return -1
		}
		return w * re.Max
	case syntax.OpConcat, syntax.OpAlternate:
		n := 0
		for _, sub := range re.Sub {
			w := maxBytes(sub)
			if w < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				n += w
			} else {
				n = max(n, w)
			}
		}
		return n
	}
	return -1 // star, plus and anything not known
}

// from is where in s the matcher may start (a rune's first byte, so
// that it decodes s as from its start) and the matcher for s from there;
// -1 when s cannot match.
func (k *skip) from(s string, whole *regexp.Regexp) (int, *regexp.Regexp) {
	i := strings.Index(s, k.lit)
	if i < 0 {
		return -1, nil
	}
	at := i - k.before
	for at > 0 && !utf8.RuneStart(s[at]) {
		at--
	}
	if at <= 0 {
		return 0, whole
	}
	return at, k.tail
}

func shiftIndex(loc []int, by int) []int {
	for i, v := range loc {
		if v >= 0 {
			loc[i] = v + by
		}
	}
	return loc
}
