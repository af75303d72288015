#!/usr/bin/env bash
# Three switchboard replicas sharing one PostgreSQL, behind nginx, on this
# machine (docs/team.md):
#
#   deploy/local/team.sh up        # then mount http://127.0.0.1:8080/mcp
#   deploy/local/team.sh status
#   deploy/local/team.sh down
#
# up starts, in the background:
#   - a private PostgreSQL (initdb on first use) on 127.0.0.1:$SWITCHBOARD_TEAM_PG_PORT
#     (default 25432, below the ephemeral ports tests pick), as an unprivileged user (nobody when run as root);
#   - three `switchboard serve --http` replicas on 127.0.0.1:8081-8083 with one
#     configuration, $DIR/config.json, whose settings.store names the database;
#   - nginx on 127.0.0.1:8080 with deploy/nginx/switchboard.conf (copied to
#     $DIR/nginx with the ports), which keeps a session on its replica.
# down stops them all (waiting for each to drain) and deletes nothing but its
# own pid files: the database, its password (pg-password), the store's key
# (store-key), the configuration and the logs stay for the next up.
#
# Options of up:
#   --stateless   serve without sessions (any replica answers any request)
#   --no-store    leave settings.store out: each replica keeps its own state
#                 (SQLite, keychain or files), and no PostgreSQL is started
# Environment:
#   SWITCHBOARD_TEAM_DIR      where everything lives; default
#                             ${XDG_STATE_HOME:-~/.local/state}/switchboard/team
#   SWITCHBOARD_BIN           the switchboard binary; default: built from this
#                             checkout into $DIR/bin (needs go)
#   SWITCHBOARD_TEAM_PG_PORT  PostgreSQL's port; default 25432
#   SWITCHBOARD_TEAM_PORTS    nginx's port and the three replicas'; default
#                             "8080 8081 8082 8083"
#
# Needs nginx (Debian: apt-get install nginx) and, with the store, PostgreSQL's
# server programs (Debian: apt-get install postgresql), and curl.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${SWITCHBOARD_TEAM_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/switchboard/team}
pg_port=${SWITCHBOARD_TEAM_PG_PORT:-25432}
read -r -a ports <<<"${SWITCHBOARD_TEAM_PORTS:-8080 8081 8082 8083}"
[[ ${#ports[@]} == 4 ]] || {
	echo "team.sh: SWITCHBOARD_TEAM_PORTS=${SWITCHBOARD_TEAM_PORTS-} must name four ports: nginx's and the three replicas'" >&2
	exit 2
}
front=127.0.0.1:${ports[0]}
replicas=("${ports[@]:1}")
nginx_conf=$dir/nginx/switchboard.conf # deploy/nginx/switchboard.conf, with these ports

die() {
	echo "team.sh: $*" >&2
	exit 1
}

usage() {
	echo "usage: deploy/local/team.sh up [--stateless] [--no-store] | status | down" >&2
	exit 2
}

# as_pg runs a command as the user PostgreSQL runs as: this one, or nobody
# when this is root (initdb and postgres refuse to run as root).
as_pg() {
	if [[ $(id -u) == 0 ]]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	else
		"$@"
	fi
}

pg_bin() {
	local d
	if command -v initdb >/dev/null; then
		dirname "$(readlink -f "$(command -v initdb)")"
		return
	fi
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		[[ -x $d/postgres ]] && {
			echo "$d"
			return
		}
	done
	die "PostgreSQL's server programs (initdb, postgres) are not installed (Debian: apt-get install postgresql; or use --no-store)"
}

# alive says whether the pid in file $1 is a running process.
alive() {
	[[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

# port_free fails when something already listens on 127.0.0.1:$1.
port_free() {
	if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
		die "127.0.0.1:$1 is in use by another program (team.sh needs ${ports[*]} and $pg_port; is it up already? team.sh status)"
	fi
}

# wait_http waits until $1 answers 200, at most $2 seconds; $3 is the log to show if not.
wait_http() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "team.sh: $1 did not answer within $2 s; the end of $3:" >&2
	tail -n 20 "$3" >&2 || true
	return 1
}

start_postgres() {
	local bin data=$dir/postgres
	bin=$(pg_bin)
	mkdir -p "$dir/run"
	if [[ ! -f $data/PG_VERSION ]]; then
		echo "initdb $data (user switchboard, password in $dir/pg-password)"
		(umask 077 && head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$dir/pg-password")
		mkdir -p "$data"
		chmod 700 "$data"
		if [[ $(id -u) == 0 ]]; then
			chown nobody:nogroup "$data"
			# nobody reads the password file once, from a copy of its own.
			install -o nobody -m 600 "$dir/pg-password" "$dir/run/pwfile"
		else
			install -m 600 "$dir/pg-password" "$dir/run/pwfile"
		fi
		as_pg "$bin/initdb" -D "$data" -U switchboard --pwfile="$dir/run/pwfile" \
			--auth-host=scram-sha-256 --auth-local=scram-sha-256 -E UTF8 --no-instructions >"$dir/initdb.log" 2>&1 ||
			{
				rm -f "$dir/run/pwfile"
				tail -n 20 "$dir/initdb.log" >&2
				die "initdb failed (log: $dir/initdb.log)"
			}
		rm -f "$dir/run/pwfile"
	fi
	port_free "$pg_port"
	echo "postgres on 127.0.0.1:$pg_port ($data)"
	touch "$dir/postgres.log"
	[[ $(id -u) == 0 ]] && chown nobody:nogroup "$dir/postgres.log"
	# Sockets in the data directory, TCP on loopback only.
	as_pg "$bin/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $pg_port -k $data" start >/dev/null ||
		{
			tail -n 20 "$dir/postgres.log" >&2
			die "PostgreSQL did not start (log: $dir/postgres.log)"
		}
	local pw
	pw=$(cat "$dir/pg-password")
	if ! PGPASSWORD=$pw "$bin/psql" -h 127.0.0.1 -p "$pg_port" -U switchboard -d postgres -tAc \
		"SELECT 1 FROM pg_database WHERE datname = 'switchboard'" | grep -q 1; then
		PGPASSWORD=$pw "$bin/createdb" -h 127.0.0.1 -p "$pg_port" -U switchboard switchboard
	fi
}

# write_key writes, once, the key that encrypts credentials in the
# database (32 random bytes, base64): the same key for every up, or what
# is stored becomes unreadable.
write_key() {
	[[ -f $dir/store-key ]] && return
	(umask 077 && head -c 32 /dev/urandom | base64 >"$dir/store-key")
}

write_config() {
	local file=$dir/config.json
	[[ -f $file ]] && return
	echo "writing $file (add your servers to it, or keep them in ~/.config/switchboard/config.json)"
	if [[ $store == 1 ]]; then
		cat >"$file" <<-'EOF'
			{
			  "mcpServers": {},
			  "settings": {
			    "store": { "postgres": "${DATABASE_URL}", "key": "${SWITCHBOARD_STORE_KEY}" }
			  }
			}
		EOF
	else
		cat >"$file" <<-'EOF'
			{
			  "mcpServers": {}
			}
		EOF
	fi
}

switchboard_bin() {
	if [[ -n ${SWITCHBOARD_BIN-} ]]; then
		[[ -x $SWITCHBOARD_BIN ]] || die "SWITCHBOARD_BIN=$SWITCHBOARD_BIN is not an executable file"
		echo "$SWITCHBOARD_BIN"
		return
	fi
	command -v go >/dev/null || die "go is not installed: install it, or set SWITCHBOARD_BIN to a switchboard binary"
	echo "building switchboard from $repo into $dir/bin" >&2
	(cd "$repo" && CGO_ENABLED=0 go build -trimpath -o "$dir/bin/switchboard" ./cmd/switchboard) || die "go build failed"
	echo "$dir/bin/switchboard"
}

up() {
	local stateless=() store=1 arg
	for arg in "$@"; do
		case $arg in
		--stateless) stateless=(--stateless) ;;
		--no-store) store=0 ;;
		*) usage ;;
		esac
	done
	command -v curl >/dev/null || die "curl is not installed"
	local nginx
	nginx=$(command -v nginx || echo /usr/sbin/nginx)
	[[ -x $nginx ]] || die "nginx is not installed (Debian: apt-get install nginx)"
	mkdir -p "$dir/run" "$dir/nginx"
	chmod 700 "$dir"
	if [[ $store == 1 && $(id -u) == 0 ]]; then
		# PostgreSQL runs as nobody, who must reach its data directory.
		chmod 711 "$dir"
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- test -x "$dir" ||
			die "as root, PostgreSQL runs as nobody, who cannot reach $dir: set SWITCHBOARD_TEAM_DIR to a directory under /tmp or /var/tmp, or run as a normal user"
	fi
	for p in "$dir"/run/*.pid; do
		alive "$p" && die "already up ($p): run team.sh down first"
	done
	for port in "${ports[@]}"; do port_free "$port"; done

	local bin
	bin=$(switchboard_bin)
	if [[ $store == 1 ]]; then
		start_postgres
		write_key
	fi
	write_config
	if [[ $store == 1 ]] && ! grep -q '"store"' "$dir/config.json"; then
		echo "team.sh: note: $dir/config.json has no settings.store: the replicas share nothing" >&2
	fi
	if [[ $store == 0 ]] && grep -q '"store"' "$dir/config.json"; then
		die "$dir/config.json sets settings.store, and --no-store starts no database: edit the file, or leave out --no-store"
	fi

	local port
	for port in "${replicas[@]}"; do
		echo "switchboard serve --http 127.0.0.1:$port ${stateless[*]}"
		(
			cd "$dir"
			if [[ $store == 1 ]]; then
				# What config.json refers to: never in the file itself.
				DATABASE_URL="postgres://switchboard:$(cat "$dir/pg-password")@127.0.0.1:$pg_port/switchboard?sslmode=disable"
				SWITCHBOARD_STORE_KEY=$(cat "$dir/store-key")
				export DATABASE_URL SWITCHBOARD_STORE_KEY
			fi
			exec setsid "$bin" serve --http "127.0.0.1:$port" --config "$dir/config.json" "${stateless[@]}" \
				</dev/null >>"$dir/replica-$port.log" 2>&1
		) &
		echo $! >"$dir/run/replica-$port.pid"
	done
	for port in "${replicas[@]}"; do
		wait_http "http://127.0.0.1:$port/healthz" 60 "$dir/replica-$port.log" || {
			down
			exit 1
		}
	done

	echo "nginx on $front ($dir/nginx)"
	sed -e "s/127\.0\.0\.1:8080;/$front;/" -e "s/127\.0\.0\.1:8081;/127.0.0.1:${replicas[0]};/" \
		-e "s/127\.0\.0\.1:8082;/127.0.0.1:${replicas[1]};/" -e "s/127\.0\.0\.1:8083;/127.0.0.1:${replicas[2]};/" \
		"$repo/deploy/nginx/switchboard.conf" >"$nginx_conf"
	"$nginx" -t -q -p "$dir/nginx/" -c "$nginx_conf" -e "$dir/nginx/error.log" ||
		{
			down
			die "nginx refused $nginx_conf (log: $dir/nginx/error.log)"
		}
	(exec setsid "$nginx" -p "$dir/nginx/" -c "$nginx_conf" -e "$dir/nginx/error.log" -g 'daemon off;' </dev/null >>"$dir/nginx/error.log" 2>&1) &
	echo $! >"$dir/run/nginx.pid"
	wait_http "http://$front/healthz" 30 "$dir/nginx/error.log" || {
		down
		exit 1
	}
	echo
	echo "up: mount http://$front/mcp (three replicas$([[ $store == 1 ]] && echo ", one PostgreSQL")); team.sh down stops it all"
	echo "logs: $dir/replica-*.log, $dir/nginx/*.log$([[ $store == 1 ]] && echo ", $dir/postgres.log")"
}

# stop_pid sends signal $2 to the process in pid file $1 and waits for it
# to exit (a replica drains its calls first, nginx finishes its requests),
# at most 40 s, then SIGKILL.
stop_pid() {
	local f=$1 pid i
	alive "$f" || {
		rm -f "$f"
		return 0
	}
	pid=$(cat "$f")
	kill "-$2" "$pid" 2>/dev/null || true
	for ((i = 0; i < 400; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "team.sh: $(basename "$f" .pid) (pid $pid) did not stop within 40 s of SIG$2: killed" >&2
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

down() {
	[[ -d $dir ]] || {
		echo "nothing to stop: $dir does not exist"
		return 0
	}
	# The front first (a graceful quit: it finishes the requests it has),
	# then the replicas (each drains its calls), then the database.
	if alive "$dir/run/nginx.pid"; then
		echo "stopping nginx"
	fi
	stop_pid "$dir/run/nginx.pid" QUIT
	local f
	for f in "$dir"/run/replica-*.pid; do
		[[ -e $f ]] || continue
		alive "$f" && echo "stopping $(basename "$f" .pid)"
		stop_pid "$f" TERM
	done
	if [[ -f $dir/postgres/postmaster.pid ]]; then
		echo "stopping postgres"
		local pgpid i
		pgpid=$(head -n 1 "$dir/postgres/postmaster.pid")
		as_pg "$(pg_bin)/pg_ctl" -D "$dir/postgres" -w -t 60 -m fast stop >/dev/null
		# pg_ctl returns once the postmaster has removed its pid file, which
		# it does just before it exits: wait for the exit too, so that what
		# down stopped is gone when it returns.
		for ((i = 0; i < 400; i++)); do
			ps -p "$pgpid" >/dev/null 2>&1 || break
			sleep 0.1
		done
		if ps -p "$pgpid" >/dev/null 2>&1; then
			echo "team.sh: postgres (pid $pgpid) still runs 40 s after pg_ctl stop" >&2
		fi
	fi
	echo "down; the database, config.json and logs stay in $dir"
}

status() {
	local f name
	for f in "$dir"/run/*.pid; do
		[[ -e $f ]] || continue
		name=$(basename "$f" .pid)
		if alive "$f"; then echo "$name: running (pid $(cat "$f"))"; else echo "$name: not running"; fi
	done
	if [[ -f $dir/postgres/postmaster.pid ]]; then
		echo "postgres: running (pid $(head -n 1 "$dir/postgres/postmaster.pid"), port $pg_port)"
	fi
	if curl -fsS -o /dev/null --max-time 2 "http://$front/healthz" 2>/dev/null; then
		echo "front: http://$front/mcp answers"
	else
		echo "front: http://$front/mcp does not answer"
	fi
}

case ${1-} in
up)
	shift
	up "$@"
	;;
down)
	[[ $# == 1 ]] || usage
	down
	;;
status)
	[[ $# == 1 ]] || usage
	status
	;;
*) usage ;;
esac
