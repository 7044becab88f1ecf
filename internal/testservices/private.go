package testservices

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
)

// Private is a throwaway server of one test's own, on a spare loopback
// port, for tests that stop and restart it (fault tests): the shared
// servers other tests and engineers use are never stopped. Stop and Start
// keep the data directory and the port, as a restart does. It is stopped
// and its files removed when the test ends.
//
// Its binaries missing is the one reason for a skip (the message says what
// to install); a server that is installed but does not start fails.
type Private struct {
	// URL is how a connector reaches it: a postgres:// URL, a MySQL DSN, a
	// redis:// URL.
	URL string

	t     testing.TB
	cmd   func() *exec.Cmd // the server's command line
	ready func(context.Context) error
	mu    sync.Mutex
	run   *exec.Cmd
	exit  chan struct{}
	sig   os.Signal // the server's fast-shutdown signal
	log   string
}

// StartPostgres starts a private PostgreSQL (the newest under
// /usr/lib/postgresql/*/bin, or initdb on PATH).
func StartPostgres(t testing.TB) *Private {
	t.Helper()
	bin := pgBin()
	if bin == "" {
		t.Skip("no PostgreSQL server binaries (initdb, postgres) for a private server: apt-get install -y postgresql")
	}
	dir := privateDir(t, "postgres")
	port := sparePort(t)
	uid, gid := serverUser(t, "postgres", dir)
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres",
		"-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	asUser(initdb, uid, gid)
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	p := &Private{
		URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		t:   t, sig: syscall.SIGINT, log: filepath.Join(dir, "server.log"),
	}
	p.cmd = func() *exec.Cmd {
		c := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"), "-p", strconv.Itoa(port),
			"-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
			"-c", "full_page_writes=off")
		c.Dir = dir
		asUser(c, uid, gid)
		return c
	}
	p.ready = func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, p.URL)
		if err != nil {
			return err
		}
		return conn.Close(ctx)
	}
	t.Cleanup(p.Stop) // after privateDir's cleanup: runs before it
	p.Start()
	return p
}

// StartMariaDB starts a private MariaDB (mariadb-install-db, mariadbd).
func StartMariaDB(t testing.TB) *Private {
	t.Helper()
	install, err1 := exec.LookPath("mariadb-install-db")
	server, err2 := exec.LookPath("mariadbd")
	if err1 != nil || err2 != nil {
		t.Skip("no MariaDB server binaries (mariadb-install-db, mariadbd) for a private server: apt-get install -y mariadb-server")
	}
	dir := privateDir(t, "mariadb")
	port := sparePort(t)
	name := "mysql"
	if _, err := user.Lookup(name); err != nil || os.Geteuid() != 0 {
		u, _ := user.Current()
		name = u.Username
	}
	serverUser(t, name, dir)
	data := filepath.Join(dir, "data")
	in := exec.Command(install, "--no-defaults", "--datadir="+data, "--user="+name, "--skip-test-db",
		"--auth-root-authentication-method=normal")
	if out, err := in.CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	p := &Private{
		URL: fmt.Sprintf("root@tcp(127.0.0.1:%d)/", port),
		t:   t, sig: syscall.SIGTERM, log: filepath.Join(dir, "server.log"),
	}
	p.cmd = func() *exec.Cmd {
		return exec.Command(server, "--no-defaults", "--datadir="+data, "--user="+name, "--port="+strconv.Itoa(port),
			"--bind-address=127.0.0.1", "--socket="+filepath.Join(dir, "mysqld.sock"),
			"--pid-file="+filepath.Join(dir, "mysqld.pid"), "--log-error="+p.log,
			"--innodb-buffer-pool-size=32M", "--innodb-flush-log-at-trx-commit=0")
	}
	p.ready = func(ctx context.Context) error {
		db, err := sql.Open("mysql", p.URL)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.PingContext(ctx)
	}
	t.Cleanup(p.Stop) // after privateDir's cleanup: runs before it
	p.Start()
	return p
}

// StartRedis starts a private redis-server (no persistence).
func StartRedis(t testing.TB) *Private {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server for a private server: apt-get install -y redis-server")
	}
	dir := privateDir(t, "redis")
	port := sparePort(t)
	p := &Private{
		URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port),
		t:   t, sig: syscall.SIGTERM, log: filepath.Join(dir, "server.log"),
	}
	p.cmd = func() *exec.Cmd {
		return exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--dir", dir, "--logfile", p.log)
	}
	p.ready = func(ctx context.Context) error {
		opt, err := goredis.ParseURL(p.URL)
		if err != nil {
			return err
		}
		c := goredis.NewClient(opt)
		defer c.Close()
		return c.Ping(ctx).Err()
	}
	t.Cleanup(p.Stop) // after privateDir's cleanup: runs before it
	p.Start()
	return p
}

// Start starts the server (again) and returns once it answers.
func (p *Private) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run != nil {
		p.t.Fatal("testservices: Start of a private server that runs")
	}
	cmd := p.cmd()
	f, err := os.OpenFile(p.log+".out", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", cmd.Path, err)
	}
	exit := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exit) }()
	p.run, p.exit = cmd, exit

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		err := p.ready(actx)
		acancel()
		if err == nil {
			return
		}
		select {
		case <-exit:
			p.t.Fatalf("private server %s exited at start:\n%s", cmd.Path, p.logs())
		case <-ctx.Done():
			p.t.Fatalf("private server %s did not answer: %v\n%s", cmd.Path, err, p.logs())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop shuts the server down the way an operator's restart does (its
// fast-shutdown signal: sessions are ended, connections closed) and waits
// for it to exit.
func (p *Private) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == nil {
		return
	}
	_ = p.run.Process.Signal(p.sig)
	select {
	case <-p.exit:
	case <-time.After(60 * time.Second):
		_ = p.run.Process.Kill()
		<-p.exit
	}
	p.run = nil
}

// logs is the end of the server's log and of its output.
func (p *Private) logs() string {
	var out string
	for _, f := range []string{p.log, p.log + ".out"} {
		b, _ := os.ReadFile(f)
		if len(b) > 3000 {
			b = b[len(b)-3000:]
		}
		out += f + ":\n" + string(b) + "\n"
	}
	return out
}

// pgBin is the newest PostgreSQL server bin directory, or "".
func pgBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { // newest major first
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && isExec(filepath.Join(filepath.Dir(p), "postgres")) {
		return filepath.Dir(p)
	}
	return ""
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&0o111 != 0
}

// privateDir is a fresh directory the server's user can enter (the test's
// own TempDir is private to the user running the tests), removed at the end.
func privateDir(t testing.TB, what string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "edgemcp-"+what+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // registered first: runs after Stop
	return dir
}

// serverUser is who runs a server that refuses root: name when the tests
// run as root (dir is given to it), else the current user.
func serverUser(t testing.TB, name, dir string) (uid, gid uint32) {
	t.Helper()
	if os.Geteuid() != 0 {
		return uint32(os.Geteuid()), uint32(os.Getegid())
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("the tests run as root and there is no %s user to run the server: %v", name, err)
	}
	ui, _ := strconv.Atoi(u.Uid)
	gi, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, ui, gi); err != nil {
		t.Fatal(err)
	}
	return uint32(ui), uint32(gi)
}

// asUser runs cmd as uid:gid when the tests run as root.
func asUser(cmd *exec.Cmd, uid, gid uint32) {
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	}
}

// sparePort is a loopback port nothing listens on.
func sparePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
