"""Evaluation tooling for PCM: LoCoMo loading, metrics and baseline retrievers."""
