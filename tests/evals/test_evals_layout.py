"""evals/ in layers: `evals.fit` (fits of the shipped models) builds on `evals.bench` (benchmarks), never
the other way round, and `evals.provenance` (what a fit was fitted on, read by both) imports neither."""

import ast
from pathlib import Path

EVALS = Path(__file__).resolve().parents[2] / "evals"


def imported(path: Path) -> set[str]:
    """Every module `path` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_bench_never_imports_fit_and_provenance_imports_neither():
    wrong = [
        (str(path.relative_to(EVALS)), module)
        for path in (EVALS / "bench").glob("*.py")
        for module in imported(path)
        if module.startswith("evals.fit")
    ]
    wrong += [
        ("provenance.py", module)
        for module in imported(EVALS / "provenance.py")
        if module.startswith(("evals.fit", "evals.bench"))
    ]
    assert not wrong, wrong
