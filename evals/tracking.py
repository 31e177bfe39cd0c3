"""LangSmith: traced runs and experiments when `LANGSMITH_API_KEY` is set; otherwise nothing
touches the network.

`configure_tracing()` turns LangChain/LangGraph tracing on when a key is present (unless
`LANGSMITH_TRACING` says otherwise) and off when there is none, so a stray
`LANGSMITH_TRACING=true` without a key cannot make the harness try to send traces.
`log_experiment(...)` records a benchmark's per-item results as a LangSmith experiment:
a dataset (one example per question or scenario, created once and reused) and an
`evaluate` run whose target returns what the benchmark measured and whose evaluators
report each metric, so the numbers in LangSmith are the ones in `results.json`.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Sequence
from datetime import datetime, timezone

logger = logging.getLogger(__name__)


def langsmith_enabled() -> bool:
    return bool(os.environ.get("LANGSMITH_API_KEY", "").strip())


def configure_tracing() -> bool:
    """Trace runs to LangSmith when a key is set; make sure nothing is sent when none is. Returns enabled."""
    if langsmith_enabled():
        os.environ.setdefault("LANGSMITH_TRACING", "true")
        return os.environ["LANGSMITH_TRACING"].lower() == "true"
    os.environ["LANGSMITH_TRACING"] = "false"
    os.environ["LANGCHAIN_TRACING_V2"] = "false"
    return False


def _evaluator(metric: str):
    def evaluate_metric(run, example) -> dict:
        value = (run.outputs or {}).get(metric)
        return {"key": metric, "score": None if value is None else float(value)}

    evaluate_metric.__name__ = metric.replace("@", "_at_")
    return evaluate_metric


def log_experiment(
    benchmark: str,
    items: Sequence[dict],
    metrics: Sequence[str],
    *,
    client=None,
    upload: bool | None = None,
    metadata: dict | None = None,
) -> dict | None:
    """Log `items` (each `{"id", "inputs", "reference", "outputs"}`, outputs holding the measured
    metrics) as an experiment on the dataset `pcm-<benchmark>`.

    Returns `{"experiment", "dataset", "uploaded", "means"}`, or None when LangSmith is not
    configured and no client is given. `upload=False` runs the same evaluation locally
    (nothing is sent), which is how the wiring is tested offline.
    """
    if client is None and not langsmith_enabled():
        return None
    from langsmith import Client, evaluate
    from langsmith.schemas import Example

    client = client or Client()
    upload = langsmith_enabled() if upload is None else upload
    dataset = f"pcm-{benchmark}"
    by_id = {str(item["id"]): item for item in items}
    if upload:
        if not client.has_dataset(dataset_name=dataset):
            client.create_dataset(dataset_name=dataset, description=f"PCM {benchmark} benchmark items")
            client.create_examples(
                dataset_name=dataset,
                examples=[
                    {"inputs": {"id": key, **item["inputs"]}, "outputs": item["reference"]}
                    for key, item in by_id.items()
                ],
            )
        data: object = dataset
    else:
        now = datetime.now(timezone.utc)
        placeholder = uuid.uuid5(uuid.NAMESPACE_URL, dataset)
        data = [
            Example(
                id=uuid.uuid5(placeholder, key),
                dataset_id=placeholder,
                created_at=now,
                inputs={"id": key, **item["inputs"]},
                outputs=item["reference"],
            )
            for key, item in by_id.items()
        ]

    def measured(inputs: dict) -> dict:
        return by_id[str(inputs["id"])]["outputs"]

    results = evaluate(
        measured,
        data=data,
        evaluators=[_evaluator(m) for m in metrics],
        client=client,
        experiment_prefix=f"pcm-{benchmark}",
        metadata=metadata or {},
        upload_results=upload,
        max_concurrency=0,
    )
    scores: dict[str, list[float]] = {m: [] for m in metrics}
    for row in results:
        for result in row["evaluation_results"]["results"]:
            if result.score is not None:
                scores[result.key].append(float(result.score))
    means = {m: sum(v) / len(v) if v else None for m, v in scores.items()}
    logger.info("LangSmith experiment %s on %s: %s", results.experiment_name, dataset, means)
    return {"experiment": results.experiment_name, "dataset": dataset, "uploaded": upload, "means": means}
