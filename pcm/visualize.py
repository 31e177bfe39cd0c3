"""Seeing PCM: the workflow drawing, an interactive knowledge-graph page, weight timelines.

Everything renders offline: the workflow and timelines with matplotlib, the knowledge
graph as one self-contained HTML file (inline SVG laid out by networkx, inline JS; no CDN).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path

import networkx as nx

from pcm.models import MemoryNode, NodeType
from pcm.world.knowledge_graph import WeightedKnowledgeGraph

TYPE_COLOURS = {NodeType.FACT.value: "#2a6f97", NodeType.HYPOTHESIS.value: "#e9a23b", NodeType.ENTITY.value: "#6a994e"}
BRANCH_COLOURS = {"correction": "#f4a3a3", "profiling": "#f6d58e", "maintenance": "#a8d5a2"}
EDGE_COLOURS = {
    "supersedes": "#c0392b",
    "contests": "#8e44ad",
    "derived_from": "#e67e22",
    "supports": "#27ae60",
    "reaffirms": "#16a085",
    "mentions": "#95a5a6",
}


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


#: the drawing's size and the margin kept free around the graph, in pixels
PAGE_WIDTH, PAGE_HEIGHT, PAGE_MARGIN = 1100, 760, 60


def memory_html(graph: WeightedKnowledgeGraph, title: str | None = None) -> str:
    """A self-contained interactive page: node size = weight, colour = type, dormant faded,
    edges labelled by relation, click a node (or open `page.html#<memory id>`) for its audit history."""
    nodes = graph.nodes()
    place = _placement(graph, nodes)
    svg = _svg_edges(graph, place) + _svg_nodes(graph, nodes, place)
    heading = html.escape(title or f"PCM memory of {graph.user_id}")
    return _page(heading, len(nodes), _legend(), "".join(svg), _details(graph, nodes))


def _placement(graph: WeightedKnowledgeGraph, nodes: list[MemoryNode]) -> Callable[[str], tuple[float, float]]:
    """Where each memory is drawn: a spring layout of the memories and their links, scaled to the page."""
    layout_graph = nx.Graph()
    layout_graph.add_nodes_from(n.id for n in nodes)
    layout_graph.add_edges_from((e.source, e.target) for e in graph.edges())
    positions = nx.spring_layout(layout_graph, seed=7, k=1.2 / max(1, len(nodes)) ** 0.5) if nodes else {}

    def place(node_id: str) -> tuple[float, float]:
        x, y = positions[node_id]
        return (
            PAGE_MARGIN + (x + 1) / 2 * (PAGE_WIDTH - 2 * PAGE_MARGIN),
            PAGE_MARGIN + (y + 1) / 2 * (PAGE_HEIGHT - 2 * PAGE_MARGIN),
        )

    return place


def _details(graph: WeightedKnowledgeGraph, nodes: list[MemoryNode]) -> dict[str, dict]:
    """What the page's panel shows of each memory: content, type, domain, weight, audit history."""
    history: dict[str, list] = {n.id: [] for n in nodes}
    for event in graph.read_audit():
        if event.node_id in history:
            history[event.node_id].append(
                {
                    "turn": event.turn,
                    "old": event.old_weight,
                    "new": event.new_weight,
                    "agent": event.agent,
                    "reason": event.reason,
                }
            )
    return {
        n.id: {
            "content": n.content,
            "type": n.type.value,
            "domain": n.domain,
            "weight": round(n.weight, 3),
            "dormant": graph.is_dormant(n),
            "history": history[n.id],
        }
        for n in nodes
    }


def _svg_edges(graph: WeightedKnowledgeGraph, place: Callable[[str], tuple[float, float]]) -> list[str]:
    svg = []
    for edge in graph.edges():
        (x1, y1), (x2, y2) = place(edge.source), place(edge.target)
        colour = EDGE_COLOURS.get(edge.relation, "#999")
        svg.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" '
            f'stroke-width="{1 + 2 * edge.weight:.1f}" marker-end="url(#arrow)"/>'
            f'<text class="edge" x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2:.1f}" fill="{colour}">'
            f"{html.escape(edge.relation)}</text>"
        )
    return svg


