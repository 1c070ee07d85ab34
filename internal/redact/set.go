package redact

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Set is a process's secrets: the values of the environment variables
// that its configuration files reference as ${VAR}. It grows as files are
// read (a daemon reload reads new ones) and is safe for concurrent use; a
// nil *Set redacts nothing.
//
// Which values count: those of variables whose name says secret (PASS,
// SECRET, TOKEN, KEY, CRED, AUTH, PW) from 2 characters, hidden whole and
// in pieces (see Secret.Partial); and any other referenced value from 8
// characters (a URL or DSN that embeds a password), hidden whole, with the
// password it embeds hidden in pieces too. Short values of plain variables
// (a port, a count) stay, so that logs keep their numbers, and pieces of
// plain values stay, so that a broker address from ${KAFKA_BROKERS} does
// not eat every "127.0" in the logs.
type Set struct {
	mu      sync.RWMutex
	secrets []Secret
	seen    map[Secret]bool
	r       *Redactor
}

var (
	refRE        = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	secretNameRE = regexp.MustCompile(`(?i)pass|secret|token|key|cred|auth|pw`)
)

// NewSet returns an empty set.
func NewSet() *Set { return &Set{seen: map[Secret]bool{}} }

// Classify returns the secrets in the value of the variable name (see
// Set): none, the value, or the value and the password it embeds.
func Classify(name, value string) []Secret {
	if secretNameRE.MatchString(name) {
		if len(value) < 2 {
			return nil
		}
		return []Secret{{Name: name, Value: value, Partial: true}}
	}
	if len(value) < 8 {
		return nil
	}
	out := []Secret{{Name: name, Value: value}}
	for _, pw := range embeddedPasswords(value) {
		out = append(out, Secret{Name: name, Value: pw, Partial: true})
	}
	return out
}

// embeddedPasswords finds the password of a URL or DSN: user:PASS@host,
// scheme://user:PASS@host (also percent-decoded), or ?password=PASS.
func embeddedPasswords(v string) []string {
	var out []string
	add := func(pw string) {
		if pw != "" && !slices.Contains(out, pw) {
			out = append(out, pw)
		}
	}
	if at := strings.LastIndex(v, "@"); at > 0 {
		userinfo := v[:at]
		if i := strings.Index(userinfo, "://"); i >= 0 {
			userinfo = userinfo[i+3:]
		}
		if _, pw, ok := strings.Cut(userinfo, ":"); ok {
			add(pw)
			if dec, err := url.PathUnescape(pw); err == nil {
				add(dec)
			}
		}
	}
	if _, query, ok := strings.Cut(v, "?"); ok {
		if q, err := url.ParseQuery(query); err == nil {
			for _, key := range []string{"password", "passwd", "pwd"} {
				add(q.Get(key))
			}
		}
	}
	return out
}

// AddFrom records the secrets among the variables that data references.
func (s *Set) AddFrom(data []byte, lookup func(string) (string, bool)) {
	var add []Secret
	for _, m := range refRE.FindAllSubmatch(data, -1) {
		name := string(m[1])
		if v, ok := lookup(name); ok {
			add = append(add, Classify(name, v)...)
		}
	}
	s.Add(add...)
}

// Add records secrets as they are, without Classify.
func (s *Set) Add(secrets ...Secret) {
	s.mu.Lock()
	defer s.mu.Unlock()
	added := false
	for _, sec := range secrets {
		if sec.Value != "" && !s.seen[sec] {
			s.seen[sec] = true
			s.secrets = append(s.secrets, sec)
			added = true
		}
	}
	if added {
		s.r = New(s.secrets)
	}
}

// Redactor returns the redactor of the secrets recorded so far.
func (s *Set) Redactor() *Redactor {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.r
}

// Redact returns text with every recorded secret replaced by ${NAME}.
func (s *Set) Redact(text string) string { return s.Redactor().String(text) }
