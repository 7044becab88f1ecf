# shellcheck shell=bash
# scripts/test-services.sh — source me (scripts/test.sh does). Makes Postgres, MariaDB
# and Redis reachable for the tests and exports where they are:
#
#   EDGEMCP_TEST_POSTGRES_URL  default postgres://postgres@127.0.0.1:5432/test?sslmode=disable
#   EDGEMCP_TEST_MYSQL_DSN     default root@tcp(127.0.0.1:3306)/test
#   EDGEMCP_TEST_REDIS_URL     default redis://127.0.0.1:6379/0
#
# For each service: a variable already set wins; else the service on its standard port;
# else a throwaway server of our own (temp dir, spare loopback port), stopped at exit.
# Missing server binaries: prints the apt-get line and fails. Never a silent skip.
# EDGEMCP_TEST_FORCE_PRIVATE=1 ignores the standard ports (exercises the fallback).
# Others may add their own exit actions with: edgemcp_at_exit "command".

if ! (return 0 2>/dev/null); then
	echo "test-services.sh: source this file, don't run it" >&2
	exit 2
fi

_svc_root=""  # temp dir holding the throwaway servers
_svc_exit=()  # commands run at exit, last registered first

edgemcp_at_exit() { _svc_exit+=("$1"); }
_svc_cleanup() {
	local i
	for ((i = ${#_svc_exit[@]} - 1; i >= 0; i--)); do eval "${_svc_exit[i]}" || true; done
	_svc_exit=()
}
trap _svc_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

_svc_log() { echo "test-services: $*" >&2; }
_svc_have() { local p; p=$(command -v "$1") && [[ -x $p ]]; }
_svc_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# _svc_wanted PORT: true when the standard port should be used.
_svc_wanted() { [[ ${EDGEMCP_TEST_FORCE_PRIVATE:-} != 1 ]] && _svc_open "$1"; }
_svc_spare_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 30000))
		if ! _svc_open "$p"; then echo "$p" && return; fi
	done
}
# _svc_wait SECONDS CMD...: retry CMD until it succeeds.
_svc_wait() {
	local n=$(($1 * 5)); shift
	until "$@" >/dev/null 2>&1; do
		((n-- > 0)) || return 1
		sleep 0.2
	done
}
_svc_fail() { # _svc_fail NAME LOG: show the server's log and fail
	_svc_log "could not start a throwaway $1; last lines of $2:"
	tail -n 20 "$2" >&2
	return 1
}
# _svc_as USER CMD...: run CMD as USER when we are root (Postgres refuses to run as root).
_svc_as() { local u=$1; shift; if ((EUID == 0)); then runuser -u "$u" -- "$@"; else "$@"; fi; }

_svc_pg_bin() { # newest PostgreSQL server bin dir
	local d
	for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -rV); do
		if [[ -x $d/initdb && -x $d/pg_ctl ]]; then echo "$d" && return; fi
	done
	if _svc_have initdb && _svc_have pg_ctl; then dirname "$(command -v initdb)"; fi
}

