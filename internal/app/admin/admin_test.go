package admin

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// newRequest is a request to a loopback server, as a local client sends
// it (httptest's own Host, example.com, is what a rebinding page sends).
func newRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "127.0.0.1:9464"
	return r
}

func TestHandler(t *testing.T) {
	ready := false
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "etld_test_total", Help: "a test counter"})
	c.Add(7)
	reg.MustRegister(c)
	h := Handler(Options{
		Ready:     func(bool) (bool, []string) { return ready, []string{"pipeline p (p.yaml) is retrying: broker down"} },
		Pipelines: func() any { return []map[string]string{{"name": "p", "state": "retrying"}} },
		Gatherer:  reg,
	})
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newRequest("GET", path, nil))
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
	h.ServeHTTP(rec, newRequest("POST", "/healthz", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz = %d, want 405", rec.Code)
	}
}

func TestListenReportsAddress(t *testing.T) {
	s, err := Listen("127.0.0.1:0", Options{Ready: func(bool) (bool, []string) { return true, nil }, Pipelines: func() any { return nil }})
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

type fakeConsole struct{ sampling bool }

func (f *fakeConsole) History(name string) (any, bool) {
	return map[string]string{"h": name}, name == "p"
}
func (f *fakeConsole) Plan(name string) (any, bool) {
	return map[string]string{"plan": name}, name == "p"
}
func (f *fakeConsole) File(name string) (any, bool) {
	return map[string]string{"file": name}, name == "p"
}
func (f *fakeConsole) Sample(name string) (any, bool) {
	return map[string]bool{"enabled": f.sampling}, name == "p"
}
func (f *fakeConsole) SetSample(name string, on bool) error {
	if name != "p" {
		return errors.New("no such pipeline")
	}
	f.sampling = on
	return nil
}

func TestAuthAndConsole(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page "+r.URL.Path) })
	opt := func(auth Auth) Options {
		return Options{
			Ready:     func(bool) (bool, []string) { return true, nil },
			Pipelines: func() any { return []string{} },
			Console:   &fakeConsole{},
			UI:        ui,
			Auth:      auth,
		}
	}
	type req struct {
		method, path, bearer, cookie, csrf, body string
	}
	do := func(h http.Handler, q req) (int, string, http.Header) {
		r := newRequest(q.method, q.path, strings.NewReader(q.body))
		if q.bearer != "" {
			r.Header.Set("Authorization", "Bearer "+q.bearer)
		}
		if q.cookie != "" {
			r.AddCookie(&http.Cookie{Name: TokenCookie, Value: q.cookie})
		}
		if q.csrf != "" {
			r.Header.Set(ConsoleHeader, q.csrf)
		}
		if q.method == "POST" && strings.HasSuffix(q.path, "/login") {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code, rec.Body.String(), rec.Result().Header
	}
	cases := []struct {
		name string
		auth Auth
		req  req
		code int
		body string
	}{
		{"loopback, no token: open", Auth{}, req{method: "GET", path: "/pipelines"}, 200, "[]"},
		{"loopback, no token: page", Auth{}, req{method: "GET", path: "/ui/"}, 200, "page /"},
		{"ui redirects relatively", Auth{}, req{method: "GET", path: "/ui"}, 301, ""},
		{"required, no token set: refused", Auth{Required: true}, req{method: "GET", path: "/pipelines", bearer: "x"}, 401, "admin.token is not set"},
		{"required, no token: page is the form", Auth{Required: true, Token: "t0k"}, req{method: "GET", path: "/ui/"}, 401, `action="login"`},
		{"required, wrong token", Auth{Required: true, Token: "t0k"}, req{method: "GET", path: "/pipelines", bearer: "nope"}, 401, "Bearer"},
		{"required, bearer", Auth{Required: true, Token: "t0k"}, req{method: "GET", path: "/pipelines", bearer: "t0k"}, 200, "[]"},
		{"required, cookie", Auth{Required: true, Token: "t0k"}, req{method: "GET", path: "/ui/app.js", cookie: "t0k"}, 200, "page /app.js"},
		{"required, history without token", Auth{Required: true, Token: "t0k"}, req{method: "GET", path: "/pipelines/p/history"}, 401, ""},
		{"history", Auth{Required: true, Token: "t0k"}, req{method: "GET", path: "/pipelines/p/history", bearer: "t0k"}, 200, `"h": "p"`},
		{"plan", Auth{}, req{method: "GET", path: "/pipelines/p/plan"}, 200, `"plan": "p"`},
		{"file of an unknown pipeline", Auth{}, req{method: "GET", path: "/pipelines/q/file"}, 404, "no pipeline"},
		{"sample POST without the console header", Auth{}, req{method: "POST", path: "/pipelines/p/sample", body: `{"enabled":true}`}, 403, "X-Etld-Console"},
		{"sample POST without token", Auth{Required: true, Token: "t0k"}, req{method: "POST", path: "/pipelines/p/sample", csrf: "1", body: `{"enabled":true}`}, 401, ""},
		{"sample POST", Auth{Required: true, Token: "t0k"}, req{method: "POST", path: "/pipelines/p/sample", cookie: "t0k", csrf: "1", body: `{"enabled":true}`}, 200, `"enabled": true`},
		{"sample POST, bad body", Auth{}, req{method: "POST", path: "/pipelines/p/sample", csrf: "1", body: `{}`}, 400, "enabled"},
		{"metrics stay open", Auth{Required: true, Token: "t0k"}, req{method: "GET", path: "/healthz"}, 200, "ok"},
		{"login, wrong token", Auth{Required: true, Token: "t0k"}, req{method: "POST", path: "/ui/login", body: "token=nope"}, 401, "wrong token"},
	}
	for _, tc := range cases {
		code, body, _ := do(Handler(opt(tc.auth)), tc.req)
		if code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("%s: %s %s = %d %q, want %d containing %q", tc.name, tc.req.method, tc.req.path, code, body, tc.code, tc.body)
		}
	}
	// The redirect stays relative, so a path prefix survives it.
	if _, _, h := do(Handler(opt(Auth{})), req{method: "GET", path: "/ui"}); h.Get("Location") != "ui/" {
		t.Errorf("GET /ui redirects to %q, want ui/", h.Get("Location"))
	}
	// A good login sets an HttpOnly, SameSite=Strict cookie for every path
	// and sends the browser back to the page, relatively.
	code, _, h := do(Handler(opt(Auth{Required: true, Token: "t0k"})), req{method: "POST", path: "/ui/login", body: "token=t0k"})
	c := h.Get("Set-Cookie")
	if code != http.StatusSeeOther || h.Get("Location") != "./" || !strings.Contains(c, TokenCookie+"=t0k") || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") || !strings.Contains(c, "Path=/") {
		t.Errorf("login = %d, Location %q, Set-Cookie %q", code, h.Get("Location"), c)
	}
}

