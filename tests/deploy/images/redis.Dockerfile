# Redis from Debian's packages, run as the official redis image runs it: from /data, as the
# redis user, reachable from the other containers (protected mode off: no password is set).
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data \
    && chown redis:redis /data
COPY redis-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
WORKDIR /data
USER redis
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
