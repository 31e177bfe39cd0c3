"""The knowledge-graph page: one self-contained HTML file (inline SVG, CSS and JS; no network).

`pcm.visualize_layout` places the memories (x = time, one lane per domain, entities on top); this
module draws them as SVG and writes the page around it, with the data its script
(`pcm.visualize_script`: filters, search, zoom, labels that never overlap, the side panel) reads.

Memory content is user data: it is escaped in the SVG (`html.escape`) and in the JSON the script
reads (`<`, `>` and `&` as \\u escapes, so no content can close the script element).
"""

from __future__ import annotations

import html
import json
import math

from pcm.models import SHOWN_TYPES, MemoryEdge, MemoryNode, NodeType
from pcm.visualize_layout import Layout, day, layout_memory, time_order
from pcm.visualize_script import PAGE_SCRIPT, PAGE_STYLE
from pcm.world.knowledge_graph import WeightedKnowledgeGraph

TYPE_COLOURS = {NodeType.FACT.value: "#2a6f97", NodeType.HYPOTHESIS.value: "#e9a23b", NodeType.ENTITY.value: "#6a994e"}
EDGE_COLOURS = {
    "supersedes": "#c0392b",
    "contests": "#8e44ad",
    "derived_from": "#e67e22",
    "supports": "#27ae60",
    "reaffirms": "#16a085",
    "mentions": "#95a5a6",
}
LABEL_CHARS = 42


def memory_html(graph: WeightedKnowledgeGraph, title: str | None = None) -> str:
    """A self-contained interactive page of one user's memory: colour = type, size = weight
    (entities: how often mentioned), faded = dormant, x = time, lanes = domain. Filters by type,
    date, entity and text; `page.html#<memory id>` opens a memory's details, and
    `page.html#type=fact&entity=<name>&q=<text>&from=YYYY-MM-DD&to=YYYY-MM-DD` sets the filters.
    Day nodes are not drawn: time is the x axis, and the date filters select by day."""
    nodes = graph.nodes(types=SHOWN_TYPES)
    edges = [e for e in graph.edges() if e.relation != "said_on"]
    mentions = _mentions(nodes, edges)
    chains = _supersession_chains(nodes, edges)
    layout = layout_memory(nodes, mentions, chains)
    heading = html.escape(title or f"PCM memory of {graph.user_id}")
    drawing = _svg_background(layout) + _svg_edges(edges, layout) + _svg_nodes(graph, nodes, layout, mentions)
    drawing += _svg_labels(nodes)
    data = _page_data(graph, nodes, edges, layout, chains, mentions)
    return _page(heading, len(nodes), _controls(nodes, mentions), drawing, (layout.width, layout.height), data)


def _mentions(nodes: list[MemoryNode], edges: list[MemoryEdge]) -> dict[str, list[str]]:
    """For each entity, the memories that mention it."""
    entities = {n.id for n in nodes if n.type == NodeType.ENTITY}
    mentioned: dict[str, list[str]] = {e: [] for e in entities}
    for edge in edges:
        if edge.relation != "mentions":
            continue
        entity, memory = (edge.target, edge.source) if edge.target in entities else (edge.source, edge.target)
        if entity in entities and memory not in entities:
            mentioned[entity].append(memory)
    return mentioned


def _supersession_chains(nodes: list[MemoryNode], edges: list[MemoryEdge]) -> list[list[str]]:
    """The memories linked by `supersedes`, one list per connected group, older first."""
    parent = {n.id: n.id for n in nodes}

    def root(node_id: str) -> str:
        while parent[node_id] != node_id:
            parent[node_id] = parent[parent[node_id]]
            node_id = parent[node_id]
        return node_id

    linked = set()
    for edge in edges:
        if edge.relation == "supersedes" and edge.source in parent and edge.target in parent:
            parent[root(edge.source)] = root(edge.target)
            linked.update((edge.source, edge.target))
    groups: dict[str, list[str]] = {}
    for node in time_order(nodes):
        if node.id in linked:
            groups.setdefault(root(node.id), []).append(node.id)
    return list(groups.values())