// TestPprof checks that /debug/pprof/ exists only with Options.Pprof and
// needs the token wherever /pipelines does.
func TestPprof(t *testing.T) {
	cases := []struct {
		name   string
		pprof  bool
		auth   Auth
		path   string
		bearer string
		code   int
		body   string
	}{
		{"off: not found", false, Auth{}, "/debug/pprof/", "", 404, ""},
		{"off: heap not found", false, Auth{}, "/debug/pprof/heap", "", 404, ""},
		{"on, loopback without token: index", true, Auth{}, "/debug/pprof/", "", 200, "goroutine"},
		{"on, token required, none sent", true, Auth{Required: true, Token: "t0k"}, "/debug/pprof/", "", 401, "Bearer"},
		{"on, token required, heap without it", true, Auth{Required: true, Token: "t0k"}, "/debug/pprof/heap", "", 401, ""},
		{"on, token required, wrong one", true, Auth{Required: true, Token: "t0k"}, "/debug/pprof/heap", "nope", 401, ""},
		{"on, required but no token set", true, Auth{Required: true}, "/debug/pprof/", "x", 401, "admin.token is not set"},
		{"on, token sent: index", true, Auth{Required: true, Token: "t0k"}, "/debug/pprof/", "t0k", 200, "goroutine"},
		{"on, token sent: goroutines as text", true, Auth{Required: true, Token: "t0k"}, "/debug/pprof/goroutine?debug=1", "t0k", 200, "goroutine profile:"},
		{"on: no cmdline (it may hold --admin-token)", true, Auth{}, "/debug/pprof/cmdline", "", 404, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := Handler(Options{Ready: func(bool) (bool, []string) { return true, nil }, Pipelines: func() any { return []string{} }, Auth: tc.auth, Pprof: tc.pprof})
			req := newRequest("GET", tc.path, nil)
			if tc.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tc.bearer)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			body, _ := io.ReadAll(rec.Result().Body)
			if rec.Code != tc.code || !strings.Contains(string(body), tc.body) {
				t.Errorf("GET %s = %d %.200q, want %d containing %q", tc.path, rec.Code, body, tc.code, tc.body)
			}
		})
	}
}

