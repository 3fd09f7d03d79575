#!/bin/sh
# As the official image: redis-server's protected mode off (it would refuse other containers).
set -eu
if [ "${1:-}" = redis-server ]; then
    shift
    set -- redis-server --protected-mode no "$@"
fi
exec "$@"
