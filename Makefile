# Faceoff — common tasks. `make test` and `make demo` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# pytest processes (pytest-xdist; a test file stays in one process, for its module fixtures):
# most service tests wait on sockets and subprocesses, so 2 processes on 2 cores take a
# third of the serial time (11.9 min against 37 min measured on the 2-core VM)
TEST_WORKERS ?= 2
# Local mirror of the public LIBSVM datasets, read before the download cache and the network
# (CI reads the shared copy). A missing folder means no mirror, not an error: on a fresh clone
# without ../shared the tests take their files from the cache or a download, or skip them.
FACEOFF_DATA_MIRROR ?= $(abspath ../shared/datasets)
export FACEOFF_DATA_MIRROR

.PHONY: venv test up demo lint bench bench-papers bench-history bench-multiclass clean

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "Installing Faceoff (the distribution faceoff-bench) and its dependencies into $(VENV) ..."
	# until 0.2 the distribution was named faceoff, a name PyPI gives another project: an
	# older .venv drops it, so that one distribution provides `import faceoff` and the command
	$(BIN)/python -m pip uninstall --quiet --yes faceoff 2>/dev/null || true
	$(BIN)/python -m pip install --quiet -e ".[dev,peers]"
	# lightning's sdist needs numpy, Cython and no build isolation (bench/README.md); it builds
	# through numpy.distutils, which setuptools 81+ breaks (Compiler.__init__ signature)
	$(BIN)/python -m pip install --quiet numpy cython "setuptools>=77,<81" wheel
	@echo "Building sklearn-contrib-lightning (a peer) from source: it has no wheels, so Cython"
	@echo "and the C compiler run for about 2 minutes on 2 cores, with no output until done ..."
	@start=$$(date +%s); \
	$(BIN)/python -m pip install --quiet --no-build-isolation sklearn-contrib-lightning && \
	echo "... sklearn-contrib-lightning built in $$(( $$(date +%s) - start )) s"
	touch $@

venv: $(BIN)/.installed

## Run the whole test suite (creates the virtualenv and installs everything first).
test: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python tools/typecheck.py
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=20

## The whole service on this machine: SQLite, a local Redis broker, one worker, the API on
## :8000 and the dashboard on :8050, with a demo sweep. Ctrl-C stops everything.
up: venv
	$(BIN)/faceoff up

## Solve a synthetic logistic-regression problem with dual coordinate ascent and show the trace.
demo: venv
	$(BIN)/faceoff solve --synthetic classification --loss logistic --l2 1e-4 \
		--solver dual_cd --param sampling=importance --format table

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python tools/typecheck.py

## Benchmarks against the peers (see bench/README.md).
bench: venv
	$(BIN)/python -m bench.run_part1

## Part 5: K-class objectives, ours against the peers (see bench/README.md, part 5).
bench-multiclass: venv
	$(BIN)/python -m bench.run_multiclass

## The papers' claims for SPDC and DGPD, and their kernel costs (see bench/README.md, part 2).
bench-papers: venv
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"
	$(BIN)/python -m bench.run_spdc_ridge
	$(BIN)/python -m bench.run_dgpd_sparse
	$(BIN)/python -m bench.run_dgpd_cost
	$(BIN)/python -m bench.run_dgpd_step
	$(BIN)/python -m bench.run_spdc_cost
	$(BIN)/python -m bench.run_dgpd_multiclass

## A team's history at scale (issue 33): 10k then 100k jobs in a fresh PostgreSQL database,
## every target of the issue measured (bench/results/history.md). HISTORY_JOBS=2000,10000 for less.
HISTORY_JOBS ?= 10000,100000
bench-history: venv
	$(BIN)/python -m bench.run_history --jobs $(HISTORY_JOBS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
