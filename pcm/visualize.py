"""Seeing PCM: the workflow drawing, an interactive knowledge-graph page, weight timelines.

Everything renders offline: the workflow and timelines with matplotlib, the knowledge
graph as one self-contained HTML file (inline SVG and JS, no CDN; `pcm.visualize_page`).
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from pcm.visualize_page import EDGE_COLOURS, TYPE_COLOURS, memory_html
from pcm.world.knowledge_graph import WeightedKnowledgeGraph

__all__ = ["EDGE_COLOURS", "TYPE_COLOURS", "draw_workflow", "memory_html", "weight_timeline", "workflow_mermaid"]

BRANCH_COLOURS = {"correction": "#f4a3a3", "profiling": "#f6d58e", "maintenance": "#a8d5a2"}


def _matplotlib():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def workflow_mermaid(compiled) -> str:
    return compiled.get_graph(xray=True).draw_mermaid()


def draw_workflow(compiled, path: Path) -> Path:
    """The compiled graph (subgraphs expanded) as a PNG, laid out top to bottom by depth."""
    plt = _matplotlib()
    drawn = compiled.get_graph(xray=True)
    graph = nx.DiGraph()
    conditional = set()
    for edge in drawn.edges:
        graph.add_edge(edge.source, edge.target)
        if edge.conditional:
            conditional.add((edge.source, edge.target))
    depth = {n: 0 for n in graph}
    for node in nx.topological_sort(graph):
        for successor in graph.successors(node):
            depth[successor] = max(depth[successor], depth[node] + 1)
    for node, level in depth.items():
        graph.nodes[node]["layer"] = level
    positions = nx.multipartite_layout(graph, subset_key="layer", align="horizontal")
    positions = {n: (x, -y) for n, (x, y) in positions.items()}
    fig, axis = plt.subplots(figsize=(9, 11))
    for source, target in graph.edges:
        (x1, y1), (x2, y2) = positions[source], positions[target]
        axis.annotate(
            "",
            xy=(x2, y2 + 0.03),
            xytext=(x1, y1 - 0.03),
            arrowprops={
                "arrowstyle": "->",
                "color": "#555",
                "linestyle": "--" if (source, target) in conditional else "-",
            },
        )
    for node, (x, y) in positions.items():
        branch = node.split(":")[0]
        colour = BRANCH_COLOURS.get(branch, "#dfe7fd" if not node.startswith("__") else "#ffffff")
        label = node.replace(":", "\n")
        axis.text(
            x,
            y,
            label,
            ha="center",
            va="center",
            fontsize=9,
            bbox={"boxstyle": "round,pad=0.4", "facecolor": colour, "edgecolor": "#333"},
        )
    for branch, colour in BRANCH_COLOURS.items():
        axis.plot([], [], "s", color=colour, markersize=12, label=f"{branch} subgraph")
    axis.plot([], [], "--", color="#555", label="conditional edge (input check; S_eff level)")
    xs = [x for x, _ in positions.values()]
    ys = [y for _, y in positions.values()]
    axis.set_xlim(min(xs) - 0.25, max(xs) + 0.25)
    axis.set_ylim(min(ys) - 0.08, max(ys) + 0.08)
    axis.legend(loc="lower left", fontsize=8)
    axis.set_title("PCM workflow")
    axis.axis("off")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def weight_timeline(
    graph: WeightedKnowledgeGraph, path: Path, node_ids: list[str] | None = None, limit: int = 8
) -> Path:
    """Weight of chosen memories (default: the most often changed) after each turn that changed them."""
    plt = _matplotlib()
    events = graph.read_audit()
    if node_ids is None:
        counts: dict[str, int] = {}
        for event in events:
            counts[event.node_id] = counts.get(event.node_id, 0) + 1
        node_ids = sorted(counts, key=lambda i: -counts[i])[:limit]
    missing = [i for i in node_ids if i not in graph]
    if missing:
        raise KeyError(f"no memory with id {missing[0]!r}")
    fig, axis = plt.subplots(figsize=(8, 4.5))
    for node_id in node_ids:
        points = [(e.turn or 0, e.new_weight) for e in events if e.node_id == node_id]
        if points:
            turns, weights = zip(*points)
            content = graph.node(node_id).content
            axis.step(turns, weights, where="post", marker="o", label=content[:40])
    axis.axhline(graph.dormant_floor, color="grey", linestyle=":", label="dormant floor")
    axis.set_xlabel("turn")
    axis.set_ylabel("confidence weight")
    axis.set_ylim(0, 1.02)
    axis.legend(fontsize=7, loc="best")
    axis.set_title(f"Weight trajectories — {graph.user_id}")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
