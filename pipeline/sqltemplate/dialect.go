package sqltemplate

// Dialect selects the lexical rules of an SQL flavour and how bound
// parameters and quoted identifiers are written.
type Dialect int

const (
	Postgres Dialect = iota + 1 // $1, $2 ... ; "ident"
	SQLite                      // ? ; `ident`
	MySQL                       // ? ; `ident`
)

func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case SQLite:
		return "sqlite"
	case MySQL:
		return "mysql"
	}
	return "unknown"
}
