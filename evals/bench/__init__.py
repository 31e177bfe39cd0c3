"""Benchmarks of PCM and the models it ships: belief-revision scenarios and follow-ups, LoCoMo
retrieval (and QA with an LLM) beside baseline retrievers, latency, scale, concurrency and LLM mode,
with their metrics and reports."""
