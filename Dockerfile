# One image for every Faceoff service (migrate, api, worker, dashboard); the command differs.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    FACEOFF_HOME=/var/lib/faceoff \
    FACEOFF_NUMBA_CACHE=/var/cache/faceoff/numba

# built from /src and run from an empty /app, so that the installed package is the one
# imported (a faceoff/ folder in the working directory would shadow it)
WORKDIR /src
COPY pyproject.toml README.md ./
COPY faceoff faceoff
COPY solvers solvers
COPY data data
COPY cli cli
COPY core core
COPY api api
COPY worker worker
COPY client client
COPY dashboard dashboard
COPY migrations migrations
# the peers: scikit-learn and cyanure from the extra; lightning built from its sdist (no
# wheels, no build isolation) with a compiler that is removed again
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && pip install ".[peers]" \
    && pip install numpy cython "setuptools<81" wheel \
    && pip install --no-build-isolation sklearn-contrib-lightning \
    && apt-get purge -y gcc libc6-dev && apt-get autoremove -y \
    && rm -rf /var/lib/apt/lists/* /src \
    && useradd --create-home --uid 1000 faceoff \
    && mkdir -p /var/lib/faceoff /var/cache/faceoff \
    && chown -R faceoff /var/lib/faceoff /var/cache/faceoff
WORKDIR /app
USER faceoff
EXPOSE 8000 8050
CMD ["uvicorn", "faceoff.api.main:app", "--no-proxy-headers", "--host", "0.0.0.0", "--port", "8000"]
