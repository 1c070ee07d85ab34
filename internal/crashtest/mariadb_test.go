package crashtest

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

	"github.com/etld/etld/internal/testenv"
)

// privateMariaDB is a MariaDB server of this test alone, on its own port
// and data dir, so that it can be stopped and started again for real
// (the shared one serves the other tests). It is a child process of the
// test, stopped by its pid in t.Cleanup.
type privateMariaDB struct {
	t          *testing.T
	bin        string
	data, run  string
	port       int
	cmd        *exec.Cmd
	exited     chan struct{}
	DSN        string // etld's account over TCP, database etld
	socketRoot string // the unix socket, for the root account
}

// mariadbBinary finds a MariaDB program where Debian puts it; a missing
// one skips the test, or fails it when the services are required (CI).
func mariadbBinary(t *testing.T, name string) string {
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
	if testenv.Required() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// startPrivateMariaDB initialises a data dir and starts the server.
func startPrivateMariaDB(t *testing.T) *privateMariaDB {
	t.Helper()
	m := &privateMariaDB{t: t, bin: mariadbBinary(t, "mariadbd")}
	install := mariadbBinary(t, "mariadb-install-db")
	client := mariadbBinary(t, "mariadb")
	// Not under t.TempDir: its 0700 parent would keep the mysql user out.
	base, err := os.MkdirTemp("", "etld-private-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	m.data, m.run = filepath.Join(base, "data"), filepath.Join(base, "run")
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
	for _, d := range []string{base, m.data, m.run} {
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
	args := []string{"--no-defaults", "--datadir=" + m.data, "--skip-test-db"}
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
	t.Cleanup(m.stop)
	m.start()

	admin := "root"
	if uid < 0 {
		u, _ := user.Current()
		admin = u.Username
	}
	const password = "private-etld-pw"
	setup := "CREATE DATABASE etld; CREATE USER 'etld'@'%' IDENTIFIED BY '" + password + "'; GRANT ALL ON etld.* TO 'etld'@'%';"
	if out, err := exec.Command(client, "--no-defaults", "--socket="+m.socketRoot, "-u", admin, "-e", setup).CombinedOutput(); err != nil {
		t.Fatalf("creating the etld account: %v\n%s", err, out)
	}
	m.DSN = fmt.Sprintf("etld:%s@tcp(127.0.0.1:%d)/etld", password, m.port)
	m.waitReady()
	return m
}

// start runs the server on its data dir and port and waits until the
// socket answers.
func (m *privateMariaDB) start() {
	m.t.Helper()
	args := []string{"--no-defaults", "--datadir=" + m.data, "--socket=" + m.socketRoot,
		"--pid-file=" + filepath.Join(m.run, "mysqld.pid"), "--port=" + strconv.Itoa(m.port),
		"--bind-address=127.0.0.1", "--log-error=" + filepath.Join(m.run, "error.log"), "--skip-name-resolve"}
	if os.Getuid() == 0 {
		args = append(args, "--user=mysql")
	}
	m.cmd = exec.Command(m.bin, args...)
	if err := m.cmd.Start(); err != nil {
		m.t.Fatalf("mariadbd: %v", err)
	}
	m.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(m.cmd, m.exited)
	testenv.Eventually(m.t, 60*time.Second, "the private MariaDB's socket", func() error {
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
func (m *privateMariaDB) waitReady() {
	m.t.Helper()
	testenv.Eventually(m.t, 60*time.Second, "the private MariaDB over TCP", func() error {
		db, err := sql.Open("mysql", m.DSN)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.Ping()
	})
}

// stop stops the server with SIGTERM to its pid, as systemd would, and
// waits for it to exit; a server that has not exited within a minute is
// killed.
func (m *privateMariaDB) stop() {
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

// restart stops the server, keeps it down for down, and starts it again
// on the same port and data; it returns when etld's account can query.
func (m *privateMariaDB) restart(down time.Duration) {
	m.t.Helper()
	m.stop()
	time.Sleep(down) // the outage itself, not a synchronisation
	m.start()
	m.waitReady()
}

// open is a client of the private server.
func (m *privateMariaDB) open() *sql.DB {
	m.t.Helper()
	db, err := sql.Open("mysql", m.DSN)
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { db.Close() })
	return db
}
