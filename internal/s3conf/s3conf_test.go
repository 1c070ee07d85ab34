package s3conf

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]string{
		"s3://b":             "b|",
		"s3://b/":            "b|",
		"s3://b/a/*.csv":     "b|a/*.csv",
		"s3://":              "error: names no bucket",
		"s3:///k":            "error: names no bucket",
		"s3://b*/k":          "error: cannot be a glob",
		"/local/path":        "error: not an s3://",
		"s3://b/dt=1/x.json": "b|dt=1/x.json",
	} {
		l, err := Parse(in)
		got := l.Bucket + "|" + l.Key
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, want) && !strings.Contains(got, strings.TrimPrefix(want, "error: ")) {
			t.Errorf("Parse(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestResolve(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }

	r, err := Config{}.Resolve(getenv)
	if err != nil || r.Endpoint.String() != "https://s3.us-east-1.amazonaws.com" || r.PathStyle || !r.anonymous {
		t.Errorf("no settings: %+v, %v; want AWS's endpoint in us-east-1, anonymous", r, err)
	}
	env = map[string]string{"AWS_REGION": "eu-west-1", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:7070", "AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "sk"}
	r, err = Config{}.Resolve(getenv)
	if err != nil || r.Region != "eu-west-1" || r.Endpoint.Host != "127.0.0.1:7070" || !r.PathStyle || r.anonymous {
		t.Errorf("from the environment: %+v, %v", r, err)
	}
	r, err = Config{Endpoint: "http://10.0.0.1:9000", Region: "x", AccessKeyID: "a", SecretAccessKey: "b"}.Resolve(getenv)
	if err != nil || r.Region != "x" || r.Endpoint.Host != "10.0.0.1:9000" {
		t.Errorf("options win over the environment: %+v, %v", r, err)
	}
	if _, err := (Config{AccessKeyID: "a"}).Resolve(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "secret_access_key") {
		t.Errorf("a key id without a secret: %v", err)
	}
	if _, err := (Config{Endpoint: "127.0.0.1:7070"}).Resolve(getenv); err == nil || !strings.Contains(err.Error(), "want a URL") {
		t.Errorf("an endpoint without a scheme: %v", err)
	}
}

func TestSecretNeverPrints(t *testing.T) {
	c := Config{AccessKeyID: "id", SecretAccessKey: "very-secret", SessionToken: "tok-secret"}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(s, "secret") {
			t.Errorf("printed: %s", s)
		}
	}
}
