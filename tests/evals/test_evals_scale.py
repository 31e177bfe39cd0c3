"""`make bench-scale`'s measuring functions, run in this process on a small memory (the bench runs
each in a fresh process on up to 100k memories)."""

from evals.bench.scale import TurnSource, _in_fresh_process, bulk_load, count_nodes, measure, report, serve_many
from pcm.config import load_context
from pcm.datasets.locomo import load_locomo
from pcm.services import Services

DATA = "../shared/datasets/locomo"


def test_scale_bench_measures_one_bulk_loaded_user_and_many_users(tmp_path):
    ctx = load_context(router="calibrated", data_dir=str(tmp_path / "data"))
    services = Services(ctx)
    source = TurnSource(load_locomo(DATA)[:1], services.embedder)
    size = len(source.rows) + 20  # every turn once, then 20 copies with a counter
    bulk_load(services.store, "bench-user", source, size)

    row = measure(ctx, "bench-user", DATA, 4, 3)
    assert row["memories"] == size and row["turns"] == 4 and row["searches"] == 3
    assert row["cold_open_s"] > 0 and row["process_p95_s"] >= row["process_p50_s"] > 0
    assert row["search_p50_ms"] > 0 and row["client_bytes_per_turn"] > 0 and row["rss_mb"] > 0

    for index in range(3):
        bulk_load(services.store, f"user-{index}", source, 5, tag=f"u{index}-")
    many = ctx.replace(open_users=2)
    served = serve_many(many, 3, DATA)
    assert served["served_turns"] == 3 and served["open_memories"] <= 2
    counted = count_nodes(many, 3)
    assert counted["min_per_user"] >= 6  # 5 bulk-loaded memories and the served turn's own
    assert _in_fresh_process("count_nodes", many, 3)["nodes"] == counted["nodes"]  # as the bench runs it

    table = report(
        {
            "rows": [{"configuration": "embedded", "size": size, **row}],
            "many_users": [
                {
                    "configuration": "embedded",
                    "users": 3,
                    "per_user": 5,
                    **served,
                    "counted": counted,
                    "expected_nodes_at_least": 18,
                }
            ],
        }
    )
    assert f"| embedded | {size:,} |" in table and "| embedded | 3 × 5 | 3 |" in table
