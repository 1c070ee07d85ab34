package admin

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// hostCheck answers 421 to a request whose Host header names neither this
// server nor loopback. A page of another site whose name its DNS server
// points at 127.0.0.1 (DNS rebinding) is same-origin with itself, so the
// browser lets it read the answers of a loopback server; the one thing it
// cannot change is its name in the Host header. Accepted: the loopback
// names (localhost and *.localhost, which resolve to loopback only), any
// IP address (no DNS is involved, so nothing can be rebound), the host of
// the listening address, and any name when that host is a wildcard (":9464",
// "0.0.0.0": the server is reached by names it cannot know, and beyond
// loopback its pages need the token, which a rebinding page lacks).
func hostCheck(address string, h http.Handler) http.Handler {
	own, _, err := net.SplitHostPort(address)
	if err != nil {
		own = ""
	}
	ip := net.ParseIP(own)
	anyName := address != "" && (own == "" || (ip != nil && ip.IsUnspecified()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if anyName || allowedHost(r.Host, own) {
			h.ServeHTTP(w, r)
			return
		}
		http.Error(w, fmt.Sprintf("the Host header %q names neither this admin server (%s) nor loopback: refused, as a page of another site whose name points at this address would send it", r.Host, address), http.StatusMisdirectedRequest)
	})
}

// allowedHost reports whether hostport (a Host header) is a loopback
// name, an IP address or own.
func allowedHost(hostport, own string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	switch {
	case host == "": // HTTP/1.0 without Host: no name to rebind
		return true
	case net.ParseIP(host) != nil:
		return true
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return true
	}
	return own != "" && host == strings.ToLower(own)
}
