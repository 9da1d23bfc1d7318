#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for tests and benchmarks, from Debian's packages.
# Usage: scripts/local-postgres.sh start|stop [DIR]   (default DIR: /tmp/funil-pg, port: $PGPORT or 5433)
# Prints the connection URL of a fresh database "funil" on start.
set -euo pipefail
cmd=${1:-start}
dir=${2:-/tmp/funil-pg}
port=${PGPORT:-5433}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bin" ] || { echo "PostgreSQL is not installed: apt-get install -y postgresql" >&2; exit 1; }

as_postgres() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi
}

case "$cmd" in
  start)
    if [ ! -f "$dir/PG_VERSION" ]; then
      mkdir -p "$dir"
      [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
      as_postgres "'$bin/initdb' -D '$dir' -A trust -U postgres >/dev/null"
    fi
    as_postgres "'$bin/pg_ctl' -D '$dir' -o '-p $port -k /tmp -c fsync=off -c max_connections=200' -l '$dir/server.log' -w start >/dev/null"
    psql -h 127.0.0.1 -p "$port" -U postgres -tAc "select 1 from pg_database where datname = 'funil'" | grep -q 1 ||
      psql -h 127.0.0.1 -p "$port" -U postgres -qc 'create database funil' >/dev/null
    echo "postgres://postgres@127.0.0.1:$port/funil"
    ;;
  stop)
    as_postgres "'$bin/pg_ctl' -D '$dir' -m fast -w stop" >/dev/null || true
    ;;
  *)
    echo "usage: $0 start|stop [DIR]" >&2
    exit 2
    ;;
esac
