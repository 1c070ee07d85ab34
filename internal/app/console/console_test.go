package console

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// The console is self-contained: no file refers to another origin (the
// SVG namespace is a name, not a fetch), and every URL the page uses is
// relative, so that it works under a path prefix.
func TestFilesAreSelfContained(t *testing.T) {
	absolute := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|(src|href|action)="/|fetch\("/|"/pipelines|'/pipelines`)
	n := 0
	err := fs.WalkDir(Files(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		data, err := fs.ReadFile(Files(), path)
		if err != nil {
			return err
		}
		text := strings.ReplaceAll(string(data), "http://www.w3.org/2000/svg", "")
		if m := absolute.FindString(text); m != "" {
			t.Errorf("%s refers to %q: the console must fetch nothing from elsewhere and use relative URLs", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("%d files, want index.html, app.js and style.css", n)
	}
}

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	for path, want := range map[string]string{"/": `<script src="app.js"`, "/app.js": `const API = "../pipelines"`, "/style.css": ".plan"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s = %d, want %q in the body", path, resp.StatusCode, want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: CSP %q", path, csp)
		}
	}
}
