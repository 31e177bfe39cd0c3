"""Evaluation tooling for PCM, run as `python -m evals <command>` (`evals/__main__.py`).

- `evals.fit`: fits the models PCM ships (`calibrate`: the surprise router, `pcm/calibration/default.json`;
  `fit-relation`: the pair relation model, `pcm/calibration/relation.json`);
- `evals.bench`: benchmarks them (scenarios, follow-ups, LoCoMo, latency, scale, concurrency, LLM mode);
- `evals.provenance`: what a fit records about its data and a benchmark checks (files, conversations);
- `evals.tracking`: LangSmith tracing and experiments, for every command.

`evals.fit` builds on `evals.bench` (it replays scenarios and conversations to measure signals); nothing
in `evals.bench` imports `evals.fit`.
"""
