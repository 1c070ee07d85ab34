package admin

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestHandler(t *testing.T) {
	ready := false
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "etld_test_total", Help: "a test counter"})
	c.Add(7)
	reg.MustRegister(c)
	h := Handler(Options{
		Ready:     func() (bool, []string) { return ready, []string{"pipeline p (p.yaml) is retrying: broker down"} },
		Pipelines: func() any { return []map[string]string{{"name": "p", "state": "retrying"}} },
		Gatherer:  reg,
	})
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		body, _ := io.ReadAll(rec.Result().Body)
		return rec.Code, string(body)
	}
	cases := []struct {
		path  string
		ready bool
		code  int
		body  string
	}{
		{"/healthz", false, 200, "ok"},
		{"/readyz", false, 503, "broker down"},
		{"/readyz", true, 200, "ready"},
		{"/metrics", true, 200, "etld_test_total 7"},
		{"/pipelines", true, 200, `"state": "retrying"`},
		{"/nothing", true, 404, ""},
	}
	for _, tc := range cases {
		ready = tc.ready
		code, body := get(tc.path)
		if code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("GET %s (ready=%v) = %d %q, want %d containing %q", tc.path, tc.ready, code, body, tc.code, tc.body)
		}
	}
	_, body := get("/pipelines")
	var v []map[string]string
	if err := json.Unmarshal([]byte(body), &v); err != nil || len(v) != 1 {
		t.Errorf("/pipelines is not the JSON list: %v %q", err, body)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/healthz", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz = %d, want 405", rec.Code)
	}
}

func TestListenReportsAddress(t *testing.T) {
	s, err := Listen("127.0.0.1:0", Options{Ready: func() (bool, []string) { return true, nil }, Pipelines: func() any { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	resp, err := http.Get("http://" + s.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz = %d", resp.StatusCode)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve after Shutdown = %v, want nil", err)
	}
}

func TestListenPortInUse(t *testing.T) {
	s, err := Listen("127.0.0.1:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.ln.Close()
	if _, err := Listen(s.Addr().String(), Options{}); err == nil || !strings.Contains(err.Error(), "admin server") {
		t.Errorf("binding a port in use: err = %v, want an admin server error", err)
	}
}
