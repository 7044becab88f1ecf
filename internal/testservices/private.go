package testservices

import (
	"context"
	"database/sql"
	"errors"
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
	dir   string // removed by Close (RunPostgres)
}

// StartPostgres starts a private PostgreSQL (the newest under
// /usr/lib/postgresql/*/bin, or initdb on PATH).
func StartPostgres(t testing.TB) *Private {
	t.Helper()
	bin := pgBin()
	if bin == "" {
		t.Skip(ErrNoPostgres.Error())
	}
	dir := privateDir(t, "postgres")
	p, err := newPostgres(bin, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.t = t
	t.Cleanup(p.Stop) // after privateDir's cleanup: runs before it
	p.Start()
	return p
}

// ErrNoPostgres is RunPostgres's error when the server binaries are missing.
var ErrNoPostgres = errors.New("no PostgreSQL server binaries (initdb, postgres) for a private server: apt-get install -y postgresql")

// RunPostgres is StartPostgres for a program (the bench): a private
// PostgreSQL in a new temporary directory, its command line prefixed by
// wrap (`taskset -c 0`, say: every backend the server forks inherits it)
// and args added to the server's (`-c max_connections=200`). It receives
// SIGINT (fast shutdown) if the thread that started it dies. Close stops
// it and removes the directory.
func RunPostgres(wrap []string, args ...string) (*Private, error) {
	bin := pgBin()
	if bin == "" {
		return nil, ErrNoPostgres
	}
	var wrapPath string
	if len(wrap) > 0 {
		var err error
		if wrapPath, err = exec.LookPath(wrap[0]); err != nil {
			return nil, err
		}
	}
	dir, err := newPrivateDir("postgres")
	if err != nil {
		return nil, err
	}
	p, err := newPostgres(bin, dir, func(c *exec.Cmd) *exec.Cmd {
		c.Args = append(c.Args, args...)
		if wrapPath != "" {
			c.Args = append(append(append([]string{}, wrap...), c.Path), c.Args[1:]...)
			c.Path = wrapPath
		}
		if c.SysProcAttr == nil {
			c.SysProcAttr = &syscall.SysProcAttr{}
		}
		c.SysProcAttr.Pdeathsig = syscall.SIGINT
		return c
	})
	if err == nil {
		p.dir = dir
		if err = p.start(); err != nil {
			p.Close()
		}
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}

// newPostgres initializes a cluster in dir (run as the postgres user when
// root) and describes its server on a spare port; edit, if not nil,
// adjusts the server's command line.
func newPostgres(bin, dir string, edit func(*exec.Cmd) *exec.Cmd) (*Private, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	uid, gid, err := serverUser("postgres", dir)
	if err != nil {
		return nil, err
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres",
		"-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	asUser(initdb, uid, gid)
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	p := &Private{
		URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		sig: syscall.SIGINT, log: filepath.Join(dir, "server.log"),
	}
	p.cmd = func() *exec.Cmd {
		c := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"), "-p", strconv.Itoa(port),
			"-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
			"-c", "full_page_writes=off")
		c.Dir = dir
		asUser(c, uid, gid)
		if edit != nil {
			c = edit(c)
		}
		return c
	}
	p.ready = func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, p.URL)
		if err != nil {
			return err
		}
		return conn.Close(ctx)
	}
	return p, nil
}

// Pid is the process id of the running server (its postmaster, for
// PostgreSQL: the backends are its children), 0 if it is stopped.
func (p *Private) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == nil {
		return 0
	}
	return p.run.Process.Pid
}

// Close stops a server from RunPostgres and removes its directory.
func (p *Private) Close() {
	p.Stop()
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
	}
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
	if _, _, err := serverUser(name, dir); err != nil {
		t.Fatal(err)
	}
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
	if err := p.start(); err != nil {
		p.t.Fatal(err)
	}
}

func (p *Private) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run != nil {
		return errors.New("testservices: Start of a private server that runs")
	}
	cmd := p.cmd()
	f, err := os.OpenFile(p.log+".out", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %v", cmd.Path, err)
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
			return nil
		}
		select {
		case <-exit:
			p.run = nil
			return fmt.Errorf("private server %s exited at start:\n%s", cmd.Path, p.logs())
		case <-ctx.Done():
			return fmt.Errorf("private server %s did not answer: %v\n%s", cmd.Path, err, p.logs())
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
	dir, err := newPrivateDir(what)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // registered first: runs after Stop
	return dir
}

func newPrivateDir(what string) (string, error) {
	dir, err := os.MkdirTemp("", "edgemcp-"+what+"-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// serverUser is who runs a server that refuses root: name when this
// process is root (dir is given to it), else the current user.
func serverUser(name, dir string) (uid, gid uint32, err error) {
	if os.Geteuid() != 0 {
		return uint32(os.Geteuid()), uint32(os.Getegid()), nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("running as root and there is no %s user to run the server: %v", name, err)
	}
	ui, _ := strconv.Atoi(u.Uid)
	gi, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, ui, gi); err != nil {
		return 0, 0, err
	}
	return uint32(ui), uint32(gi), nil
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
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