def _svg_nodes(
    graph: WeightedKnowledgeGraph, nodes: list[MemoryNode], place: Callable[[str], tuple[float, float]]
) -> list[str]:
    svg = []
    for node in nodes:
        x, y = place(node.id)
        opacity = 0.25 if graph.is_dormant(node) else 0.95
        radius = 6 + 22 * node.weight
        label = html.escape(node.content[:28] + ("…" if len(node.content) > 28 else ""))
        svg.append(
            f'<g class="node" data-id="{node.id}" opacity="{opacity}"><circle cx="{x:.1f}" cy="{y:.1f}" '
            f'r="{radius:.1f}" fill="{TYPE_COLOURS[node.type.value]}"><title>{html.escape(node.content)}'
            f' (w={node.weight:.2f})</title></circle><text x="{x:.1f}" y="{y + radius + 12:.1f}">{label}'
            f"</text></g>"
        )
    return svg


def _legend() -> str:
    legend = "".join(f'<span><i style="background:{c}"></i>{t}</span>' for t, c in TYPE_COLOURS.items())
    return legend + "".join(f'<span><i style="background:{c}"></i>{r}</span>' for r, c in EDGE_COLOURS.items())


def _page(heading: str, count: int, legend: str, svg: str, details: dict[str, dict]) -> str:
    """The HTML page around the drawing, with the script that shows a memory's details."""
    width, height = PAGE_WIDTH, PAGE_HEIGHT
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{heading}</title>
<style>
body{{font-family:system-ui,sans-serif;margin:0;display:flex;height:100vh}}
#graph{{flex:1}} #panel{{width:340px;padding:12px;border-left:1px solid #ddd;overflow:auto;font-size:13px}}
text{{font-size:10px;fill:#222;text-anchor:middle;pointer-events:none}} text.edge{{font-size:9px}}
.node{{cursor:pointer}} .legend span{{margin-right:10px;white-space:nowrap}}
.legend i{{display:inline-block;width:10px;height:10px;margin-right:3px;border-radius:5px}}
table{{border-collapse:collapse}} td{{border-bottom:1px solid #eee;padding:2px 4px;vertical-align:top}}
</style></head><body>
<div id="graph"><h3 style="margin:8px 12px">{heading} — {count} memories</h3>
<div class="legend" style="margin:0 12px">{legend} (size = weight, faded = dormant)</div>
<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="18" refY="5" markerWidth="6" markerHeight="6" orient="auto">
<path d="M0,0 L10,5 L0,10 z" fill="#888"/></marker></defs>
{svg}
</svg></div>
<div id="panel"><b>Click a memory</b> to see its content and audit history.</div>
<script>
const details = {json.dumps(details, ensure_ascii=False)};
function esc(s) {{ return String(s).replace(/[&<>]/g, c => ({{'&':'&amp;','<':'&lt;','>':'&gt;'}})[c]); }}
function show(id) {{
  const d = details[id];
  if (!d) return;
  const rows = d.history.map(h => `<tr><td>${{h.turn ?? ''}}</td><td>${{h.old === null ? 'new' : h.old.toFixed(3)}}`
    + ` → ${{h.new.toFixed(3)}}</td><td>${{esc(h.agent)}}</td><td>${{esc(h.reason)}}</td></tr>`).join('');
  document.getElementById('panel').innerHTML = `<b>${{esc(d.type)}}</b> · ${{esc(d.domain || '')}} · w=${{d.weight}}`
    + (d.dormant ? ' · dormant' : '') + `<p>${{esc(d.content)}}</p><b>History</b>`
    + `<table><tr><td>turn</td><td>weight</td><td>agent</td><td>reason</td></tr>${{rows}}</table>`;
}}
document.querySelectorAll('.node').forEach(g => g.addEventListener('click', () => show(g.dataset.id)));
if (location.hash) show(decodeURIComponent(location.hash.slice(1)));
</script></body></html>
"""


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
