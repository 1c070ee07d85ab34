package daemon

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestSecretsRedact(t *testing.T) {
	env := map[string]string{
		"DB_PASSWORD": "pw",                             // secret name: from 2 characters
		"API_TOKEN":   "tok-abc-tok-abc-tok",            // secret name
		"ES_URL":      "http://u:longpw@127.0.0.1:9200", // long value of a plain name
		"PORT":        "9200",                           // short plain value: kept
		"P":           "x",                              // too short for anything
		"UNREF":       "never-referenced-value",         // not in the file
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s := NewSecrets()
	s.AddFrom([]byte("a: ${DB_PASSWORD}\nb: ${API_TOKEN}\nc: ${ES_URL}/idx\nd: ${PORT}\ne: ${P}\nf: ${MISSING}"), lookup)
	cases := []struct{ in, want string }{
		{"password pw refused", "password ${DB_PASSWORD} refused"},
		{"Bearer tok-abc-tok-abc-tok!", "Bearer ${API_TOKEN}!"},
		{"GET http://u:longpw@127.0.0.1:9200/idx: 401", "GET ${ES_URL}/idx: 401"},
		{"port 9200 x", "port 9200 x"},
		{"never-referenced-value", "never-referenced-value"},
	}
	for _, tc := range cases {
		if got := s.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var nilSecrets *Secrets
	if got := nilSecrets.Redact("pw"); got != "pw" {
		t.Errorf("nil Secrets changed the text: %q", got)
	}
}

func TestSecretsHandler(t *testing.T) {
	s := NewSecrets()
	s.AddFrom([]byte("${MY_SECRET}"), func(string) (string, bool) { return "s3cr3t-value", true })
	var buf bytes.Buffer
	log := slog.New(s.Handler(slog.NewJSONHandler(&buf, nil))).With("dsn", "user:s3cr3t-value@tcp").WithGroup("g")
	log.Error("connect s3cr3t-value failed", "error", errors.New("auth s3cr3t-value"), slog.Group("conn", "pw", "s3cr3t-value"), "n", 3)
	out := buf.String()
	if strings.Contains(out, "s3cr3t") {
		t.Errorf("secret in log line: %s", out)
	}
	for _, want := range []string{`"msg":"connect ${MY_SECRET} failed"`, `"dsn":"user:${MY_SECRET}@tcp"`, `"error":"auth ${MY_SECRET}"`, `"pw":"${MY_SECRET}"`, `"n":3`} {
		if !strings.Contains(out, want) {
			t.Errorf("log line lacks %s: %s", want, out)
		}
	}
}
