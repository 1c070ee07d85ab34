package spec

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/internal/testenv"
)

// secret holds every character an encoder changes.
const secret = "p@ss\"w\\rd%2F:/x\nend"

var secretEnv = env(map[string]string{"SECRET_PW": secret, "PORT": "12"})

type options struct {
	Rows  int           `yaml:"rows"`
	Limit uint          `yaml:"limit"`
	Rate  float64       `yaml:"rate"`
	On    bool          `yaml:"on"`
	Wait  time.Duration `yaml:"wait"`
	Inner struct {
		A string `yaml:"a"`
	} `yaml:"inner"`
	Hosts map[string]string `yaml:"hosts"`
	List  []int             `yaml:"list"`
	Short int               `yaml:"short"`
	Plain int               `yaml:"plain"`
}

func TestDecodeErrorsNameTheVariable(t *testing.T) {
	src := `rows: ${SECRET_PW}
limit: ${SECRET_PW}
rate: ${SECRET_PW}
on: ${SECRET_PW}
wait: ${SECRET_PW}
inner: ${SECRET_PW}
hosts: ${SECRET_PW}
list: ${SECRET_PW}
short: "n-${SECRET_PW}-${PORT}"
plain: abc
`
	root, err := ReadYAML("o.yaml", []byte(src), secretEnv)
	if err != nil {
		t.Fatal(err)
	}
	err = Decode("o.yaml", root, "", &options{})
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		"o.yaml:1:7: rows: the value of ${SECRET_PW} is not an integer",
		"o.yaml:2:8: limit: the value of ${SECRET_PW} is not a non-negative integer",
		"o.yaml:3:7: rate: the value of ${SECRET_PW} is not a number",
		"o.yaml:4:5: on: the value of ${SECRET_PW} is not true or false",
		"o.yaml:5:7: wait: the value of ${SECRET_PW} is not a duration such as 500ms, 5s or 1m",
		"o.yaml:6:8: inner: the value of ${SECRET_PW} is not a mapping",
		"o.yaml:7:8: hosts: the value of ${SECRET_PW} is not a mapping",
		"o.yaml:8:7: list: the value of ${SECRET_PW} is not a list",
		`o.yaml:9:8: short: the value of "n-${SECRET_PW}-${PORT}" is not an integer`,
		`o.yaml:10:8: plain: want an integer, got "abc"`, // not from a variable: quoted
	}
	text := err.Error()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in:\n%s", w, text)
		}
	}
	if leaks := testenv.SecretLeaks(text, secret); len(leaks) > 0 {
		t.Errorf("the errors show the secret (%v):\n%s", leaks, text)
	}
}

func TestParseErrorsNameTheVariable(t *testing.T) {
	src := `version: ${SECRET_PW}
name: ${SECRET_PW}
execution: ${SECRET_PW}
checkpoint_interval: ${SECRET_PW}
mini_batch: ${SECRET_PW}
sources:
  - name: s
    type: datagen
    schema: ["${SECRET_PW}"]
    on_error: ${SECRET_PW}
sinks:
  - name: o
    from: ${SECRET_PW}
    type: print
    mode: ${SECRET_PW}
    key: {a: "${SECRET_PW}"}
`
	_, err := Parse("p.yaml", []byte(src), secretEnv)
	if err == nil {
		t.Fatal("no error")
	}
	text := err.Error()
	if leaks := testenv.SecretLeaks(text, secret); len(leaks) > 0 {
		t.Errorf("the errors show the secret (%v):\n%s", leaks, text)
	}
	for _, path := range []string{"version", "name", "execution", "checkpoint_interval", "mini_batch", "sources[0].schema[0]", "sources[0].on_error", "sinks[0].from", "sinks[0].mode"} {
		found := false
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, " "+path+": ") {
				found = true
				if !strings.Contains(line, "${SECRET_PW}") {
					t.Errorf("%s: the error does not name the variable: %s", path, line)
				}
			}
		}
		if !found {
			t.Errorf("no error about %s in:\n%s", path, text)
		}
	}
}

func TestRedactMessagesAboutANode(t *testing.T) {
	root, err := ReadYAML("o.yaml", []byte("dsn: etl:${SECRET_PW}@tcp(127.0.0.1:1)db\nother: plain\n"), secretEnv)
	if err != nil {
		t.Fatal(err)
	}
	dsn := root.Content[1]
	if !FromVar(root) || !FromVar(dsn) || FromVar(root.Content[3]) {
		t.Errorf("FromVar: root %v, dsn %v, other %v", FromVar(root), FromVar(dsn), FromVar(root.Content[3]))
	}
	// A driver's DSN parse error cuts the value at the '/' in the password.
	msg := "default addr for network 'etl:" + secret[:strings.Index(secret, "/")] + "' unknown"
	got := Redact(root, msg)
	if got != "default addr for network 'etl:${SECRET_PW}' unknown" {
		t.Errorf("Redact = %q", got)
	}
	if got := Redact(root.Content[3], msg); got != msg {
		t.Errorf("Redact of a node with no variable changed the message: %q", got)
	}
	// A copy of a node, as Decode makes for yaml.Node fields, keeps it.
	var holder struct {
		DSN yaml.Node `yaml:"dsn"`
	}
	if err := Decode("o.yaml", root, "", &holder, "other"); err != nil {
		t.Fatal(err)
	}
	if !FromVar(&holder.DSN) {
		t.Error("the decoded copy of the dsn node forgot its variable")
	}
}
