package expr

import (
	"regexp"
	"strings"
	"unicode/utf16"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// PARSE_URL, UNHEX, INSTR and the REGEXP_COUNT / REGEXP_INSTR /
// REGEXP_SUBSTR searches of Flink 2.3, each NULL when an argument is.

func init() {
	register(map[string]*funcDef{
		"PARSE_URL":     {min: 2, max: 3, build: buildParseURL},
		"UNHEX":         {min: 1, max: 1, build: buildUnhex},
		"INSTR":         {min: 2, max: 2, build: buildInstr},
		"REGEXP_COUNT":  {min: 2, max: 2, build: buildRegexpSearch},
		"REGEXP_INSTR":  {min: 2, max: 2, build: buildRegexpSearch},
		"REGEXP_SUBSTR": {min: 2, max: 2, build: buildRegexpSearch},
	})
}

// javaURL is a URL split as java.net.URL splits it; ok is false for
// what its constructor refuses (no scheme, or one it has no handler for).
type javaURL struct {
	protocol, authority, userInfo, host, path, query, ref string
	hasAuthority, hasUserInfo, hasQuery, hasRef           bool
}

var urlProtocols = map[string]bool{"http": true, "https": true, "ftp": true, "file": true, "jar": true, "mailto": true}

func parseJavaURL(s string) (javaURL, bool) {
	var u javaURL
	scheme, rest, ok := strings.Cut(strings.TrimSpace(s), ":")
	u.protocol = strings.ToLower(scheme)
	if !ok || !urlProtocols[u.protocol] {
		return u, false
	}
	rest, u.ref, u.hasRef = strings.Cut(rest, "#")
	rest, u.query, u.hasQuery = strings.Cut(rest, "?")
	if tail, ok := strings.CutPrefix(rest, "//"); ok {
		u.hasAuthority = true
		u.authority, u.path = tail, ""
		if i := strings.IndexByte(tail, '/'); i >= 0 {
			u.authority, u.path = tail[:i], tail[i:]
		}
		hostPort := u.authority
		if i := strings.LastIndexByte(hostPort, '@'); i >= 0 {
			u.userInfo, u.hasUserInfo, hostPort = hostPort[:i], true, hostPort[i+1:]
		}
		u.host = hostPort
		if strings.HasPrefix(hostPort, "[") {
			if i := strings.IndexByte(hostPort, ']'); i >= 0 {
				u.host = hostPort[:i+1]
			}
		} else if i := strings.IndexByte(hostPort, ':'); i >= 0 {
			u.host = hostPort[:i]
		}
	} else {
		u.path = rest
	}
	return u, true
}

// part is URL's getter of the named part; false where it returns null.
func (u javaURL) part(name string) (string, bool) {
	switch strings.ToUpper(name) {
	case "HOST":
		return u.host, true
	case "PATH":
		return u.path, true
	case "QUERY":
		return u.query, u.hasQuery
	case "REF":
		return u.ref, u.hasRef
	case "PROTOCOL":
		return u.protocol, true
	case "FILE":
		if u.hasQuery {
			return u.path + "?" + u.query, true
		}
		return u.path, true
	case "AUTHORITY":
		return u.authority, u.hasAuthority
	case "USERINFO":
		return u.userInfo, u.hasUserInfo
	}
	return "", false
}

// buildParseURL is PARSE_URL(url, part [, key]): the part of the URL
// (HOST, PATH, QUERY, REF, PROTOCOL, FILE, AUTHORITY, USERINFO), or with
// a key the value of that query parameter (part must be QUERY); NULL for
// a URL Java's URL refuses, a part it lacks or an unknown part name.
func buildParseURL(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	get := func(url, part string) (string, bool) {
		u, ok := parseJavaURL(url)
		if !ok {
			return "", false
		}
		return u.part(part)
	}
	t := row.Type{ID: row.String}
	if len(args) == 2 {
		return c.fn2(e, t, args[0], args[1], func(url, part row.Value) (row.Value, error) {
			if s, ok := get(url.Str(), part.Str()); ok {
				return row.StringValue(s), nil
			}
			return row.NullValue, nil
		})
	}
	return c.fn3(e, t, args[0], args[1], args[2], func(url, part, key row.Value) (row.Value, error) {
		if !strings.EqualFold(part.Str(), "QUERY") {
			return row.NullValue, nil
		}
		q, ok := get(url.Str(), "QUERY")
		if !ok {
			return row.NullValue, nil
		}
		// Flink finds the key with the pattern (&|^)key=([^&]*).
		re, err := regexp.Compile("(&|^)" + key.Str() + "=([^&]*)")
		if err != nil {
			return row.NullValue, nil
		}
		if m := re.FindStringSubmatch(q); m != nil {
			return row.StringValue(m[2]), nil
		}
		return row.NullValue, nil
	})
}

// buildUnhex is UNHEX(s): the BYTES of hexadecimal text (Flink's
// EncodingUtils.unhex); a character that is no hex digit gives NULL.
func buildUnhex(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	return c.fn1(e, row.Type{ID: row.Bytes}, args[0], func(v row.Value) (row.Value, error) {
		s := v.Str()
		out := make([]byte, 0, (len(s)+1)/2)
		digit := func(ch byte) int {
			switch {
			case '0' <= ch && ch <= '9':
				return int(ch - '0')
			case 'a' <= ch && ch <= 'f':
				return int(ch-'a') + 10
			case 'A' <= ch && ch <= 'F':
				return int(ch-'A') + 10
			}
			return -1
		}
		i := 0
		if len(s)%2 == 1 {
			// Flink drops an odd first digit (it must still be one)
			// and pads the bytes with a zero byte in front.
			if digit(s[0]) < 0 {
				return row.NullValue, nil
			}
			out = append(out, 0)
			i = 1
		}
		for ; i < len(s); i += 2 {
			hi, lo := digit(s[i]), digit(s[i+1])
			if hi < 0 || lo < 0 {
				return row.NullValue, nil
			}
			out = append(out, byte(hi<<4|lo))
		}
		return row.BytesValue(out), nil
	})
}

// javaIndex is the UTF-16 index Java gives byte offset i of s.
func javaIndex(s string, i int) int {
	n := 0
	for _, r := range s[:i] {
		n += len(utf16.Encode([]rune{r}))
	}
	return n
}

// buildInstr is INSTR(s, sub): where sub first starts in s, from 1
// (Java's indexOf + 1); 0 when absent.
func buildInstr(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	return c.fn2(e, intType(args...), args[0], args[1], func(s, sub row.Value) (row.Value, error) {
		i := strings.Index(s.Str(), sub.Str())
		if i < 0 {
			return row.IntValue(0), nil
		}
		return row.IntValue(int32(javaIndex(s.Str(), i) + 1)), nil
	})
}

// buildRegexpSearch is REGEXP_COUNT(s, regex) (the matches found one
// after another), REGEXP_INSTR(s, regex) (where the first starts, from
// 1, 0 for none) and REGEXP_SUBSTR(s, regex) (the first, NULL for none).
func buildRegexpSearch(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	ra, err := newRegexpArg(e, args, 1)
	if err != nil {
		return nil, err
	}
	name := strings.ToUpper(e.Name)
	t := intType(args...)
	if name == "REGEXP_SUBSTR" {
		t = row.Type{ID: row.String}
	}
	return c.fn2(e, t, args[0], args[1], func(s, p row.Value) (row.Value, error) {
		re, err := ra.get(p.Str())
		if err != nil {
			return row.NullValue, err
		}
		str := s.Str()
		switch name {
		case "REGEXP_COUNT":
			return row.IntValue(int32(javaMatchCount(re, str))), nil
		case "REGEXP_INSTR":
			m := re.FindStringIndex(str)
			if m == nil {
				return row.IntValue(0), nil
			}
			return row.IntValue(int32(javaIndex(str, m[0]) + 1)), nil
		}
		m := re.FindStringIndex(str)
		if m == nil {
			return row.NullValue, nil
		}
		return row.StringValue(str[m[0]:m[1]]), nil
	})
}

// javaMatchCount counts the matches Java's Matcher.find finds one after
// another (see javaFindAll).
func javaMatchCount(re *pattern, s string) int {
	if re.cannotMatch(s) {
		return 0
	}
	n := 0
	for _, m := range re.FindAllStringIndex(s, -1) {
		n++
		if m[1] > m[0] && emptyMatchAt(re, s, m[1]) != nil {
			n++
		}
	}
	return n
}

// javaFindAll is the matches, with their groups, Java's Matcher.find
// finds one after another. Go skips an empty match right where a
// non-empty one ended, which Java finds ('x*' over "ab x" matches 5
// times in Java; '(abc)|([a-z]*)' over "abc" twice, the second time
// empty at the end); the search goes on from the next character in
// both.
func javaFindAll(re *pattern, s string) [][]int {
	all := re.FindAllStringSubmatchIndex(s, -1)
	var out [][]int
	for i, m := range all {
		if out != nil {
			out = append(out, m)
		}
		if m[1] == m[0] {
			continue
		}
		if extra := emptyMatchAt(re, s, m[1]); extra != nil {
			if out == nil {
				out = append(make([][]int, 0, len(all)+1), all[:i+1]...)
			}
			out = append(out, extra)
		}
	}
	if out == nil {
		return all
	}
	return out
}

// emptyMatchAt is the empty match at s[at:]'s start, with its groups'
// places in s, or nil when the match there is not empty. It is looked for
// in the rest of the text, which holds as long as the pattern does not
// look behind its start (^, \b).
func emptyMatchAt(re *pattern, s string, at int) []int {
	l := re.FindStringSubmatchIndex(s[at:])
	if l == nil || l[0] != 0 || l[1] != 0 {
		return nil
	}
	return shiftIndex(l, at)
}
