#!/usr/bin/env bash
# A private MariaDB server for tests and CI: its own temporary datadir, a unix socket and a
# loopback port, nothing shared with a system server.
#
#   .ci/mariadb.sh start DIR   initialise DIR (mariadb-install-db), start the server, wait until
#                              it answers, print its URL (mysql://user:pass@127.0.0.1:port)
#   .ci/mariadb.sh stop DIR    stop the server started in DIR (its pid file), then return
#
# Small on purpose (CI shares 2 cores): 64 MiB buffer pool, no binary log, no performance
# schema. lower_case_table_names=1 as on the MySQL server LogicCat's dumps come from (its gold
# SQL spells table names in mixed case). LOCAL INFILE is off on the server as well as in the
# client, and secure_file_priv points at an empty folder inside DIR.
set -euo pipefail

ADMIN_USER=sqlbench_admin
ADMIN_PASSWORD=sqlbench_admin_pw

server_binary() {
    local candidate
    for candidate in mariadbd /usr/sbin/mariadbd mysqld /usr/sbin/mysqld; do
        if command -v "$candidate" >/dev/null 2>&1; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    local dir="$1" binary port user
    binary="$(server_binary)" || { echo "mariadb.sh: no mariadbd/mysqld binary" >&2; return 1; }
    mkdir -p "$dir/data" "$dir/files"
    user="$(id -un)"
    mariadb-install-db --no-defaults --datadir="$dir/data" --user="$user" \
        --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 \
        || { cat "$dir/install.log" >&2; return 1; }
    port="$(free_port)"
    "$binary" --no-defaults --datadir="$dir/data" --user="$user" \
        --socket="$dir/mysqld.sock" --port="$port" --bind-address=127.0.0.1 \
        --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" \
        --lower-case-table-names=1 --character-set-server=utf8mb4 \
        --collation-server=utf8mb4_general_ci --local-infile=0 --secure-file-priv="$dir/files" \
        --innodb-buffer-pool-size=64M --skip-log-bin --performance-schema=OFF \
        --max-connections=200 >/dev/null 2>&1 &
    local tries=0
    until mariadb --no-defaults --socket="$dir/mysqld.sock" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
        tries=$((tries + 1))
        if [[ "$tries" -gt 300 ]]; then
            echo "mariadb.sh: server did not answer within 30 s" >&2
            cat "$dir/error.log" >&2 || true
            return 1
        fi
        sleep 0.1
    done
    mariadb --no-defaults --socket="$dir/mysqld.sock" -uroot -e "
        CREATE USER '$ADMIN_USER'@'127.0.0.1' IDENTIFIED BY '$ADMIN_PASSWORD';
        GRANT ALL PRIVILEGES ON *.* TO '$ADMIN_USER'@'127.0.0.1' WITH GRANT OPTION;"
    echo "$port" >"$dir/port"
    echo "mysql://$ADMIN_USER:$ADMIN_PASSWORD@127.0.0.1:$port"
}

stop() {
    local dir="$1" pid tries=0
    [[ -f "$dir/mysqld.pid" ]] || return 0
    pid="$(cat "$dir/mysqld.pid")"
    kill "$pid" 2>/dev/null || return 0
    while kill -0 "$pid" 2>/dev/null && [[ "$tries" -lt 300 ]]; do
        tries=$((tries + 1))
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
}

case "${1:-}" in
start) start "${2:?directory}" ;;
stop) stop "${2:?directory}" ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
