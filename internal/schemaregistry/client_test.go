package schemaregistry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestAuthHeaders: basic and bearer credentials reach the registry as
// the Authorization header (the test registry runs without
// authentication, which needs an OpenID Connect server), and a URL with
// credentials in it is refused.
func TestAuthHeaders(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Write([]byte(`{"schema":"\"int\""}`))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: srv.URL, BasicAuthUserInfo: "ann:s3cret"}, "Basic YW5uOnMzY3JldA=="},
		{Config{URL: srv.URL, BearerToken: "tok"}, "Bearer tok"},
		{Config{URL: srv.URL}, ""},
	} {
		cfg, want := tc.cfg, tc.want
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.SchemaByID(t.Context(), 1); err != nil || got != want {
			t.Errorf("%+v: %v, Authorization %q", cfg, err, got)
		}
	}
	for _, cfg := range []Config{{URL: "http://ann:pw@host"}, {URL: "host:8081"}, {URL: srv.URL, BasicAuthUserInfo: "ann", BearerToken: "t"}, {URL: srv.URL, BasicAuthUserInfo: "no-colon"}} {
		if _, err := New(cfg); err == nil || strings.Contains(err.Error(), "pw") {
			t.Errorf("%v: %v", cfg.URL, err)
		}
	}
}

// TestStatusErrors: a 4xx is final with the registry's message; a 5xx
// is retried until the context ends, then ErrUnavailable.
func TestStatusErrors(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if strings.HasSuffix(r.URL.Path, "/404") {
			w.WriteHeader(404)
			w.Write([]byte(`{"error_code":40403,"message":"Schema not found"}`))
			return
		}
		w.WriteHeader(503)
	}))
	defer srv.Close()
	c, _ := New(Config{URL: srv.URL})
	_, err := c.SchemaByID(t.Context(), 404)
	if se, ok := err.(interface{ Unwrap() error }); !ok || calls != 1 || !strings.Contains(err.Error(), "error 40403: Schema not found") {
		t.Fatalf("404: %v (%v), %d calls", err, se, calls)
	}
	calls = 0
	ctx, cancel := contextWithTimeout(t, 700)
	defer cancel()
	if _, err := c.SchemaByID(ctx, 1); err == nil || !strings.Contains(err.Error(), "unavailable") || calls < 3 {
		t.Fatalf("503: %v after %d calls", err, calls)
	}
}

func contextWithTimeout(t *testing.T, ms int) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), time.Duration(ms)*time.Millisecond)
}
