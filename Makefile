# pathprof developer tasks. `make demo` and `make test` set up everything themselves.

SHELL := /bin/bash
PYTHONS := $(shell scripts/find-pythons)
BASE_PYTHON := $(firstword $(PYTHONS) python3)
VENV := .venv
PIP_FLAGS := --quiet --disable-pip-version-check

.PHONY: demo test test-all lint bench bench-scale realsuites clean

# One virtual environment per interpreter: .venv (baseline), .venv-3.12, .venv-3.13.
# Two stamps in .venv: .installed-base (pathprof and its runtime dependencies: what
# `make demo` needs) and .installed (the test extra too: `make test`, `make lint`). A
# .venv that `make demo` made gets the test extra when `make test` runs; one that has
# the test extra has the base too.
$(VENV)/.installed-base: pyproject.toml
	$(BASE_PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install $(PIP_FLAGS) -e .
	touch $@

$(VENV)/.installed: pyproject.toml
	$(BASE_PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install $(PIP_FLAGS) -e '.[test]'
	touch $(VENV)/.installed-base $@

.venv-%/.installed: pyproject.toml
	$(filter %python$*,$(PYTHONS)) -m venv .venv-$*
	.venv-$*/bin/pip install $(PIP_FLAGS) -e '.[test]'
	touch $@

# Profile the bundled example program and show its hottest paths: needs pathprof and
# rich only, not the test extra.
demo: $(VENV)/.installed-base
	$(VENV)/bin/pathprof run --data-file .pathprof-demo examples/demo/orders.py
	$(VENV)/bin/pathprof report --data-file .pathprof-demo --top 4
	$(VENV)/bin/pathprof count --top 4 examples/demo/orders.py

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy

# The whole suite on the baseline Python, then on every other supported Python found:
# on the newest without the slow stdlib_oracle tests (CPython's suites under the source
# oracle), on those between without the outer_pythons tests too (the layers no
# interpreter version changes, the larger shares of the slowest samples: tests/conftest.py),
# and there the properties that run random programs draw a third of their examples
# (HYPOTHESIS_PROFILE=ci-between: tests/loading.py).
# --dist worksteal: a worker whose tests are done takes half of another's queue (with
# xdist's default, one worker could run the last queued minutes alone).
test: lint
	$(VENV)/bin/python -m pytest -n auto --dist worksteal
	@for py in $(wordlist 2,9,$(PYTHONS)); do \
	  minor=$$($$py -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")'); \
	  $(MAKE) --no-print-directory .venv-$$minor/.installed || exit 1; \
	  if [ "$$py" = "$(lastword $(PYTHONS))" ]; then marks="not stdlib_oracle"; \
	  else marks="not stdlib_oracle and not outer_pythons"; fi; \
	  echo "== Python $$minor ($$marks) =="; \
	  if [ "$$py" = "$(lastword $(PYTHONS))" ]; then profile=ci; else profile=ci-between; fi; \
	  HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-$$profile} \
	    .venv-$$minor/bin/python -m pytest -q -n auto --dist worksteal -m "$$marks" || exit 1; \
	done

# The bench extra: pyperformance (benchmark sources), coverage, SlipCover, matplotlib.
# Results (JSON, Markdown, PNG) go to benchmarks/results/; docs/benchmarks.md keeps the
# latest tables. BENCH_ARGS passes options to overhead.py (e.g. --repeats 5).
bench: $(VENV)/.installed
	$(VENV)/bin/pip install $(PIP_FLAGS) -e '.[bench]'
	$(VENV)/bin/python benchmarks/graph_algorithms.py
	$(VENV)/bin/python benchmarks/counter_kind.py
	$(VENV)/bin/python benchmarks/overhead.py --out benchmarks/results $(BENCH_ARGS)

# Issue 36: big codebases. `import networkx` and CPython's email/json/xml test suites under
# pathprof (first run, warm cache) beside plain Python and coverage.py --branch, and how each
# figure grows from 10k to 116k lines measured. Results (JSON, Markdown) go to
# benchmarks/results/; docs/benchmarks.md keeps the tables. BENCH_SCALE_ARGS passes options
# to scale.py (e.g. --repeats 5, --workload networkx, --quick).
bench-scale: $(VENV)/.installed
	$(VENV)/bin/pip install $(PIP_FLAGS) -e '.[bench]'
	$(VENV)/bin/python benchmarks/scale.py --out benchmarks/results $(BENCH_SCALE_ARGS)

# Issues 24 and 50: nineteen real projects' own test suites (attrs, jinja2, click, pygments,
# werkzeug, jsonschema, marshmallow, pyflakes ...: benchmarks/realsuites.py's PROJECTS, from
# their sdists on the package index), plain, under --cov-branch and under --pathprof
# (stopping, counting every run, with conditions); checks the outcome counts match and
# prints the table kept in docs/benchmarks.md. About an hour on a busy 2-core machine; not
# part of `make test`. REALSUITES_ARGS passes options (e.g. --projects a,b --repeat 3
# --workdir DIR).
realsuites: $(VENV)/.installed
	$(VENV)/bin/python benchmarks/realsuites.py $(REALSUITES_ARGS)

clean:
	rm -rf $(VENV) .venv-3.* .pytest_cache .hypothesis build src/*.egg-info