// TestPprofHeapProfileIsGzip checks that a binary profile comes back in
// pprof's format (gzip-compressed protobuf), so go tool pprof reads it.
func TestPprofHeapProfileIsGzip(t *testing.T) {
	h := Handler(Options{Ready: func(bool) (bool, []string) { return true, nil }, Pipelines: func() any { return nil }, Pprof: true})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest("GET", "/debug/pprof/heap", nil))
	body := rec.Body.Bytes()
	if rec.Code != 200 || len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
		t.Fatalf("GET /debug/pprof/heap = %d, %d bytes starting %x: want 200 and a gzip stream", rec.Code, len(body), body[:min(len(body), 4)])
	}
}

// TestHostHeader: a page of another site whose name resolves to the
// loopback address (DNS rebinding) sends its own name as Host; only the
// loopback names, IP addresses and the configured address's host are
// answered, so such a page reads nothing, even from a loopback server
// without a token.
func TestHostHeader(t *testing.T) {
	cases := []struct {
		address, host string
		ok            bool
	}{
		{"127.0.0.1:9464", "127.0.0.1:9464", true},
		{"127.0.0.1:9464", "localhost:9464", true},
		{"127.0.0.1:9464", "LocalHost", true},
		{"127.0.0.1:9464", "console.localhost:9464", true},
		{"127.0.0.1:9464", "[::1]:9464", true},
		{"127.0.0.1:9464", "10.0.0.7:9464", true}, // an IP address cannot be rebound
		{"127.0.0.1:9464", "evil.example.com:9464", false},
		{"127.0.0.1:9464", "evil.example.com", false},
		{"127.0.0.1:9464", "localhost.evil.example.com", false},
		{"127.0.0.1:9464", "", true}, // HTTP/1.0 without Host: no name to rebind
		{"", "example.com", false},   // Handler without an address: loopback only
		{"etld.internal:9464", "etld.internal:9464", true},
		{"etld.internal:9464", "ETLD.internal", true},
		{"etld.internal:9464", "other.internal:9464", false},
		// Listening everywhere, a server is reached by names it cannot
		// know (a Service's DNS name); beyond loopback its pages need the
		// token, which a rebinding page does not have.
		{":9464", "etld.monitoring.svc:9464", true},
		{"0.0.0.0:9464", "etld.monitoring.svc", true},
		{"[::]:9464", "anything", true},
	}
	for _, tc := range cases {
		h := Handler(Options{
			Address:   tc.address,
			Ready:     func(bool) (bool, []string) { return true, nil },
			Pipelines: func() any { return []string{} },
			Console:   &fakeConsole{},
		})
		for _, path := range []string{"/pipelines", "/pipelines/p/file", "/readyz", "/healthz"} {
			r := httptest.NewRequest("GET", path, nil)
			r.Host = tc.host
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if ok := rec.Code == 200; ok != tc.ok {
				t.Errorf("address %q, Host %q: GET %s = %d %q, want answered: %v", tc.address, tc.host, path, rec.Code, rec.Body.String(), tc.ok)
			}
			if !tc.ok && (rec.Code != http.StatusMisdirectedRequest || !strings.Contains(rec.Body.String(), "Host")) {
				t.Errorf("address %q, Host %q: GET %s = %d %q, want 421 naming the Host header", tc.address, tc.host, path, rec.Code, rec.Body.String())
			}
		}
	}
}

// TestReadyzDetailsNeedTheToken: the reasons of /readyz quote errors,
// which may quote a record ("cannot parse \"alice@example.com\" as
// INT"); they are shown to whoever may read /pipelines, which holds the
// same text, and to others the states only.
func TestReadyzDetailsNeedTheToken(t *testing.T) {
	ready := func(details bool) (bool, []string) {
		if details {
			return false, []string{`pipeline p is failed: cannot parse "alice@example.com" as INT`}
		}
		return false, []string{"pipeline p is failed"}
	}
	for _, tc := range []struct {
		auth          Auth
		bearer        string
		record, state bool
	}{
		{Auth{}, "", true, true}, // loopback without a token: /pipelines is open too
		{Auth{Required: true, Token: "t0k"}, "", false, true},
		{Auth{Required: true, Token: "t0k"}, "nope", false, true},
		{Auth{Required: true, Token: "t0k"}, "t0k", true, true},
		{Auth{Required: true}, "", false, true},
	} {
		h := Handler(Options{Ready: ready, Pipelines: func() any { return nil }, Auth: tc.auth})
		r := httptest.NewRequest("GET", "/readyz", nil)
		r.Host = "127.0.0.1"
		if tc.bearer != "" {
			r.Header.Set("Authorization", "Bearer "+tc.bearer)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.String()
		if rec.Code != 503 || strings.Contains(body, "alice") != tc.record || strings.Contains(body, "pipeline p is failed") != tc.state {
			t.Errorf("auth %+v, bearer %q: /readyz = %d %q, want 503, the record shown: %v", tc.auth, tc.bearer, rec.Code, body, tc.record)
		}
	}
}
