// Package console is etld's web console: a page of plain HTML, CSS and
// JavaScript, embedded in the binary (no build step, nothing fetched from
// elsewhere), that the admin server serves at /ui/. The page reads the
// admin server's JSON (/pipelines and /pipelines/{name}/history, plan,
// file and sample) through URLs relative to itself, so it works under any
// path prefix a reverse proxy adds, and draws its charts and the plan
// graph itself as SVG.
package console

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// Files are the console's files: index.html, app.js, style.css.
func Files() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}

// Handler serves the files, "/" being index.html. Responses forbid
// inline scripts and anything from another origin, and framing.
func Handler() http.Handler {
	files := http.FileServerFS(Files())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
