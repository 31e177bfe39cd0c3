"""Where the knowledge-graph page (`pcm.visualize_page`) draws each memory.

Time and structure rather than a spring hairball: memories run left to right in the order they
were written, in one lane per domain; entities sit in a lane of their own on top, so entity hubs
cannot pull the drawing together; a supersession chain keeps one height, so it reads left to
right. Then circles are pushed apart until no two overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from pcm.models import MemoryNode, NodeType

#: the drawing's size (user units) for up to 300 memories; larger memories get a larger drawing
BASE_WIDTH, BASE_HEIGHT, MARGIN = 1100.0, 760.0, 40.0
#: the left margin, where the lanes' names are written
LEFT_MARGIN = 90.0
ENTITY_LANE_HEIGHT, LANE_GAP = 70.0, 10.0
#: the least free space between two circles
NODE_GAP = 2.0


@dataclass
class Layout:
    """Where everything is drawn, in the SVG's user units."""

    width: float
    height: float
    position: dict[str, tuple[float, float]] = field(default_factory=dict)
    radius: dict[str, float] = field(default_factory=dict)
    #: (lane name, top, bottom)
    lanes: list[tuple[str, float, float]] = field(default_factory=list)
    #: (x, date) of the time axis' ticks
    ticks: list[tuple[float, str]] = field(default_factory=list)


def time_order(nodes: list[MemoryNode]) -> list[MemoryNode]:
    """Oldest first by created_at; memories written at the same time keep the order they were written in."""
    position = {n.id: i for i, n in enumerate(nodes)}
    return sorted(nodes, key=lambda n: (n.created_at, position[n.id]))


def _radius(node: MemoryNode, mentions: dict[str, list[str]], count: int) -> float:
    """Weight (entities: how often mentioned) as size; a small memory is drawn larger, up to twice."""
    scale = min(2.0, max(1.0, math.sqrt(150 / max(1, count))))
    if node.type == NodeType.ENTITY:
        return scale * min(13.0, 4.0 + 1.5 * math.sqrt(len(mentions.get(node.id, []))))
    return scale * (3.5 + 7.0 * node.weight)


def layout_memory(nodes: list[MemoryNode], mentions: dict[str, list[str]], chains: list[list[str]]) -> Layout:
    """x = place in time, y = lane of the memory's domain (entities: their own lane on top), then
    circles pushed apart within their lane until no two overlap."""
    memories = time_order([n for n in nodes if n.type != NodeType.ENTITY])
    entities = [n for n in nodes if n.type == NodeType.ENTITY]
    grow = max(1.0, math.sqrt(len(nodes) / 300))
    layout = Layout(BASE_WIDTH * grow, BASE_HEIGHT * grow)
    layout.radius = {n.id: _radius(n, mentions, len(nodes)) for n in nodes}
    span = (LEFT_MARGIN, layout.width - MARGIN)
    step = (span[1] - span[0]) / max(1, len(memories) - 1)
    x = {n.id: span[0] + i * step if len(memories) > 1 else sum(span) / 2 for i, n in enumerate(memories)}
    top = MARGIN
    if entities:
        layout.lanes.append(("entities", top, top + ENTITY_LANE_HEIGHT))
        top += ENTITY_LANE_HEIGHT + LANE_GAP
    layout.lanes += _domain_lanes(memories, top, layout.height - MARGIN)
    lane_of = {name: (low, high) for name, low, high in layout.lanes}
    height = _heights(memories, chains)
    for node in memories:
        low, high = lane_of[_lane_name(node)]
        layout.position[node.id] = (x[node.id], low + height[node.id] * (high - low))
    _place_entities(layout, entities, mentions, x, span)
    for name, low, high in layout.lanes:
        members = [n.id for n in nodes if (_lane_name(n) if n.type != NodeType.ENTITY else "entities") == name]
        _separate(layout, members, low, high, span)
    layout.ticks = _ticks(memories, x)
    return layout


def _lane_name(node: MemoryNode) -> str:
    return node.domain or "no domain"


def _heights(memories: list[MemoryNode], chains: list[list[str]]) -> dict[str, float]:
    """Each memory's height in its lane (0 top, 1 bottom) before circles are pushed apart: a
    low-discrepancy spread, so that memories next in time sit at different heights, except that a
    supersession chain stays at the height of its first memory (where it stays in one lane)."""
    rank: dict[str, int] = {}
    height: dict[str, float] = {}
    lane = {n.id: _lane_name(n) for n in memories}
    for node in memories:
        rank[lane[node.id]] = rank.get(lane[node.id], -1) + 1
        height[node.id] = (0.5 + rank[lane[node.id]] * 0.618034) % 1
    for chain in chains:
        first = next((i for i in chain if i in height), None)
        for node_id in chain:
            if node_id in height and lane[node_id] == lane[first]:
                height[node_id] = height[first]
    return height


