package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/etld/etld/internal/daemon"
)

// cmdHealthcheck GETs the admin server's /healthz and exits 0 on 200, 1
// otherwise: the container image has no curl. Without a URL it finds the
// admin address as the daemon does: --config or ETLD_CONFIG, then
// ETLD_ADMIN_ADDRESS, then the default.
func cmdHealthcheck(args []string, stdout, stderr io.Writer) int {
	hf := newHealthcheckFlags()
	if code := parseFlags(hf.fs, args, healthcheckUsage, stdout, stderr); code >= 0 {
		return code
	}
	fs := hf.fs
	if fs.NArg() > 1 {
		fmt.Fprintln(stderr, "etld healthcheck: at most one URL")
		return 2
	}
	url := fs.Arg(0)
	if url == "" {
		cfg := daemon.Defaults()
		if hf.config != "" {
			if err := cfg.LoadFile(hf.config, os.LookupEnv); err != nil {
				fmt.Fprintln(stderr, "etld healthcheck:", err)
				return 1
			}
		}
		if err := cfg.ApplyEnv(os.LookupEnv); err != nil {
			fmt.Fprintln(stderr, "etld healthcheck:", err)
			return 1
		}
		host, port, err := net.SplitHostPort(cfg.Admin.Address)
		if err != nil {
			fmt.Fprintf(stderr, "etld healthcheck: admin address %q: %v\n", cfg.Admin.Address, err)
			return 1
		}
		// A wildcard listen address is reached on loopback.
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = "127.0.0.1"
		}
		url = "http://" + net.JoinHostPort(host, port) + "/healthz"
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

// healthcheckFlags are etld healthcheck's flags.
type healthcheckFlags struct {
	fs     *flag.FlagSet
	config string
}

func newHealthcheckFlags() *healthcheckFlags {
	hf := &healthcheckFlags{fs: flag.NewFlagSet("healthcheck", flag.ContinueOnError)}
	hf.fs.StringVar(&hf.config, "config", os.Getenv(daemon.EnvConfig), "daemon config file whose admin.address to check")
	return hf
}
