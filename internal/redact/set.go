package redact

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Set is a process's secrets: the values of the environment variables
// that its configuration files reference as ${VAR}. It grows as files are
// read (a daemon reload reads new ones) and is safe for concurrent use; a
// nil *Set redacts nothing.
//
// Which values count (Classify): those of variables whose name says
// secret (PASS, SECRET, TOKEN, KEY, CRED, AUTH, PW) or that are used in a
// credential field (password, token, api_key, anything under sasl, ...),
// from 2 characters, hidden whole and in pieces (see Secret.Partial); a
// value used in a dsn field, hidden whole; and any value that embeds a
// password (a URL with user info, ?password=), hidden whole with the
// password in pieces. Every other value is shown: a path, a topic, a
// broker address or a port from ${VAR} is what a reader of an error needs
// ("write /data/out.csv: no space left on device"), and hiding it hides
// nothing secret.
type Set struct {
	mu      sync.RWMutex
	secrets []Secret
	seen    map[Secret]bool
	r       *Redactor
}

var (
	refRE        = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	secretNameRE = regexp.MustCompile(`(?i)pass|secret|token|key|cred|auth|pw`)
	// credentialKeyRE matches the option names whose values are
	// credentials, whatever the variable is called.
	credentialKeyRE = regexp.MustCompile(`(?i)^(.*_)?(password|passwd|pwd|pass|passphrase|secret|token|api_?key|access_?key|private_?key|credentials?|auth|authorization|bearer)$`)
	indexRE         = regexp.MustCompile(`\[[0-9]+\]`)
)

// NewSet returns an empty set.
func NewSet() *Set { return &Set{seen: map[Secret]bool{}} }

// CredentialField reports whether the option at field (a dotted path such
// as sinks[0].sasl.password) holds a credential: its name says so, or it
// is under a sasl option. A dsn is a connection string that holds one
// (see Classify).
func CredentialField(field string) bool {
	keys := strings.Split(indexRE.ReplaceAllString(field, ""), ".")
	for _, k := range keys[:max(len(keys)-1, 0)] {
		if strings.EqualFold(k, "sasl") {
			return true
		}
	}
	return len(keys) > 0 && credentialKeyRE.MatchString(keys[len(keys)-1])
}

func dsnField(field string) bool {
	keys := strings.Split(indexRE.ReplaceAllString(field, ""), ".")
	last := strings.ToLower(keys[len(keys)-1])
	return last == "dsn" || strings.HasSuffix(last, "_dsn")
}

// Classify returns the secrets in the value of the variable name used in
// the option at field ("" when unknown; see Set): none, the value, or the
// value and the password it embeds.
func Classify(field, name, value string) []Secret {
	if len(value) < 2 {
		return nil
	}
	if secretNameRE.MatchString(name) || CredentialField(field) {
		return []Secret{{Name: name, Value: value, Partial: true}}
	}
	pws := embeddedPasswords(value)
	if len(pws) == 0 && !dsnField(field) {
		return nil
	}
	out := []Secret{{Name: name, Value: value}}
	for _, pw := range pws {
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

// AddFrom records the secrets among the variables that data, a YAML
// file, references, each classified by the option it is used in. A file
// that is not YAML is classified by the variables' names and values only.
func (s *Set) AddFrom(data []byte, lookup func(string) (string, bool)) {
	var add []Secret
	classify := func(field, text string) {
		for _, m := range refRE.FindAllStringSubmatch(text, -1) {
			if v, ok := lookup(m[1]); ok {
				add = append(add, Classify(field, m[1], v)...)
			}
		}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		classify("", string(data))
	} else {
		walkScalars(&root, "", classify)
	}
	s.Add(add...)
}

// walkScalars calls f with the field path and value of every scalar
// below n; a mapping key that references a variable counts as a value of
// the mapping's own field.
func walkScalars(n *yaml.Node, path string, f func(field, value string)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkScalars(c, path, f)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			f(path, k.Value)
			field := k.Value
			if path != "" {
				field = path + "." + k.Value
			}
			walkScalars(n.Content[i+1], field, f)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkScalars(c, path+"["+strconv.Itoa(i)+"]", f)
		}
	case yaml.ScalarNode:
		f(path, n.Value)
	}
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
