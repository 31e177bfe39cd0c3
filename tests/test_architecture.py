"""The code's shape: no import cycle in the project, `pcm/` files of at most 400 lines and functions
of at most 60, layers that point one way (evolution never imports perception; the world model never
imports the layers above it)."""

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pcm", "evals")
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules `name` imports anywhere in its file (lazy imports inside functions too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> nx.DiGraph:
    known = modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    graph.add_edges_from((name, target) for name, path in known.items() for target in imports(name, path, known))
    return graph


def test_no_import_cycle():
    cycles = [" -> ".join(cycle) for cycle in nx.simple_cycles(import_graph())]
    assert not cycles, cycles


def test_layers_point_one_way():
    graph = import_graph()
    below = {
        "pcm.world": ("pcm.perception", "pcm.evolution", "pcm.routing", "pcm.nodes", "pcm.graph", "pcm.api"),
        "pcm.evolution": ("pcm.perception", "pcm.routing", "pcm.nodes", "pcm.graph", "pcm.api"),
        "pcm.perception": ("pcm.routing", "pcm.evolution", "pcm.nodes", "pcm.graph", "pcm.api"),
    }
    wrong = [
        (source, target)
        for source, target in graph.edges
        for layer, above in below.items()
        if source.startswith(layer) and target.startswith(above)
    ]
    assert not wrong, wrong


def test_files_and_functions_stay_small():
    long_files, long_functions = [], []
    for path in (ROOT / "pcm").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_FILE_LINES:
            long_files.append((str(path.relative_to(ROOT)), len(text.splitlines())))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long_functions.append((f"{path.relative_to(ROOT)}:{node.name}", length))
    assert not long_files, long_files
    assert not long_functions, long_functions
