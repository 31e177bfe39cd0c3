"""Move a user's memory from the former layout (users/<key>/graph.json and audit.jsonl, one
Chroma collection holding every node) into the graph store, automatically on first open.

The rows are written in one transaction, so a crash leaves the user either unmigrated or
migrated. The vectors already in Chroma are reused (the store's index repair moves them into
the live and dormant collections); entity vectors, which the new layout does not keep, are
removed. The old files are renamed to `*.migrated`, not deleted.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import networkx as nx

from pcm.models import RETRIEVABLE_TYPES, MemoryChange, MemoryNode
from pcm.world.memory_words import stored_words
from pcm.world.persistence import NODE_LINK, row_json
from pcm.world.records import CommitRows, GraphRecords
from pcm.world.text import lexical_terms

logger = logging.getLogger(__name__)


def read_legacy_audit(path: Path) -> list[MemoryChange]:
    """The events of an audit.jsonl file; a line cut short by a crash is skipped."""
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(MemoryChange.model_validate_json(line))
        except ValueError:
            logger.warning("skipping an unreadable audit line in %s", path)
    return events


def migrate_legacy_user(records: GraphRecords, chroma, folder: Path, user_id: str, key: str) -> bool:
    """Migrate `folder` if it holds a graph.json; True if it did."""
    graph_path = folder / "graph.json"
    if not graph_path.exists():
        return False
    retrievable = {t.value for t in RETRIEVABLE_TYPES}
    graph = nx.node_link_graph(json.loads(graph_path.read_text(encoding="utf-8")), directed=True, **NODE_LINK)
    if records.user(key) is None:
        rows = CommitRows()
        for order, (node_id, attrs) in enumerate(graph.nodes(data=True)):
            MemoryNode.model_validate(attrs)
            words = lexical_terms(attrs["content"]) if attrs["type"] in retrievable else []
            rows.nodes.append((node_id, order, row_json(attrs), stored_words(words)))
        rows.edges = [(s, t, row_json(a)) for s, t, a in graph.edges(data=True)]
        rows.events = [
            (e.node_id, e.timestamp.timestamp(), e.model_dump_json()) for e in read_legacy_audit(folder / "audit.jsonl")
        ]
        records.commit(key, user_id, rows, indexed_seq=0)
        logger.info("migrated %d memories of %s from %s", graph.number_of_nodes(), key, graph_path)
    others = [i for i, a in graph.nodes(data=True) if a["type"] not in retrievable]
    if others:
        with chroma.writing():
            chroma.client.get_or_create_collection(
                name=key, embedding_function=None, metadata={"hnsw:space": "cosine"}
            ).delete(ids=others)
    for name in ("audit.jsonl", "graph.json"):
        if (folder / name).exists():
            (folder / name).replace(folder / f"{name}.migrated")
    return True
