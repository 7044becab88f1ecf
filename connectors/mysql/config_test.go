package mysql

import (
	mysqldrv "github.com/go-sql-driver/mysql"

	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

func TestParseDSN(t *testing.T) {
	for _, tc := range []struct {
		dsn                  string
		user, pass, addr, db string
		param, paramVal      string
	}{
		{"mysql://app:s3cr%40t%2F:x@db.example:3307/shop?wait_timeout=600", "app", "s3cr@t/:x", "db.example:3307", "shop", "wait_timeout", "600"},
		{"mysql://root@127.0.0.1/test", "root", "", "127.0.0.1:3306", "test", "", ""},
		{"mariadb://u:p@[::1]:3306/d", "u", "p", "[::1]:3306", "d", "", ""},
		{"u:p@tcp(h:1234)/d?sql_mode=ANSI", "u", "p", "h:1234", "d", "sql_mode", "ANSI"},
	} {
		t.Run(tc.dsn, func(t *testing.T) {
			cfg, err := parseDSN(tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.User != tc.user || cfg.Passwd != tc.pass || cfg.Addr != tc.addr || cfg.DBName != tc.db {
				t.Errorf("got user %q pass %q addr %q db %q", cfg.User, cfg.Passwd, cfg.Addr, cfg.DBName)
			}
			if tc.param != "" && cfg.Params[tc.param] != tc.paramVal {
				t.Errorf("param %s = %q, want %q", tc.param, cfg.Params[tc.param], tc.paramVal)
			}
			if cfg.InterpolateParams || cfg.MultiStatements || cfg.ParseTime || cfg.Timeout == 0 {
				t.Errorf("pinned options not pinned: %+v", cfg)
			}
		})
	}
}

// TestDSNRefusals: options that would splice values, allow several
// statements or change the time zone are configuration errors, and the
// message never quotes the DSN.
func TestDSNRefusals(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"mysql://u:hunter2@h/d?interpolateParams=true", "interpolateParams"},
		{"u:hunter2@tcp(h)/d?multiStatements=true", "multiStatements"},
		{"u:hunter2@tcp(h)/d?allowAllFiles=true", "allowAllFiles"},
		{"mysql://u:hunter2@h/d?time_zone=%27%2B02%3A00%27", "time_zone"},
		{"u:hunter2@tcp(h/d", "invalid mysql connection string"},
		{"mysql://u:hunter2@h:port/d", "invalid mysql connection URL"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := Open(t.Context(), Config{DSN: tc.dsn})
			pe := conntest.PublicErr(t, err)
			if !strings.Contains(pe.Public, tc.want) || strings.Contains(pe.Public, "hunter2") {
				t.Errorf("error %q, want it to name %q and not the password", pe.Public, tc.want)
			}
		})
	}
}

// TestURLForm connects with the mysql:// form built from the test DSN.
func TestURLForm(t *testing.T) {
	cfg, err := parseDSN(testservices.MySQLDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u := "mysql://" + cfg.User
	if cfg.Passwd != "" {
		u += ":" + cfg.Passwd
	}
	u += "@" + cfg.Addr + "/" + cfg.DBName
	c := open(t, Config{DSN: u})
	conntest.SameValue(t, "via URL", conntest.Scalar(t, c, "SELECT DATABASE()"), cfg.DBName)
}

// TestUnavailable: a wrong password or a closed port is "database
// unavailable", with neither the password, user nor host in the message.
func TestUnavailable(t *testing.T) {
	cfg, err := parseDSN(testservices.MySQLDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, dsn string }{
		{"wrong password", "mysql://edgemcp_nouser:hunter2@" + cfg.Addr + "/test"},
		{"closed port", "mysql://edgemcp_nouser:hunter2@127.0.0.1:1/test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := open(t, Config{DSN: tc.dsn})
			_, err := c.Query(ctxTimeout(t, 15e9), "SELECT ?", []any{int64(1)})
			pe := conntest.PublicErr(t, err)
			if pe.Public != msgUnavailable {
				t.Errorf("error %q, want %q", pe.Public, msgUnavailable)
			}
		})
	}
}

// TestSQLModeRefused: a session whose sql_mode reads strings differently
// from the template compiler is refused with a message saying why.
func TestSQLModeRefused(t *testing.T) {
	for _, mode := range []string{"NO_BACKSLASH_ESCAPES", "ANSI"} {
		t.Run(mode, func(t *testing.T) {
			dsn := testservices.MySQLDSN(t)
			sep := "?"
			if strings.Contains(dsn, "?") {
				sep = "&"
			}
			c := open(t, Config{DSN: dsn + sep + "sql_mode=%27" + mode + "%27"})
			_, err := c.Query(ctxTimeout(t, 10e9), "SELECT 1", nil)
			if pe := conntest.PublicErr(t, err); !strings.Contains(pe.Public, "sql_mode") {
				t.Errorf("error %q, want the sql_mode refusal", pe.Public)
			}
		})
	}
}

// TestServerErrors: the statement's own errors reach the caller with the
// server's message and numbers, privilege errors without user and host.
func TestServerErrors(t *testing.T) {
	c := open(t, Config{})
	_, err := c.Query(ctxTimeout(t, 10e9), "SELECT * FROM connectors_does_not_exist WHERE id = ?", []any{int64(1)})
	pe := conntest.PublicErr(t, err)
	if !strings.Contains(pe.Public, "connectors_does_not_exist' doesn't exist (error 1146, SQLSTATE 42S02)") {
		t.Errorf("error %q", pe.Public)
	}
	if pe.Code != "error 1146, SQLSTATE 42S02" {
		t.Errorf("code %q", pe.Code)
	}
	// A unique violation: error_detail safe shows its number, not the
	// message (which quotes the duplicate value).
	tbl := testservices.MySQLTable(t, "dupkey")
	testservices.MySQLExec(t, "CREATE TABLE "+tbl+" (email VARCHAR(50) PRIMARY KEY)")
	testservices.MySQLExec(t, "INSERT INTO "+tbl+" VALUES ('private@example.com')")
	_, err = c.Query(ctxTimeout(t, 10e9), "INSERT INTO "+tbl+" VALUES (?)", []any{"private@example.com"})
	pe = conntest.PublicErr(t, err)
	if pe.Code != "error 1062, SQLSTATE 23000" || !strings.Contains(pe.Public, "Duplicate entry 'private@example.com'") {
		t.Errorf("unique violation: public %q code %q", pe.Public, pe.Code)
	}
	got, _ := serverErrorText(&mysqlError{Number: 1142, SQLState: [5]byte{'4', '2', '0', '0', '0'},
		Message: "SELECT command denied to user 'app'@'10.1.2.3' for table 'secret'"})
	if strings.Contains(got, "app") || strings.Contains(got, "10.1.2.3") || !strings.Contains(got, "<user>") {
		t.Errorf("privilege error not scrubbed: %q", got)
	}
}

type mysqlError = mysqldrv.MySQLError
