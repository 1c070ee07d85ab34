package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/etld/etld/internal/daemon"
)

// cmdHealthcheck GETs the admin server's /healthz and exits 0 on 200, 1
// otherwise: the container image has no curl. The URL defaults to the
// admin address from ETLD_ADMIN_ADDRESS, or the default address.
func cmdHealthcheck(args []string, stdout, stderr io.Writer) int {
	if len(args) > 1 {
		fmt.Fprintln(stderr, "etld healthcheck: at most one URL")
		return 2
	}
	url := ""
	if len(args) == 1 {
		url = args[0]
	} else {
		addr := daemon.DefaultAdminAddress
		if v := os.Getenv("ETLD_ADMIN_ADDRESS"); v != "" {
			addr = v
		}
		// A wildcard listen address is reached on loopback.
		if strings.HasPrefix(addr, ":") || strings.HasPrefix(addr, "0.0.0.0:") || strings.HasPrefix(addr, "[::]:") {
			addr = "127.0.0.1:" + addr[strings.LastIndex(addr, ":")+1:]
		}
		url = "http://" + addr + "/healthz"
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintln(stderr, "etld healthcheck:", err)
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "etld healthcheck: %s: %s\n", url, resp.Status)
		return 1
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}
