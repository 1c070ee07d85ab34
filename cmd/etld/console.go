package main

import (
	"github.com/etld/etld/internal/app/admin"
	"github.com/etld/etld/internal/app/console"
	"github.com/etld/etld/internal/app/daemon"
	"github.com/etld/etld/internal/redact"
)

// consoleData adapts the supervisor to what the admin server's console
// endpoints read.
type consoleData struct{ sup *daemon.Supervisor }

func (c consoleData) History(name string) (any, bool) { return c.sup.History(name) }
func (c consoleData) Plan(name string) (any, bool)    { return c.sup.Plan(name) }
func (c consoleData) File(name string) (any, bool)    { return c.sup.File(name) }
func (c consoleData) Sample(name string) (any, bool)  { return c.sup.Sample(name) }
func (c consoleData) SetSample(name string, on bool) error {
	return c.sup.SetSample(name, on)
}

// adminAuth is the one place that decides whether /ui and /pipelines
// need the token (daemon.AdminConfig.TokenRequired: beyond loopback, or
// whenever one is set). The token becomes a secret of the process: no
// log line or status ever shows it.
func adminAuth(a daemon.AdminConfig, secrets *redact.Set) admin.Auth {
	if a.Token != "" {
		secrets.Add(redact.Classify("admin.token", "ETLD_ADMIN_TOKEN", a.Token)...)
	}
	return admin.Auth{Required: a.TokenRequired(), Token: a.Token}
}

// consoleOptions fills the console's part of the admin options.
func consoleOptions(opt admin.Options, sup *daemon.Supervisor, a daemon.AdminConfig, secrets *redact.Set) admin.Options {
	opt.Console = consoleData{sup}
	opt.UI = console.Handler()
	opt.Auth = adminAuth(a, secrets)
	opt.Pprof = a.Pprof
	return opt
}

var _ admin.Console = consoleData{}
