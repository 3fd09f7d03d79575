# One image for every Faceoff service (migrate, api, worker, dashboard); the command differs and
# lives in docker-compose.yml (the image's CMD is the API's; the dashboard is served by gunicorn).
# PYTHON_IMAGE: any Debian-based image with python 3.11+ and pip on PATH (compose passes its
# PYTHON_IMAGE variable; the deploy tests build one from Debian's packages).
ARG PYTHON_IMAGE=python:3.11-slim

# The requirements of pyproject.toml (dependencies and the peers extra) as a plain list, so that
# the layer installing them is rebuilt only when they change, not on every edit of the sources.
FROM ${PYTHON_IMAGE} AS requirements
COPY pyproject.toml /
RUN python -c "import tomllib; p = tomllib.load(open('/pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['dependencies'] + p['optional-dependencies']['peers']))" > /requirements.txt

FROM ${PYTHON_IMAGE}
# pip's index, for a build behind a mirror (the deploy tests pass a local caching index)
ARG PIP_INDEX_URL=https://pypi.org/simple
ARG PIP_TRUSTED_HOST=
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    FACEOFF_HOME=/var/lib/faceoff \
    FACEOFF_NUMBA_CACHE=/var/cache/faceoff/numba

# the dependencies and the peers: scikit-learn, cyanure, skglm and celer from the extra (wheels);
# lightning built from its sdist (no wheels, no build isolation; C and C++, through
# numpy.distutils, which setuptools 81+ breaks) with compilers that are removed again
COPY --from=requirements /requirements.txt /tmp/requirements.txt
RUN apt-get update \
    && apt-get install -y --no-install-recommends g++ gcc libc6-dev \
    && pip install -r /tmp/requirements.txt \
    && pip install numpy cython "setuptools>=77,<81" wheel \
    && pip install --no-build-isolation sklearn-contrib-lightning \
    && apt-get purge -y g++ gcc libc6-dev && apt-get autoremove -y \
    && rm -rf /var/lib/apt/lists/* /tmp/requirements.txt \
    && useradd --create-home --uid 1000 faceoff \
    && mkdir -p /var/lib/faceoff /var/cache/faceoff \
    && chown -R faceoff /var/lib/faceoff /var/cache/faceoff

# built from /src and run from an empty /app, so that the installed package is the one
# imported (a faceoff/ folder in the working directory would shadow it)
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
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
# the distribution faceoff-bench (import name and command: faceoff); its version is read from
# that distribution's metadata, so a wrong name would show as "0+unknown"
RUN pip install --no-deps --no-build-isolation . \
    && pip check \
    && python -c "import faceoff; assert faceoff.__version__ != '0+unknown', 'faceoff-bench'" \
    && rm -rf /src
WORKDIR /app
USER faceoff
EXPOSE 8000 8050
CMD ["uvicorn", "faceoff.api.main:app", "--no-proxy-headers", "--host", "0.0.0.0", "--port", "8000"]