def _page_data(graph, nodes, edges, layout: Layout, chains: list[list[str]], mentions) -> dict:
    """What the page's script reads: each memory's details, position and links; the chains; the view."""
    history: dict[str, list] = {n.id: [] for n in nodes}
    for event in graph.read_audit():
        if event.node_id in history:
            change = {"turn": event.turn, "old": event.old_weight, "new": event.new_weight}
            history[event.node_id].append(change | {"agent": event.agent, "reason": event.reason})
    links: dict[str, list] = {n.id: [] for n in nodes}
    for edge in edges:
        if edge.source in links and edge.target in links:
            links[edge.source].append([edge.relation, edge.target, "out"])
            links[edge.target].append([edge.relation, edge.source, "in"])
    chain_of = {node_id: index for index, chain in enumerate(chains) for node_id in chain}
    entity_of: dict[str, list[str]] = {}
    for entity, members in mentions.items():
        for member in members:
            entity_of.setdefault(member, []).append(entity)
    details = {}
    for node in nodes:
        x, y = layout.position[node.id]
        details[node.id] = {
            "content": node.content,
            "type": node.type.value,
            "domain": node.domain,
            "weight": round(node.weight, 3),
            "dormant": graph.is_dormant(node),
            "date": day(node.created_at),
            "created": node.created_at.isoformat(),
            "speaker": node.source.speaker,
            "x": round(x, 1),
            "y": round(y, 1),
            "r": round(layout.radius[node.id], 1),
            "chain": chain_of.get(node.id, -1),
            "mentions": entity_of.get(node.id, []),
            "links": links[node.id],
            "history": history[node.id],
        }
    return {"nodes": details, "chains": chains, "view": [round(layout.width, 1), round(layout.height, 1)]}


def _svg_background(layout: Layout) -> str:
    """The lanes with their names, and the time axis: a faint line and a date under each tick."""
    svg = []
    for index, (name, top, bottom) in enumerate(layout.lanes):
        fill = "#f4f6f8" if index % 2 == 0 else "#fafbfc"
        svg.append(
            f'<rect class="lane" x="0" y="{top:.1f}" width="{layout.width:.1f}" height="{bottom - top:.1f}" '
            f'fill="{fill}"/><text class="lane-name" x="6" y="{top + 14:.1f}">{html.escape(name)}</text>'
        )
    if layout.lanes:
        top, bottom = layout.lanes[0][1], layout.lanes[-1][2]
        for x, day in layout.ticks:
            svg.append(
                f'<line class="grid" x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}"/>'
                f'<text class="tick" x="{x:.1f}" y="{bottom + 16:.1f}">{day}</text>'
            )
    return '<g id="background">' + "".join(svg) + "</g>"


def _svg_edges(edges: list[MemoryEdge], layout: Layout) -> str:
    """Links between circles' rims. `supersedes` is drawn from the older memory to the newer (the
    arrow at the newer), on top of the rest; `mentions` (hidden until asked for) underneath."""
    drawing_order = {"mentions": 0, "supersedes": 2}
    svg = []
    for edge in sorted(edges, key=lambda e: drawing_order.get(e.relation, 1)):
        if edge.source not in layout.position or edge.target not in layout.position:
            continue
        start, end = (edge.target, edge.source) if edge.relation == "supersedes" else (edge.source, edge.target)
        (x1, y1), (x2, y2) = layout.position[start], layout.position[end]
        length = math.hypot(x2 - x1, y2 - y1)
        near, far = layout.radius[start], layout.radius[end] + 1.0
        if length > near + far:
            along_x, along_y = (x2 - x1) / length, (y2 - y1) / length
            x1, y1, x2, y2 = x1 + along_x * near, y1 + along_y * near, x2 - along_x * far, y2 - along_y * far
        relation = html.escape(edge.relation)
        arrow = f' marker-end="url(#arrow-{relation})"' if edge.relation in EDGE_COLOURS else ""
        svg.append(
            f'<line class="edge" data-relation="{relation}" data-source="{html.escape(edge.source)}" '
            f'data-target="{html.escape(edge.target)}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{EDGE_COLOURS.get(edge.relation, "#999")}"{arrow}><title>{relation} (w={edge.weight:.2f})'
            "</title></line>"
        )
    return '<g id="edges">' + "".join(svg) + "</g>"


def _svg_nodes(graph, nodes: list[MemoryNode], layout: Layout, mentions: dict[str, list[str]]) -> str:
    svg = []
    for node in nodes:
        x, y = layout.position[node.id]
        dormant = " data-dormant" if graph.is_dormant(node) else ""
        svg.append(
            f'<g class="node" data-id="{html.escape(node.id)}" data-type="{node.type.value}"{dormant}>'
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{layout.radius[node.id]:.1f}" '
            f'fill="{TYPE_COLOURS[node.type.value]}"/></g>'
        )
    return '<g id="nodes">' + "".join(svg) + "</g>"


