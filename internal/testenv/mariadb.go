package testenv

import (
	"database/sql"
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
)

// PrivateMariaDB is a MariaDB server of one test alone, on its own port
// and data dir, so that it can be stopped and started again for real,
// or run with settings of its own (the shared one serves the other
// tests). It is a child process of the test, stopped by its pid in
// t.Cleanup. Its binary log is on, as the shared server's is
// (testenv/mariadb.sh), unless the test's arguments say otherwise.
type PrivateMariaDB struct {
	t              testing.TB
	bin            string
	args           []string
	data, run, tmp string
	port           int
	cmd            *exec.Cmd
	exited         chan struct{}
	DSN            string // etld's account over TCP, database etld
	socketRoot     string // the unix socket, for the root account
}

// binlogArgs are the shared server's binary log settings.
var binlogArgs = []string{"--server-id=1", "--log-bin=mariadb-bin", "--binlog-format=ROW",
	"--binlog-row-image=FULL", "--binlog-row-metadata=FULL"}

// mariadbBinary finds a MariaDB program where Debian puts it; a missing
// one skips the test, or fails it when the services are required (CI).
func mariadbBinary(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin"} {
		if p := filepath.Join(dir, name); fileExists(p) {
			return p
		}
	}
	msg := fmt.Sprintf("%s is not installed (testenv/mariadb.sh installs it): a private MariaDB cannot be started", name)
	if Required() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// StartMariaDB initialises a data dir and starts a private server with
// the shared server's binlog settings and then args (server options such
// as --skip-log-bin or --binlog-format=MIXED, which override them). The
// etld account may create tables in database etld and replicate.
func StartMariaDB(t testing.TB, extra ...string) *PrivateMariaDB {
	t.Helper()
	m := &PrivateMariaDB{t: t, bin: mariadbBinary(t, "mariadbd"), args: append(append([]string(nil), binlogArgs...), extra...)}
	install := mariadbBinary(t, "mariadb-install-db")
	client := mariadbBinary(t, "mariadb")
	// Not under t.TempDir: its 0700 parent would keep the mysql user out.
	base, err := os.MkdirTemp("", "etld-private-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	// Its own tmpdir: servers and bootstraps running side by side in a
	// shared /tmp lost each other's temporary tables in CI.
	m.data, m.run, m.tmp = filepath.Join(base, "data"), filepath.Join(base, "run"), filepath.Join(base, "tmp")
	m.socketRoot = filepath.Join(m.run, "mysqld.sock")
	uid, gid := -1, -1
	if os.Getuid() == 0 {
		u, err := user.Lookup("mysql")
		if err != nil {
			t.Fatalf("the mysql user of Debian's package: %v", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	}
	for _, d := range []string{base, m.data, m.run, m.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if uid >= 0 {
			if err := os.Chown(d, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	args := []string{"--no-defaults", "--datadir=" + m.data, "--tmpdir=" + m.tmp, "--skip-test-db"}
	if uid >= 0 {
		args = append(args, "--user=mysql")
	}
	if out, err := exec.Command(install, args...).CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	t.Cleanup(m.Stop)
	m.Start()

	admin := "root"
	if uid < 0 {
		u, _ := user.Current()
		admin = u.Username
	}
	const password = "private-etld-pw"
	setup := "CREATE DATABASE etld; CREATE USER 'etld'@'%' IDENTIFIED BY '" + password + "'; GRANT ALL ON etld.* TO 'etld'@'%'; GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'etld'@'%';"
	if out, err := exec.Command(client, "--no-defaults", "--socket="+m.socketRoot, "-u", admin, "-e", setup).CombinedOutput(); err != nil {
		t.Fatalf("creating the etld account: %v\n%s", err, out)
	}
	m.DSN = fmt.Sprintf("etld:%s@tcp(127.0.0.1:%d)/etld", password, m.port)
	m.waitReady()
	return m
}

// Start runs the server on its data dir and port and waits until the
// socket answers.
func (m *PrivateMariaDB) Start() {
	m.t.Helper()
	args := []string{"--no-defaults", "--datadir=" + m.data, "--tmpdir=" + m.tmp, "--socket=" + m.socketRoot,
		"--pid-file=" + filepath.Join(m.run, "mysqld.pid"), "--port=" + strconv.Itoa(m.port),
		"--bind-address=127.0.0.1", "--log-error=" + filepath.Join(m.run, "error.log"), "--skip-name-resolve"}
	if os.Getuid() == 0 {
		args = append(args, "--user=mysql")
	}
	args = append(args, m.args...)
	m.cmd = exec.Command(m.bin, args...)
	if err := m.cmd.Start(); err != nil {
		m.t.Fatalf("mariadbd: %v", err)
	}
	m.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(m.cmd, m.exited)
	Eventually(m.t, 60*time.Second, "the private MariaDB's socket", func() error {
		select {
		case <-m.exited:
			log, _ := os.ReadFile(filepath.Join(m.run, "error.log"))
			m.t.Fatalf("mariadbd exited at start:\n%s", log)
		default:
		}
		c, err := net.Dial("unix", m.socketRoot)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// waitReady waits until etld's account can run a query over TCP.
func (m *PrivateMariaDB) waitReady() {
	m.t.Helper()
	Eventually(m.t, 60*time.Second, "the private MariaDB over TCP", func() error {
		db, err := sql.Open("mysql", m.DSN)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.Ping()
	})
}

// Stop stops the server with SIGTERM to its pid, as systemd would, and
// waits for it to exit; a server that has not exited within a minute is
// killed.
func (m *PrivateMariaDB) Stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	select {
	case <-m.exited:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(time.Minute):
		_ = m.cmd.Process.Kill()
		<-m.exited
	}
}

// Restart stops the server, keeps it down for down, and starts it again
// on the same port and data; it returns when etld's account can query.
func (m *PrivateMariaDB) Restart(down time.Duration) {
	m.t.Helper()
	m.Stop()
	time.Sleep(down) // the outage itself, not a synchronisation
	m.Start()
	m.waitReady()
}

// WaitReady waits until etld's account can run a query over TCP (after
// Start).
func (m *PrivateMariaDB) WaitReady() { m.waitReady() }

// Open is a client of the private server, as etld, closed when the test
// ends.
func (m *PrivateMariaDB) Open() *sql.DB {
	m.t.Helper()
	db, err := sql.Open("mysql", m.DSN)
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { db.Close() })
	return db
}
