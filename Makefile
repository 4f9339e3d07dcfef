# DP Posterior Lab
# make run   create .venv if missing, install requirements (once per change), start the app
# make test  the same install plus the interop extra (OpenDP, diffprivlib), Debian chromium if missing,
#            then the whole pytest suite: the engine and AppTest files on two workers (pytest-xdist, one
#            file per worker at a time), then the tests marked serial (their own Streamlit servers and
#            browsers, counting what a server does in a time window) alone, so no worker competes with them.
#            The project's own modules are byte-compiled first: where PYTHONDONTWRITEBYTECODE is set (as on
#            the project's machines) every CLI and server process the tests start would compile them again;
#            and the numba kernels are compiled before the workers start (tests/warm_kernels.py).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed
INTEROP_STAMP := $(VENV)/.interop-installed
CHROMIUM := /usr/bin/chromium

.PHONY: run test install chromium

# The app starts at once on the demo (its lifespan warms the demo's kernels, ui/warmup.py); the other kernels compile
# in the background at the lowest priority, so that a fresh clone's first regression or log-linear run does not
# wait tens of seconds for numba (a few CPU-minutes once; seconds when numba's disk cache has them).
run: $(STAMP)
	nice -n 19 $(PY) tests/warm_kernels.py > /dev/null 2>&1 &
	$(PY) -m streamlit run app.py

# The numba kernels are compiled once, by tests/warm_kernels.py in two processes, while the interop extra and
# chromium install (on a fresh clone both pytest workers would otherwise compile the same kernels at once).
# A warm-up run that fails only says so on stderr: the suite then reports what is wrong.
test: $(STAMP)
	$(PY) -m compileall -q -j 0 app.py engine ui figures pages tests bench > /dev/null
	$(PY) tests/warm_kernels.py 0 2 > /dev/null & a=$$!; $(PY) tests/warm_kernels.py 1 2 > /dev/null & b=$$!; \
	$(MAKE) --no-print-directory $(INTEROP_STAMP) chromium; s=$$?; wait $$a; wait $$b; exit $$s
	$(PY) -m pytest -q -n 2 --dist loadfile -m "not serial"
	$(PY) -m pytest -q -m serial

install: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

# Reinstall only when requirements.txt or pyproject.toml is newer than the stamp. The project itself
# is installed editable (no dependencies) for the `dp-posterior` console script. pip byte-compiles what it
# installs one file at a time; compileall on both cores does the same in less time (fresh venv: 50 s against
# 23 + 14), and like pip's own step it does not fail the install.
SITE = $$($(PY) -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
$(STAMP): requirements.txt pyproject.toml | $(PY)
	$(PY) -m pip install --no-compile -r requirements.txt
	$(PY) -m pip install --no-deps -e .
	-$(PY) -m compileall -q -j 0 $(SITE) > /dev/null
	touch $(STAMP)

# The optional extra the interop tests use (tests/test_interop.py); `make run` does not need it.
$(INTEROP_STAMP): requirements-interop.txt $(STAMP)
	$(PY) -m pip install --no-compile -r requirements-interop.txt
	-$(PY) -m compileall -q -j 0 $(SITE) > /dev/null
	touch $(INTEROP_STAMP)

# The browser test drives the Debian chromium package (never `playwright install`).
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update && $$SUDO apt-get install -y chromium; \
	fi