def _svg_labels(nodes: list[MemoryNode]) -> str:
    """One label per memory, hidden; the script shows those it places without overlap."""
    svg = []
    for node in nodes:
        short = node.content[:LABEL_CHARS] + ("…" if len(node.content) > LABEL_CHARS else "")
        entity = " data-entity" if node.type == NodeType.ENTITY else ""
        svg.append(f'<text class="label" data-id="{html.escape(node.id)}"{entity}>{html.escape(short)}</text>')
    return '<g id="labels">' + "".join(svg) + "</g>"


def _controls(nodes: list[MemoryNode], mentions: dict[str, list[str]]) -> str:
    """The filter bar: types, a date range, an entity, a search box, and the zoom buttons."""
    counts = {t.value: sum(1 for n in nodes if n.type == t) for t in NodeType}
    types = "".join(
        f'<label><input type="checkbox" name="type" value="{t}" checked> {t} ({counts[t]})</label>'
        for t in (NodeType.FACT.value, NodeType.HYPOTHESIS.value, NodeType.ENTITY.value)
    )
    dates = sorted(day(n.created_at) for n in nodes) or [""]
    span = f'min="{dates[0]}" max="{dates[-1]}"'
    entities = sorted((n for n in nodes if n.type == NodeType.ENTITY), key=lambda n: n.content.lower())
    options = "".join(
        f'<option value="{html.escape(n.id)}">{html.escape(n.content[:LABEL_CHARS])} '
        f"({len(mentions.get(n.id, []))})</option>"
        for n in entities
    )
    return (
        f'<div id="filters">{types}<label>from <input type="date" id="from" {span}></label>'
        f'<label>to <input type="date" id="to" {span}></label>'
        f'<label>entity <select id="entity"><option value="">any</option>{options}</select></label>'
        '<label><input type="search" id="q" placeholder="search memories"></label>'
        '<label><input type="checkbox" id="show-mentions"> mention and support links</label>'
        '<button type="button" id="reset">reset</button> <span class="zoom">'
        '<button type="button" id="zoom-in" title="zoom in">+</button>'
        '<button type="button" id="zoom-out" title="zoom out">−</button>'
        '<button type="button" id="zoom-fit" title="fit the memories shown">fit</button></span></div>'
    )


def _legend() -> str:
    types = "".join(f'<span><i style="background:{c}"></i>{t}</span>' for t, c in TYPE_COLOURS.items())
    relations = "".join(
        f'<span><i class="line" style="background:{c}"></i>{r}{" (older → newer)" if r == "supersedes" else ""}</span>'
        for r, c in EDGE_COLOURS.items()
    )
    return types + relations + "<span>x = time · lanes = domain · size = weight · faded = dormant</span>"


def _script_json(data: dict) -> str:
    """JSON that is safe inside a <script> element: no content can close it or open a comment."""
    text = json.dumps(data, ensure_ascii=False)
    for character, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(character, escape)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _page(heading: str, count: int, controls: str, drawing: str, view: tuple[float, float], data: dict) -> str:
    """The HTML page around the drawing: filter bar, legend, panel, the data and the script."""
    markers = "".join(
        f'<marker id="arrow-{r}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="4.5" markerHeight="4.5" '
        f'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{c}"/></marker>'
        for r, c in EDGE_COLOURS.items()
    )
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{heading}</title>
<style>{PAGE_STYLE}</style></head><body>
<main id="graph"><header><h3>{heading} — <span id="count" data-visible-count="{count}" data-match-count="0">{count}
memories</span></h3>{controls}<div class="legend">{_legend()}</div></header>
<div id="canvas"><svg id="drawing" viewBox="0 0 {view[0]:.1f} {view[1]:.1f}"
preserveAspectRatio="xMidYMid meet" data-label-overlaps="0" data-labels-shown="0"><defs>{markers}</defs>
{drawing}</svg><div id="tip" hidden></div></div></main>
<aside id="panel"><b>Click a memory</b> to see its content, supersession chain and audit history.
Wheel to zoom, drag to pan, hover for a memory's text.</aside>
<script type="application/json" id="memory-data">{_script_json(data)}</script>
<script>{PAGE_SCRIPT}</script></body></html>
"""
