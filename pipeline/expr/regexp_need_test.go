package expr

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

func TestRequiredText(t *testing.T) {
	for _, c := range []struct{ re, need string }{
		{`(&|^)channel_id=([^&]*)`, "channel_id="},
		{`abc`, "abc"},
		{`a+bcd?`, "bc"},
		{`(?i)abc`, ""},
		{`ab|cd`, ""},
		{`(xy)*z`, "z"},
		{`(hello){2,3}`, "hello"},
		{`(hello){0,3}`, ""},
		{`x\x{FFFD}y`, ""},
		{`^\d+$`, ""},
		{`foo(bar)+`, "foo"},
	} {
		parsed, err := syntax.Parse(c.re, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := requiredText(parsed.Simplify()); got != c.need {
			t.Errorf("%s: need %q, want %q", c.re, got, c.need)
		}
	}
}

// TestPatternSameAsRegexp: with its prefilter a pattern finds what the
// matcher alone finds, over random texts built from the patterns' own
// pieces, invalid UTF-8 and case changes among them.
func TestPatternSameAsRegexp(t *testing.T) {
	patterns := []string{
		`(&|^)channel_id=([^&]*)`, `abc`, `a+bcd?`, `(?i)abc`, `ab|cd`, `(xy)*z`, `(hello){2,3}`,
		`x\x{FFFD}y`, `foo(bar)+`, `b(c)`, `é+t`, `(a|b)c(d)`, `\bword\b`, `c$`, `^ab`,
		// skipped ahead (TestSkip) or not, with every kind of prefix
		`(^|&)ab(c*)`, `^^ab`, `(?m)^ab`, `\Bab`, `x\bab`, `[a-z]{2}foo`, `..bar(\d*)`, `(?i:k)yz`,
		`é.channel_id`, `(^|x)ab$`, `a*bc`, `(a|bc)?d(e)`, `\x{FFFD}?ab`, `(?s).ab`, `(.)\z|b(c)`, `(x(^|y))?ab`,
		`(?U)(&|^)ab(c*)`, `(?P<g>x|^)ab(?P<h>[^&]*)`, `(?i:x)?ab`, `\Aab`, `(?s:.)?(?m:a$)ab`, `(?m:.$)ab`,
	}
	pieces := []string{"a", "b", "c", "d", "x", "y", "z", "&", "channel_id=", "hello", "foo", "bar", "ABC",
		"é", "t", "\xff", "\uFFFD", "word", " ", "=", "xy", "\xc3", "\x80", "\n", "k", "K", "\u212a", "ab", "1"}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, src := range patterns {
		re := regexp.MustCompile(src)
		p := newPattern(re)
		for range 3000 {
			var b strings.Builder
			for range rng.IntN(16) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			s := b.String()
			if got, want := p.MatchString(s), re.MatchString(s); got != want {
				t.Fatalf("%s over %q: match %v, the matcher %v", src, s, got, want)
			}
			if got, want := p.FindStringSubmatchIndex(s), re.FindStringSubmatchIndex(s); !slices.Equal(got, want) {
				t.Fatalf("%s over %q: %v, the matcher %v", src, s, got, want)
			}
			if got, want := p.FindStringIndex(s), re.FindStringIndex(s); !slices.Equal(got, want) {
				t.Fatalf("%s over %q: %v, the matcher %v", src, s, got, want)
			}
			if got, want := p.FindAllStringSubmatchIndex(s, -1), re.FindAllStringSubmatchIndex(s, -1); !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("%s over %q: all %v, the matcher %v", src, s, got, want)
			}
			if got, want := replaceAll(p, s, "<$1>"), re.ReplaceAllString(s, "<$1>"); got != want {
				t.Fatalf("%s over %q: replaced %q, the matcher %q", src, s, got, want)
			}
		}
	}
}

func TestSkip(t *testing.T) {
	for _, c := range []struct {
		re, lit string
		before  int // -1: no skip
	}{
		{`(&|^)channel_id=([^&]*)`, "channel_id=", 1},
		{`abc`, "abc", 0},
		{`[a-z]{2}foo`, "foo", 8},
		{`..bar(\d*)`, "bar", 8},
		{`(?i:k)yz`, "yz", 4},
		{`(a|bc)?d(e)`, "d", 2},
		{`é.channel_id`, "é", 0},
		{`(^|x)ab$`, "ab", 1},
		{`a*bc`, "", -1},       // unbounded before the literal
		{`(?i)abc`, "", -1},    // no literal matched as written
		{`(?m)^ab`, "", -1},    // ^ after a line break looks before the cut
		{`\Bab`, "", -1},       // so does a word boundary
		{`ab|cd`, "", -1},      // not a concatenation
		{`x\x{FFFD}y`, "", -1}, // the one literal holds U+FFFD
	} {
		re := regexp.MustCompile(c.re)
		parsed, err := syntax.Parse(c.re, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		k := newSkip(re, parsed.Simplify())
		switch {
		case c.before < 0 && k != nil:
			t.Errorf("%s: skip %q after %d, want none", c.re, k.lit, k.before)
		case c.before >= 0 && k == nil:
			t.Errorf("%s: no skip, want %q after %d", c.re, c.lit, c.before)
		case k != nil && (k.lit != c.lit || k.before != c.before):
			t.Errorf("%s: skip %q after %d, want %q after %d", c.re, k.lit, k.before, c.lit, c.before)
		case k != nil && (k.tail == re) == strings.Contains(c.re, "^"):
			t.Errorf("%s: the cut text's matcher is the pattern's own: %v", c.re, k.tail == re)
		}
	}
}

func BenchmarkRegexpExtractPrefilter(b *testing.B) {
	re := regexp.MustCompile(`(&|^)channel_id=([^&]*)`)
	urls := []string{
		"https://www.nexmark.com/mekt/ojpv/llj/item.htm?query=1&channel_id=1073741824",
		"https://www.nexmark.com/xxpf/lfw/lljq/item.htm?query=1",
	}
	for _, c := range []struct {
		name string
		find func(string) []int
	}{{"regexp", re.FindStringSubmatchIndex}, {"pattern", newPattern(re).FindStringSubmatchIndex}} {
		b.Run(c.name, func(b *testing.B) {
			for i := range b.N {
				c.find(urls[i&1])
			}
		})
	}
}
