package admin

import (
	"crypto/subtle"
	"fmt"
	"html"
	"net/http"
	"strings"
)

// Auth says who may see /ui and /pipelines.
type Auth struct {
	// Required turns the token check on: etld sets it when the admin
	// address is not loopback, or when a token is configured.
	Required bool
	// Token is admin.token. Required with no token refuses everyone:
	// the pages are not served beyond loopback without one.
	Token string
}

// TokenCookie carries the token for a browser, set by the login form:
// HttpOnly (the page's scripts never see it), SameSite=Strict (no other
// site's page sends it) and Path=/ (so it reaches /pipelines through a
// proxy that serves the console under a path prefix).
const TokenCookie = "etld_admin_token"

// ConsoleHeader must be set on every POST: a form or image on another
// site cannot set a header, and a script there that sets one needs a
// CORS preflight that this server never answers, so a browser never
// sends a cross-site POST with it, even to a loopback server.
const ConsoleHeader = "X-Etld-Console"

// ok reports whether r carries the token: "Authorization: Bearer T" or
// the cookie.
func (a Auth) ok(r *http.Request) bool {
	if !a.Required {
		return true
	}
	if a.Token == "" {
		return false
	}
	got := ""
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got = strings.TrimPrefix(h, "Bearer ")
	} else if c, err := r.Cookie(TokenCookie); err == nil {
		got = c.Value
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(a.Token)) == 1
}

// protect answers 401 to a request without the token. For a page of
// /ui it answers with the login form, so that a browser can sign in.
func (a Auth) protect(ui bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.ok(r) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="etld admin"`)
		why := "this admin server needs admin.token: send it as Authorization: Bearer TOKEN"
		if a.Token == "" {
			why = "the admin address is not loopback and admin.token is not set: set it (ETLD_ADMIN_TOKEN) to use /ui and /pipelines"
		}
		if ui && r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, loginPage, html.EscapeString(why), a.Token != "")
			return
		}
		http.Error(w, why, http.StatusUnauthorized)
	})
}

// login checks the form's token and sets the cookie, then sends the
// browser back to the console. The redirect is relative, so that it
// works under any path prefix.
func (a Auth) login(w http.ResponseWriter, r *http.Request) {
	tok := r.PostFormValue("token")
	try := a
	try.Required = true
	r.Header.Set("Authorization", "Bearer "+tok)
	if !try.ok(r) {
		http.Error(w, "wrong token", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	relativeRedirect(w, "./", http.StatusSeeOther)
}

// csrf refuses a POST without ConsoleHeader.
func csrf(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(ConsoleHeader) == "" {
			http.Error(w, "missing "+ConsoleHeader+" header", http.StatusForbidden)
			return
		}
		h(w, r)
	}
}

// loginPage is the 401 answer to a browser: %s is why, %t whether a
// token can be entered at all. No script: the form posts to login, a
// path relative to the page.
const loginPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>etld: sign in</title>
<style>body{font:15px system-ui,sans-serif;margin:3em auto;max-width:36em;color:#222}input{font:inherit;padding:.3em}</style></head>
<body><h1>etld console</h1><p id="why">%s</p>
<form method="post" action="login" data-enabled="%t"><label>Token <input type="password" name="token" autocomplete="current-password"></label> <button type="submit">Sign in</button></form>
</body></html>
`
