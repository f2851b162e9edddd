#!/usr/bin/env bash
# A private MariaDB server for tests and CI: its own temporary datadir, a unix socket and a
# loopback port, nothing shared with a system server. The one place that starts servers.
#
#   .ci/mariadb.sh start DIR [--defaults]
#                              initialise DIR (mariadb-install-db), start the server, wait until
#                              it answers, print its admin URL (mysql://user:pass@127.0.0.1:port)
#   .ci/mariadb.sh stop DIR    stop the server started in DIR (its pid file), then return
#
# mariadb-install-db runs with --skip-test-db and a root without password, unless --defaults:
# then with its own defaults, as a user's server often is: anonymous accounts ''@'localhost' and
# ''@'<hostname>', the test databases granted to PUBLIC (MariaDB 10.11), root (and the account
# of the user running it) by unix socket only. The admin account the URL names exists for
# 127.0.0.1, localhost (the unix socket) and ::1 (the server listens there too where the
# machine has IPv6 loopback), so every spelling of its URL reaches the same account.
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

has_ipv6_loopback() {
    python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null
}

start() {
    local dir="$1" mode="${2:-}" binary port user bootstrap bind="127.0.0.1" hosts="127.0.0.1 localhost"
    local install_options=(--auth-root-authentication-method=normal --skip-test-db)
    binary="$(server_binary)" || { echo "mariadb.sh: no mariadbd/mysqld binary" >&2; return 1; }
    mkdir -p "$dir/data" "$dir/files"
    user="$(id -un)"
    bootstrap=root   # normal: root@localhost without password
    if [[ "$mode" == "--defaults" ]]; then
        install_options=()
        bootstrap="$user"   # unix_socket account of the user running mariadb-install-db
    elif [[ -n "$mode" ]]; then
        echo "mariadb.sh: unknown option $mode" >&2
        return 2
    fi
    if has_ipv6_loopback; then
        bind="127.0.0.1,::1"
        hosts="$hosts ::1"
    fi
    mariadb-install-db --no-defaults --datadir="$dir/data" --user="$user" \
        "${install_options[@]}" >"$dir/install.log" 2>&1 \
        || { cat "$dir/install.log" >&2; return 1; }
    port="$(free_port)"
    "$binary" --no-defaults --datadir="$dir/data" --user="$user" \
        --socket="$dir/mysqld.sock" --port="$port" --bind-address="$bind" \
        --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" \
        --lower-case-table-names=1 --character-set-server=utf8mb4 \
        --collation-server=utf8mb4_general_ci --local-infile=0 --secure-file-priv="$dir/files" \
        --innodb-buffer-pool-size=64M --skip-log-bin --performance-schema=OFF \
        --max-connections=200 >/dev/null 2>&1 &
    local tries=0
    until mariadb --no-defaults --socket="$dir/mysqld.sock" -u"$bootstrap" -e 'SELECT 1' \
        >/dev/null 2>&1; do
        tries=$((tries + 1))
        if [[ "$tries" -gt 300 ]]; then
            echo "mariadb.sh: server did not answer within 30 s" >&2
            cat "$dir/error.log" >&2 || true
            return 1
        fi
        sleep 0.1
    done
    local host sql=""
    for host in $hosts; do
        sql+="CREATE USER '$ADMIN_USER'@'$host' IDENTIFIED BY '$ADMIN_PASSWORD';"
        sql+="GRANT ALL PRIVILEGES ON *.* TO '$ADMIN_USER'@'$host' WITH GRANT OPTION;"
    done
    mariadb --no-defaults --socket="$dir/mysqld.sock" -u"$bootstrap" -e "$sql"
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
start) start "${2:?directory}" "${3:-}" ;;
stop) stop "${2:?directory}" ;;
*)
    echo "usage: $0 start DIR [--defaults] | stop DIR" >&2
    exit 2
    ;;
esac
