#!/usr/bin/env bash
# A private PostgreSQL cluster for tests and CI: its own temporary data directory, a unix socket
# in that directory and a loopback port, nothing shared with a system server.
#
#   .ci/postgres.sh start DIR   initdb DIR/data, start the server, wait until it answers, create
#                               an admin role with a password, print its URL
#                               (postgresql://user:pass@127.0.0.1:port/postgres)
#   .ci/postgres.sh stop DIR    stop the server started in DIR (pg_ctl stop -m fast)
#   .ci/postgres.sh restart DIR stop it at once, as a crash would (pg_ctl -m immediate), and
#                               start it again with the same options; wait until it answers
#
# initdb and postgres refuse to run as root. Run as root (CI), the cluster belongs to an
# unprivileged account: Debian's `postgres` (the postgresql package creates it), else one this
# script creates (`sqlbench_pg`, no login shell, no home); DIR is handed to that account and the
# commands run through `runuser -u`. Run as anyone else, the cluster is that user's.
#
# Authentication: over the socket, only the cluster's owner, by peer (this script creates the
# admin role that way); over TCP, passwords (scram-sha-256) for every role. Small on purpose
# (CI shares 2 cores): no fsync (a throw-away cluster), a few connections. Binaries: the first
# initdb on PATH, else the newest /usr/lib/postgresql/*/bin.
set -euo pipefail

ADMIN_USER=sqlbench_admin
ADMIN_PASSWORD=sqlbench_admin_pw
SERVICE_ACCOUNT=sqlbench_pg

bin_dir() {
    local found
    # Resolved: a symlinked initdb on PATH stands beside none of the other binaries.
    if found="$(command -v initdb 2>/dev/null)" && found="$(readlink -f "$found")" \
        && [[ -x "$(dirname "$found")/psql" ]]; then
        dirname "$found"
        return 0
    fi
    found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
    [[ -n "$found" && -x "$found/initdb" ]] || return 1
    echo "$found"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The account the cluster runs as, and how to run a command as that account.
owner() {
    if [[ "$(id -u)" -ne 0 ]]; then
        id -un
    elif id -u postgres >/dev/null 2>&1; then
        echo postgres
    else
        if ! id -u "$SERVICE_ACCOUNT" >/dev/null 2>&1; then
            useradd --system --no-create-home --shell /usr/sbin/nologin "$SERVICE_ACCOUNT"
        fi
        echo "$SERVICE_ACCOUNT"
    fi
}

as_owner() {
    local user="$1"
    shift
    if [[ "$(id -un)" == "$user" ]]; then
        "$@"
    else
        runuser -u "$user" -- "$@"
    fi
}

start() {
    local dir="$1" bin user port tries=0
    bin="$(bin_dir)" || { echo "postgres.sh: no initdb (install Debian's postgresql)" >&2; return 1; }
    user="$(owner)"
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    if [[ "$(id -u)" -eq 0 ]]; then
        chown "$user" "$dir"
    fi
    chmod 700 "$dir"
    cd "$dir"   # the owner may not enter the caller's folder (a checkout under /root)
    as_owner "$user" "$bin/initdb" --pgdata="$dir/data" --username="$user" \
        --auth-local=peer --auth-host=scram-sha-256 --encoding=UTF8 --locale=C \
        >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
    port="$(free_port)"
    as_owner "$user" "$bin/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --silent \
        -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir \
            -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
            -c max_connections=100 -c max_wal_size=2GB" \
        start >/dev/null
    until as_owner "$user" "$bin/psql" --no-psqlrc -h "$dir" -p "$port" -U "$user" \
        -d postgres -tAc 'SELECT 1' >/dev/null 2>&1; do
        tries=$((tries + 1))
        if [[ "$tries" -gt 300 ]]; then
            echo "postgres.sh: server did not answer within 30 s" >&2
            cat "$dir/server.log" >&2 || true
            return 1
        fi
        sleep 0.1
    done
    as_owner "$user" "$bin/psql" --no-psqlrc -q -h "$dir" -p "$port" -U "$user" -d postgres \
        -v ON_ERROR_STOP=1 -c \
        "CREATE ROLE $ADMIN_USER LOGIN SUPERUSER PASSWORD '$ADMIN_PASSWORD'" >/dev/null
    echo "$port" >"$dir/port"
    echo "$user" >"$dir/owner"
    echo "postgresql://$ADMIN_USER:$ADMIN_PASSWORD@127.0.0.1:$port/postgres"
}

stop() {
    local dir="$1" bin user
    [[ -f "$dir/data/postmaster.pid" ]] || return 0
    bin="$(bin_dir)" || return 1
    user="$(cat "$dir/owner" 2>/dev/null || owner)"
    cd "$dir"
    as_owner "$user" "$bin/pg_ctl" --pgdata="$dir/data" --silent -m fast -w stop || true
}

restart() {
    local dir="$1" bin user
    bin="$(bin_dir)" || return 1
    user="$(cat "$dir/owner")"
    cd "$dir"
    # pg_ctl restart starts the server with the options of its last start (postmaster.opts).
    as_owner "$user" "$bin/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --silent \
        -m immediate -w restart >/dev/null
}

case "${1:-}" in
start) start "${2:?directory}" ;;
stop) stop "${2:?directory}" ;;
restart) restart "${2:?directory}" ;;
*)
    echo "usage: $0 start|stop|restart DIR" >&2
    exit 2
    ;;
esac
