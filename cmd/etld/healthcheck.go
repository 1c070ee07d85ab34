package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/etld/etld/internal/app/daemon"
	"github.com/etld/etld/internal/redact"
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
	// The config file's ${VAR}s are as secret here as in the daemon.
	secrets := redact.NewSet()
	fail := func(msg string) int {
		fmt.Fprintln(stderr, "etld healthcheck:", secrets.Redact(msg))
		return 1
	}
	if url == "" {
		cfg := daemon.Defaults()
		if hf.config != "" {
			if data, err := os.ReadFile(hf.config); err == nil {
				secrets.AddFrom(data, os.LookupEnv)
			}
			if err := cfg.LoadFile(hf.config, os.LookupEnv); err != nil {
				return fail(err.Error())
			}
		}
		if err := cfg.ApplyEnv(os.LookupEnv); err != nil {
			return fail(err.Error())
		}
		host, port, err := net.SplitHostPort(cfg.Admin.Address)
		if err != nil {
			return fail(fmt.Sprintf("admin address %q: %v", cfg.Admin.Address, err))
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
		return fail(err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Sprintf("%s: %s", url, resp.Status))
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
