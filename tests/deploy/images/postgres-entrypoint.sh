#!/bin/sh
# The official image's first start, reduced to what Faceoff's compose file uses.
set -eu
if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
    user="${POSTGRES_USER:-postgres}"
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    if [ "${POSTGRES_DB:-$user}" != postgres ]; then
        echo "CREATE DATABASE \"${POSTGRES_DB:-$user}\" OWNER \"$user\";" \
            | postgres --single -D "$PGDATA" postgres >/dev/null
    fi
fi
if [ "${1:-}" = postgres ]; then
    shift
    set -- postgres -c listen_addresses='*' "$@"
fi
exec "$@"