def _domain_lanes(memories: list[MemoryNode], top: float, bottom: float) -> list[tuple[str, float, float]]:
    """One lane per domain, the busiest first, each as tall as its share of the memories (at least 40 units)."""
    counts: dict[str, int] = {}
    for node in memories:
        counts[_lane_name(node)] = counts.get(_lane_name(node), 0) + 1
    names = sorted(counts, key=lambda name: (-counts[name], name))
    free = bottom - top - LANE_GAP * max(0, len(names) - 1)
    shares = [max(40.0, free * counts[name] / max(1, len(memories))) for name in names]
    scale = free / sum(shares) if shares else 1.0
    lanes = []
    for name, share in zip(names, shares):
        lanes.append((name, top, top + share * scale))
        top += share * scale + LANE_GAP
    return lanes


def _place_entities(layout: Layout, entities: list[MemoryNode], mentions, x: dict[str, float], span) -> None:
    """Entities in the order of the middle (median time) of their mentions, in two rows, each
    above the middle of its mentions where there is room and shifted aside where hubs would crowd."""
    if not entities:
        return
    _, low, high = layout.lanes[0]

    def middle(entity: MemoryNode) -> float:
        xs = sorted(x[m] for m in mentions.get(entity.id, []) if m in x)
        return xs[len(xs) // 2] if xs else sum(span) / 2

    ordered = sorted(entities, key=lambda e: (middle(e), e.content.lower()))
    spacing = min(60.0, (span[1] - span[0]) / len(ordered))
    places = [middle(e) for e in ordered]
    for i in range(1, len(places)):
        places[i] = max(places[i], places[i - 1] + spacing)
    places[-1] = min(places[-1], span[1] - spacing / 2)
    for i in range(len(places) - 2, -1, -1):
        places[i] = min(places[i], places[i + 1] - spacing)
    for row, (entity, place) in enumerate(zip(ordered, places)):
        layout.position[entity.id] = (place, low + (0.3 if row % 2 == 0 else 0.7) * (high - low))


def _separate(layout: Layout, ids: list[str], low: float, high: float, x_range: tuple[float, float]) -> None:
    """Push apart the circles of one lane until no two are closer than their radii plus NODE_GAP.
    At first mostly vertically (time order stays as it is), then freely where a crowd needs it."""
    if len(ids) < 2:
        return
    xy = np.array([layout.position[i] for i in ids], dtype=float)
    radius = np.array([layout.radius[i] for i in ids])
    need = radius[:, None] + radius[None, :] + NODE_GAP
    tie = np.triu(np.ones((len(ids), len(ids))), 1) - np.tril(np.ones((len(ids), len(ids))), -1)
    for iteration in range(400):
        delta = xy[:, None, :] - xy[None, :, :]
        distance = np.hypot(delta[..., 0], delta[..., 1])
        np.fill_diagonal(distance, np.inf)
        overlap = np.clip(need - distance, 0.0, None)
        if overlap.max() < 1e-3:
            break
        # coincident circles are split vertically, in a fixed direction
        unit = np.where(distance[..., None] > 1e-9, delta / np.maximum(distance, 1e-9)[..., None], 0.0)
        unit[..., 1] += np.where(distance > 1e-9, 0.0, tie)
        push = (unit * (overlap[..., None] * 0.55)).sum(axis=1)
        push[:, 0] *= 0.25 if iteration < 150 else 1.0
        xy += push
        xy[:, 0] = np.clip(xy[:, 0], x_range[0] + radius, x_range[1] - radius)
        xy[:, 1] = np.clip(xy[:, 1], low + radius, high - radius)
    for node_id, (x, y) in zip(ids, xy):
        layout.position[node_id] = (float(x), float(y))


def _ticks(memories: list[MemoryNode], x: dict[str, float], spacing: float = 95.0) -> list[tuple[float, str]]:
    """A date under the first memory of each day, skipping days too close to the last date written."""
    ticks: list[tuple[float, str]] = []
    for node in memories:
        date = day(node.created_at)
        if ticks and (ticks[-1][1] == date or x[node.id] - ticks[-1][0] < spacing):
            continue
        ticks.append((x[node.id], date))
    return ticks


def day(moment: datetime) -> str:
    """The date of a moment, YYYY-MM-DD (what the page shows and filters by)."""
    return moment.date().isoformat()
