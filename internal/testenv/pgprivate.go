package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PrivatePostgres is a PostgreSQL server of one test alone, on its own
// port and data dir, so that the test can stop and start it for real
// while the shared one serves the other tests. It runs the programs
// testenv/postgres.sh installs, as a child process of the test (as the
// postgres user when the test runs as root), and is stopped when the
// test ends.
type PrivatePostgres struct {
	t      testing.TB
	bin    string
	data   string
	run    string
	port   int
	cred   *syscall.Credential
	cmd    *exec.Cmd
	exited chan struct{}
	// DSN is the URL of user etld (LOGIN REPLICATION, owner of database
	// etld) over TCP.
	DSN string
}

const privatePgPassword = "private-etld-pw"

// StartPrivatePostgres initialises a data dir with wal_level=logical and
// starts the server; it skips or fails t as PostgresBin does when the
// programs are not installed.
func StartPrivatePostgres(t testing.TB) *PrivatePostgres {
	t.Helper()
	p := &PrivatePostgres{t: t, bin: PostgresBin(t)}
	// Not under t.TempDir: its 0700 parent would keep the postgres user
	// out.
	base, err := os.MkdirTemp("", "etld-private-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	p.data, p.run = filepath.Join(base, "data"), filepath.Join(base, "run")
	uid, gid := -1, -1
	if os.Getuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("the postgres user of Debian's package: %v", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	for d, mode := range map[string]os.FileMode{base: 0o755, p.data: 0o700, p.run: 0o755} {
		if err := os.MkdirAll(d, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		if uid >= 0 {
			if err := os.Chown(d, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	initdb := exec.Command(filepath.Join(p.bin, "initdb"), "-D", p.data, "-U", "postgres", "-E", "UTF8",
		"--locale=C.UTF-8", "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	t.Cleanup(p.Stop)
	p.Start()

	ctx := Context(t, time.Minute)
	admin, err := pgx.Connect(ctx, pgConnString(p.run, p.port, "postgres", "", "postgres"))
	if err != nil {
		t.Fatalf("the private PostgreSQL's socket: %v", err)
	}
	defer admin.Close(context.Background())
	for _, q := range []string{
		"CREATE ROLE etld LOGIN REPLICATION PASSWORD '" + privatePgPassword + "'",
		"CREATE DATABASE etld OWNER etld",
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	p.DSN = fmt.Sprintf("postgres://etld:%s@127.0.0.1:%d/etld?sslmode=disable", privatePgPassword, p.port)
	p.waitReady()
	return p
}

// Start runs the server on its data dir and port and waits until its
// socket answers.
func (p *PrivatePostgres) Start() {
	p.t.Helper()
	p.cmd = exec.Command(filepath.Join(p.bin, "postgres"), "-D", p.data,
		"-c", "listen_addresses=127.0.0.1", "-c", "port="+strconv.Itoa(p.port),
		"-c", "unix_socket_directories="+p.run, "-c", "wal_level=logical",
		"-c", "max_replication_slots=10", "-c", "max_wal_senders=10", "-c", "fsync=off")
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	logFile, err := os.Create(filepath.Join(p.run, "postgres.log"))
	if err != nil {
		p.t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("postgres: %v", err)
	}
	p.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		logFile.Close()
		close(exited)
	}(p.cmd, p.exited)
	Eventually(p.t, time.Minute, "the private PostgreSQL's socket", func() error {
		select {
		case <-p.exited:
			log, _ := os.ReadFile(filepath.Join(p.run, "postgres.log"))
			p.t.Fatalf("postgres exited at start:\n%s", log)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, pgConnString(p.run, p.port, "postgres", "", "postgres"))
		if err != nil {
			return err
		}
		return c.Close(ctx)
	})
}

// waitReady waits until user etld can run a query over TCP.
func (p *PrivatePostgres) waitReady() {
	p.t.Helper()
	Eventually(p.t, time.Minute, "the private PostgreSQL over TCP", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, p.DSN)
		if err != nil {
			return err
		}
		return c.Close(ctx)
	})
}

// Stop shuts the server down fast (SIGINT: sessions are ended, the data
// is written), as `pg_ctl stop -m fast` does, and waits for it to exit;
// a server still running after a minute is killed.
func (p *PrivatePostgres) Stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// Restart stops the server, keeps it down for down, and starts it again
// on the same port and data; it returns when user etld can query.
func (p *PrivatePostgres) Restart(down time.Duration) {
	p.t.Helper()
	p.Stop()
	time.Sleep(down) // the outage itself, not a synchronisation
	p.Start()
	p.waitReady()
}
