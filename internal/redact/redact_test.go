package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The secrets of the tests hold every character that an encoder changes.
const (
	nasty   = "p@ss\"w\\rd%2F:/x\nend"
	dsnPart = "Tr0ub4dor/&3"
)

// shapes is the secret as the outputs of a process can show it.
func shapes(secret string) map[string]string {
	js, _ := json.Marshal(secret)
	ym, _ := yaml.Marshal(map[string]string{"pw": secret})
	return map[string]string{
		"raw":            "connect " + secret + " failed",
		"%q":             fmt.Sprintf("want an integer, got %q", secret),
		"%q of %q":       fmt.Sprintf("error: %q", fmt.Sprintf("got %q", secret)),
		"json":           `{"error":` + string(js) + `}`,
		"yaml":           string(ym),
		"yaml single":    "pw: '" + strings.ReplaceAll(secret, "'", "''") + "'",
		"query":          "http://h/?password=" + url.QueryEscape(secret),
		"path":           "http://h/" + url.PathEscape(secret),
		"userinfo":       (&url.URL{Scheme: "http", User: url.UserPassword("etl", secret), Host: "h"}).String(),
		"prefix":         "default addr for network 'etl:" + secret[:len(secret)/2] + "' unknown",
		"suffix":         "near '" + secret[len(secret)-5:] + "'",
		"quoted ascii":   strconv.QuoteToASCII("é" + secret),
		"piece in words": "x" + secret[2:7] + "y",
	}
}

