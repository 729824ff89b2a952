# Set-up and entry points. `make demo` and `make test` are the two commands of the README.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: setup prepared dot browser demo test check readings bench fixtures zoo sweep-demo

# The virtual environment, with msinspect and its train, dry-run, cluster (Dask, for --scheduler
# and its test) and dev extras; re-made when the package metadata changes. Idempotent.
$(VENV)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[train,dryrun,cluster,dev]'
	touch $@

# Graphviz's `dot` program draws `msinspect render`'s pictures (the .dot file is written without
# it). Installed with apt-get where we are root on Debian; elsewhere a note says how.
dot:
	@command -v dot >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; } \
	      || echo "note: could not install graphviz; render writes .dot files only"; \
	  else echo "note: Graphviz's dot is missing (apt-get install graphviz); render writes .dot files only"; fi; }

# Chromium and its WebDriver run the report's browser tests (tests/report/test_report_browser.py):
# installed with apt-get where we are root on Debian; elsewhere those tests skip with the reason,
# except under CI (CI set), where a missing browser fails them.
browser:
	@{ command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; } && command -v chromedriver >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } \
	      || echo "note: could not install chromium; the report's browser tests will skip (fail under CI)"; \
	  else echo "note: chromium / chromedriver missing (apt-get install chromium chromium-driver); the report's browser tests will skip"; fi; }

# `make setup` alone ends with the set-up's `next: msinspect dryrun ...` hint; demo and test need the
# same set-up (prepared) without that line in the middle of their own output.
setup: $(VENV)/.installed dot browser
	$(BIN)/msinspect setup-dryrun

prepared: $(VENV)/.installed dot browser
	@out=$$($(BIN)/msinspect setup-dryrun) || status=$$?; printf '%s\n' "$$out" | grep -v '^next: '; exit $${status:-0}

# The main job on the embedded default data: train-then-verify the three parallel modes on the
# MNIST subset (manual parallel for real on 8 CPU processes, the automatic modes as planner dry
# runs where no GPU is present); each run lands in a new folder under runs/.
# It ends by writing an HTML report (msinspect report, with the job's spec) into each new run
# folder and printing its path; the exit status is the training's.
demo: prepared
	@status=0; $(BIN)/msinspect train all --out runs || status=$$?; reports=""; \
	for mode in manual_parallel sharding_propagation recursive_pipeline; do \
	  run=$$(ls -dt runs/train-$$mode-* runs/dryrun-$$mode-* 2>/dev/null | head -1); \
	  if [ -n "$$run" ] && [ ! -e "$$run/report.html" ]; then \
	    $(BIN)/msinspect report "$$run" -o "$$run/report.html" --spec train_jobs/$$mode.toml \
	      || echo "note: the report of $$run says what failed"; fi; \
	  if [ -n "$$run" ] && [ -f "$$run/report.html" ]; then reports="$$reports $$run/report.html"; fi; \
	done; \
	echo "reports (open them in a browser):"; for r in $$reports; do echo "  file://$$(cd "$$(dirname "$$r")" && pwd)/report.html"; done; \
	[ -n "$$reports" ] || echo "  none: no run folder was made"; exit $$status

# One pytest worker a core (pytest-xdist), each test file whole on one worker: a file's module and
# session fixtures (the seeds' dry runs, the train jobs' runs) are made once. Files are handed out
# in the order collected (tests/conftest.py: the longest first), not xdist's most-tests-first,
# which began the train jobs' file (a few tests, four minutes) last, on one core, alone.
# Each file says when it ends, with the files and tests done and about how long is left
# (tests/progress.py).
test: prepared
	$(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder

# The quick subset for daily work (about a minute on two cores): every parser construct's golden
# file in both readings, the analyses' golden files, calls, layouts, the zoo's specs and the CLI's
# errors, the docs' links and the expectation language. `make test` runs everything (CI: `.ci/run`).
CHECK_TESTS = tests/parser/test_golden.py tests/parser/test_values.py tests/parser/test_parse_errors.py \
	tests/parser/test_value_depth.py tests/parser/test_node_strategy.py tests/analysis/test_golden_analyses.py \
	tests/analysis/test_call_binding.py tests/mindspore/test_layouts.py tests/analysis/test_lazy_inline_weights.py \
	tests/analysis/test_mindformers_weights.py tests/zoo/test_zoo_specs.py tests/test_graph.py \
	tests/test_spec_validation.py tests/test_errors_pickle.py tests/test_stages.py tests/test_cli_bad_inputs.py \
	tests/test_docs.py tests/test_selectors.py tests/test_expectation_language.py
check: prepared
	$(BIN)/python -m pytest -q $(CHECK_TESTS)
	MSINSPECT_PARSER=reference $(BIN)/python -m pytest -q tests/parser/test_golden.py tests/parser/test_value_depth.py

# The parser's two readings over every rank's IR file of the corpus (make test compares one rank's
# file of each dump and pass: tests/parser/test_readings.py).
readings: prepared
	MSINSPECT_READINGS=every $(BIN)/python -m pytest -q -n auto tests/parser/test_readings.py

bench: prepared
	$(BIN)/python bench/bench_parse.py
	$(BIN)/python bench/bench_analyses.py

# Regenerate the 2.10 fixtures of fixtures/ from the training jobs (see fixtures/README.md):
# a few minutes. Refuses while fixtures/ has uncommitted changes (make fixtures ARGS=--force).
fixtures: prepared
	$(BIN)/python tools/regen_fixtures.py $(ARGS)

# A what-if sweep, unattended (docs/sweep.md): zoo 01 dry-run with tensor parallel 1, 2, 4 and 8 (DP
# 2, 8 ranks, ranks 0 and 5 run; MP 8 needs 16 devices and fails with MindSpore's reason), then the
# MP 4 and MP 1 runs compared (docs/compare.md). A few minutes on two cores; the sweep exits 1
# because one setting does not compile, which is what it shows: the compare runs all the same.
sweep-demo: prepared
	@$(BIN)/msinspect sweep fixtures/zoo/nets/01_semi_auto_tp4dp2.py --ranks 8 --only 0,5 --grid MP=1,2,4,8 \
	  --out runs; status=$$?; [ $$status -le 1 ] || exit $$status; \
	sweep=$$(ls -dt runs/sweep-01_semi_auto_tp4dp2-* | head -1); \
	$(BIN)/msinspect compare "$$sweep/MP-4" "$$sweep/MP-1"

# Regenerate the model zoo of fixtures/zoo/ (fixtures/README.md, "The model zoo") from its network
# scripts: MindSpore's real planner in the dry run, a real CPU run, an expected failure. Slow (tens
# of minutes on two cores); never part of CI. FULL=DIR also keeps every file MindSpore wrote in
# DIR/<name>/ (outside git), e.g. `make zoo FULL=/tmp/zoo_full`; ARGS passes more options
# (--only NAME, --force, --keep-runs).
zoo: prepared
	$(BIN)/python tools/regen_zoo.py $(if $(FULL),--full $(FULL)) $(ARGS)
