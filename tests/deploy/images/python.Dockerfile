# What the app's Dockerfile expects of python:3.11-slim, from Debian's packages: `python` and
# `pip` on PATH installing into one environment (a venv: Debian's own Python is externally
# managed), and Python's headers for the peers that compile.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv python3-dev \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/python
ENV PATH=/opt/python/bin:$PATH \
    LANG=C.UTF-8
CMD ["python3"]