_svc_start_postgres() {
	local bin dir port user=postgres
	bin=$(_svc_pg_bin) dir=$_svc_root/postgres port=$(_svc_spare_port)
	id -u "$user" >/dev/null 2>&1 || user=nobody
	mkdir -p "$dir"
	if ((EUID == 0)); then chown "$user" "$dir"; fi
	# Subshells in $dir: the postgres user may not be able to read the caller's directory.
	(cd "$dir" && _svc_as "$user" "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C \
		--no-sync >"$dir/initdb.log" 2>&1) || { _svc_fail postgres "$dir/initdb.log"; return 1; }
	edgemcp_at_exit "$(printf '_svc_as %q %q -D %q -m fast -w stop >/dev/null 2>&1' "$user" "$bin/pg_ctl" "$dir/data")"
	(cd "$dir" && _svc_as "$user" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o \
		"-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
		start >/dev/null) || { _svc_fail postgres "$dir/server.log"; return 1; }
	"$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres test || return 1
	export EDGEMCP_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/test?sslmode=disable"
}

_svc_start_mariadb() {
	local dir=$_svc_root/mariadb port user pid client
	port=$(_svc_spare_port) user=$(id -un) client=$(command -v mariadb || command -v mysql)
	if ((EUID == 0)) && id -u mysql >/dev/null 2>&1; then user=mysql; fi
	mkdir -p "$dir"
	if ((EUID == 0)); then chown "$user" "$dir"; fi
	mariadb-install-db --no-defaults --datadir="$dir/data" --user="$user" --skip-test-db \
		--auth-root-authentication-method=normal >"$dir/install.log" 2>&1 ||
		{ _svc_fail mariadb "$dir/install.log"; return 1; }
	mariadbd --no-defaults --datadir="$dir/data" --user="$user" --port="$port" --bind-address=127.0.0.1 \
		--socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" --log-error="$dir/server.log" \
		--innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=0 </dev/null >/dev/null 2>&1 &
	pid=$!
	edgemcp_at_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
	_svc_wait 60 "$client" --no-defaults --protocol=tcp -h127.0.0.1 -P"$port" -uroot -e 'SELECT 1' ||
		{ _svc_fail mariadb "$dir/server.log"; return 1; }
	"$client" --no-defaults --protocol=tcp -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE IF NOT EXISTS test' || return 1
	export EDGEMCP_TEST_MYSQL_DSN="root@tcp(127.0.0.1:$port)/test"
}

_svc_start_redis() {
	local dir=$_svc_root/redis port
	port=$(_svc_spare_port)
	mkdir -p "$dir"
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" --daemonize yes \
		--pidfile "$dir/redis.pid" --logfile "$dir/server.log" || { _svc_fail redis "$dir/server.log"; return 1; }
	# shellcheck disable=SC2016 # the pid file is read at exit
	edgemcp_at_exit "$(printf 'kill "$(cat %q)" 2>/dev/null' "$dir/redis.pid")"
	_svc_wait 30 _svc_open "$port" || { _svc_fail redis "$dir/server.log"; return 1; }
	export EDGEMCP_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
}

# _svc_need VAR PORT NAME DEFAULT: keep VAR if set; else use the standard PORT (VAR gets
# DEFAULT); else queue NAME for a throwaway server.
_svc_private=()
_svc_need() {
	if [[ -n ${!1:-} ]]; then
		_svc_log "$3 from \$$1"
	elif _svc_wanted "$2"; then
		export "$1=$4"
		_svc_log "$3 on its standard port 127.0.0.1:$2"
	else
		_svc_private+=("$3")
	fi
}
_svc_need EDGEMCP_TEST_POSTGRES_URL 5432 postgres 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
_svc_need EDGEMCP_TEST_MYSQL_DSN 3306 mariadb 'root@tcp(127.0.0.1:3306)/test'
_svc_need EDGEMCP_TEST_REDIS_URL 6379 redis 'redis://127.0.0.1:6379/0'

if ((${#_svc_private[@]})); then
	_svc_missing=()
	for _svc in "${_svc_private[@]}"; do
		case $_svc in
		postgres) [[ -n $(_svc_pg_bin) ]] || _svc_missing+=(postgres) ;;
		mariadb) _svc_have mariadbd && _svc_have mariadb-install-db && { _svc_have mariadb || _svc_have mysql; } ||
			_svc_missing+=(mariadb) ;;
		redis) _svc_have redis-server || _svc_missing+=(redis) ;;
		esac
	done
	if ((${#_svc_missing[@]})); then
		_svc_log "${_svc_missing[*]}: not on the standard port, and no server binaries to start one. Install them with:"
		echo "    apt-get install -y postgresql mariadb-server redis-server" >&2
		return 1
	fi
	_svc_root=$(mktemp -d "${TMPDIR:-/tmp}/edgemcp-services.XXXXXX")
	chmod 711 "$_svc_root" # the postgres/mysql users must reach their subdirectories
	edgemcp_at_exit "rm -rf $(printf %q "$_svc_root")"
	for _svc in "${_svc_private[@]}"; do
		"_svc_start_$_svc" || return 1
		_svc_log "$_svc: throwaway server in $_svc_root/$_svc (stopped at exit)"
	done
fi
export EDGEMCP_TEST_POSTGRES_URL EDGEMCP_TEST_MYSQL_DSN EDGEMCP_TEST_REDIS_URL
