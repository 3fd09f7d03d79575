# One image for every Faceoff service (migrate, api, worker, dashboard); the command differs.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    FACEOFF_HOME=/var/lib/faceoff \
    FACEOFF_NUMBA_CACHE=/var/cache/faceoff/numba

WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY solvers solvers
COPY data data
COPY cli cli
COPY core core
COPY api api
COPY worker worker
COPY client client
COPY dashboard dashboard
COPY migrations migrations
RUN pip install . \
    && useradd --create-home --uid 1000 faceoff \
    && mkdir -p /var/lib/faceoff /var/cache/faceoff \
    && chown -R faceoff /var/lib/faceoff /var/cache/faceoff
USER faceoff
EXPOSE 8000 8050
CMD ["uvicorn", "api.main:app", "--no-proxy-headers", "--host", "0.0.0.0", "--port", "8000"]