func TestRedactEveryForm(t *testing.T) {
	for _, secret := range []string{nasty, dsnPart, "pässwörd-ünïcode"} {
		r := New([]Secret{{Name: "SECRET_PW", Value: secret, Partial: true}})
		for what, text := range shapes(secret) {
			got := r.String(text)
			if leaks := leaks(got, secret); len(leaks) > 0 {
				t.Errorf("secret %q, %s: %q shows %v", secret, what, got, leaks)
			}
			if !strings.Contains(got, "${SECRET_PW}") {
				t.Errorf("secret %q, %s: %q does not name the variable", secret, what, got)
			}
			if !utf8Valid(got) {
				t.Errorf("secret %q, %s: %q is not valid UTF-8", secret, what, got)
			}
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// leaks is testenv.SecretLeaks, which this package cannot import.
func leaks(text, secret string) []string {
	var found []string
	for _, f := range Forms(secret) {
		if strings.Contains(text, f) {
			found = append(found, f)
		}
	}
	for i := 0; i+MinPiece <= len(secret); i++ {
		if p := secret[i : i+MinPiece]; strings.Contains(text, p) {
			found = append(found, p)
		}
	}
	return found
}

func TestRedact(t *testing.T) {
	r := New([]Secret{
		{Name: "DB_PASSWORD", Value: "pw", Partial: true}, // short: only whole, standing alone
		{Name: "API_TOKEN", Value: "tok-abc-tok-abc-tok", Partial: true},
		{Name: "ES_URL", Value: "http://u:longpw@127.0.0.1:9200"}, // whole only
		{Name: "EMPTY", Value: ""},
	})
	cases := []struct{ in, want string }{
		{"password pw refused", "password ${DB_PASSWORD} refused"},
		{"pwd and upward stay", "pwd and upward stay"},
		{`got "pw"`, `got "${DB_PASSWORD}"`},
		{"Bearer tok-abc-tok-abc-tok!", "Bearer ${API_TOKEN}!"},
		{"token abc-tok was cut", "token ${API_TOKEN} was cut"},
		{"GET http://u:longpw@127.0.0.1:9200/idx: 401", "GET ${ES_URL}/idx: 401"},
		{"dial 127.0.0.1:9200 refused", "dial 127.0.0.1:9200 refused"}, // pieces of a plain value stay
		{"${API_TOKEN} and ${OTHER_TOKEN} are names", "${API_TOKEN} and ${OTHER_TOKEN} are names"},
		{"", ""},
		{"nothing here", "nothing here"},
	}
	for _, tc := range cases {
		got := r.String(tc.in)
		if got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := r.String(got); again != got {
			t.Errorf("String is not idempotent on %q: %q", got, again)
		}
	}
	var none *Redactor
	if got := none.String("pw"); got != "pw" {
		t.Errorf("nil Redactor changed the text: %q", got)
	}
}

// A password made of ordinary words, as the test services' DSN has: its
// words stay words elsewhere in the text (a client id, "no tests"), or
// every "etld" of the logs would become ${VAR} and tell a reader which
// words the password holds; a piece that tells much of it (half or
// more), whole parts of it cut at its delimiters, and the value itself
// in any form are hidden.
func TestOrdinaryWordsOfASecretStay(t *testing.T) {
	r := New(Classify("", "ETLD_MYSQL_DSN", "etld:etld-test-pw@tcp(127.0.0.1:3306)/etld_test"))
	cases := []struct{ in, want string }{
		{`client id "etld", group etld-orders`, `client id "etld", group etld-orders`},
		{"no tests, 3 rows", "no tests, 3 rows"},
		{"use etld_test; build-tools", "use etld_test; build-tools"},
		{"near 'etld-te'", "near '${ETLD_MYSQL_DSN}'"},               // half the password
		{"user etld-test refused", "user ${ETLD_MYSQL_DSN} refused"}, // two of its parts
		{"auth etld-test-pw", "auth ${ETLD_MYSQL_DSN}"},
		{`"etld-test-pw"`, `"${ETLD_MYSQL_DSN}"`},
		{"dial etld:etld-test-pw@tcp(127.0.0.1:3306)/etld_test", "dial ${ETLD_MYSQL_DSN}"},
	}
	for _, tc := range cases {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A piece that no ordinary text holds (a digit between letters, a
// symbol other than the punctuation of names, paths and addresses, a
// control character) is hidden wherever it appears, even inside a word:
// a parser that cut the value at any byte shows it so.
func TestPiecesThatAreNoWords(t *testing.T) {
	r := New([]Secret{{Name: "PW", Value: "Tr0ub4dor/&3-x\\y\"quiet\tmüde", Partial: true}})
	cases := []struct{ in, want string }{
		{"x0ub4dy", "x${PW}y"},
		{"near 'or/&3'", "near '${PW}'"},
		{`got y"qu`, "got ${PW}"},
		{"a\tmüde", "a${PW}"},
		{"ok: dor/etc", "ok: dor/etc"}, // a path's letters and slash
		{"quiet please", "quiet please"},
	}
	for _, tc := range cases {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactNamesTheOwner(t *testing.T) {
	r := New([]Secret{{Name: "A_PASS", Value: "alpha-secret", Partial: true}, {Name: "B_PASS", Value: "bravo-secret-longer", Partial: true}})
	got := r.String("a=alpha-secret b=bravo-secret-longer")
	if got != "a=${A_PASS} b=${B_PASS}" {
		t.Errorf("got %q", got)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		field, name, value string
		want               []Secret
	}{
		{"", "DB_PASSWORD", "pw", []Secret{{"DB_PASSWORD", "pw", true}}},
		{"", "MYPW", "Tr0ub4dor/&3", []Secret{{"MYPW", "Tr0ub4dor/&3", true}}},
		{"", "API_KEY", "k", nil},
		{"", "PORT", "9200", nil},
		// Plain values are shown, long or short: a broker list, a path.
		{"sources[0].brokers", "BROKERS", "127.0.0.1:9092", nil},
		{"sinks[0].path", "FAULTS_OUT", "/mnt/faults/out/orders.csv", nil},
		// Credential fields hide any variable used in them.
		{"sinks[0].password", "DB", "hunter22", []Secret{{"DB", "hunter22", true}}},
		{"sources[0].sasl.username", "KUSER", "etld-reader", []Secret{{"KUSER", "etld-reader", true}}},
		{"sinks[1].api_key", "ES", "c2VjcmV0", []Secret{{"ES", "c2VjcmV0", true}}},
		{"sinks[0].headers.Authorization", "HDR", "Bearer abc", []Secret{{"HDR", "Bearer abc", true}}},
		{"sinks[0].key_fields", "KF", "id", nil},
		// A dsn field hides the value whole, as a URL with user info does
		// anywhere; the embedded password is hidden in pieces too.
		{"sinks[0].dsn", "DB_CONN", "etl@tcp(h:1)/db", []Secret{{"DB_CONN", "etl@tcp(h:1)/db", false}}},
		{"sinks[0].hosts[0]", "ES_URL", "http://u:p%40ss-word@h:9200", []Secret{{"ES_URL", "http://u:p%40ss-word@h:9200", false}, {"ES_URL", "p%40ss-word", true}, {"ES_URL", "p@ss-word", true}}},
		{"", "DSN", "etl:Tr0ub4dor/&3@tcp(h:1)/db", []Secret{{"DSN", "etl:Tr0ub4dor/&3@tcp(h:1)/db", false}, {"DSN", "Tr0ub4dor/&3", true}}},
		{"", "JDBC", "jdbc:mysql://h:3306/db?user=u&password=s3cret-pw", []Secret{{"JDBC", "jdbc:mysql://h:3306/db?user=u&password=s3cret-pw", false}, {"JDBC", "s3cret-pw", true}}},
	}
	for _, tc := range cases {
		if got := Classify(tc.field, tc.name, tc.value); !slices.Equal(got, tc.want) {
			t.Errorf("Classify(%s, %s, %q) = %+v, want %+v", tc.field, tc.name, tc.value, got, tc.want)
		}
	}
}

func TestSet(t *testing.T) {
	env := map[string]string{"DB_PASSWORD": "pw", "PORT": "9200", "DSN": "etl:secret@tcp(h:1)/db", "UNREF": "never-referenced-value",
		"FAULTS_OUT": "/mnt/faults/out.csv", "KUSER": "reader-user", "TOPIC": "orders-topic"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s := NewSet()
	if got := s.Redact("pw"); got != "pw" {
		t.Errorf("empty set changed the text: %q", got)
	}
	s.AddFrom([]byte("a: ${DB_PASSWORD}\nd: ${PORT}\nf: ${MISSING}\nsinks:\n  - path: ${FAULTS_OUT}\n    topic: \"${TOPIC}\"\n    sasl: {username: \"${KUSER}\"}\n"), lookup)
	s.AddFrom([]byte("dsn: ${DSN}"), lookup) // a reload adds files
	got := s.Redact("pw on etl:secret@tcp(h:1)/db port 9200 never-referenced-value; write /mnt/faults/out.csv: no space left on device; orders-topic as reader-user")
	if want := "${DB_PASSWORD} on ${DSN} port 9200 never-referenced-value; write /mnt/faults/out.csv: no space left on device; orders-topic as ${KUSER}"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	// A file that is not YAML still hides what the names and values say.
	s2 := NewSet()
	s2.AddFrom([]byte("x: [${DB_PASSWORD}\n: ${FAULTS_OUT}"), lookup)
	if got := s2.Redact("pw /mnt/faults/out.csv"); got != "${DB_PASSWORD} /mnt/faults/out.csv" {
		t.Errorf("not YAML: Redact = %q", got)
	}
	var none *Set
	if got := none.Redact("pw"); got != "pw" {
		t.Errorf("nil Set changed the text: %q", got)
	}
}

func TestHandler(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		s := NewSet()
		s.Add(Secret{Name: "MY_SECRET", Value: nasty, Partial: true})
		var buf bytes.Buffer
		var h slog.Handler = slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
		if format == "text" {
			h = slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
		}
		log := slog.New(s.Handler(h)).With("dsn", "etl:"+nasty+"@tcp").WithGroup("g")
		log.Debug("connect "+nasty+" failed",
			"error", fmt.Errorf("open: %w", errors.New("auth "+strconv.Quote(nasty))),
			slog.Group("conn", "pw", nasty[:6]),
			"opts", map[string]string{"password": nasty},
			"n", 3)
		out := buf.String()
		if l := leaks(out, nasty); len(l) > 0 {
			t.Errorf("%s: secret in log line %v: %s", format, l, out)
		}
		if strings.Count(out, "${MY_SECRET}") < 5 || !strings.Contains(out, "n=3") && !strings.Contains(out, `"n":3`) {
			t.Errorf("%s: log line lacks the markers or the count: %s", format, out)
		}
	}
}

func BenchmarkRedactLogLine(b *testing.B) {
	var secrets []Secret
	for i := range 20 {
		secrets = append(secrets, Secret{Name: fmt.Sprintf("S%d_PASSWORD", i), Value: fmt.Sprintf("secret-value-%d-%s", i, nasty), Partial: true})
	}
	r := New(secrets)
	line := strings.Repeat("pipeline orders: sink es wrote 512 rows in 3ms to http://127.0.0.1:9200/idx ", 3)
	b.ReportAllocs()
	for b.Loop() {
		r.String(line)
	}
}
