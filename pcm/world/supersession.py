"""Which supersessions still stand.

A correction links the new fact to each memory it contradicts (`supersedes`) and decays them. A
later turn routed to maintenance that the relation model judges, with P(consistent) of at least
`reaffirm_threshold`, to confirm a superseded memory overturns the supersession: the observation is
linked to the memory (`reaffirms`) and the memory gets back the weight it had before (implicit
verification, `pcm.evolution.maintenance`). Nothing is deleted: the `supersedes` link stays in the
graph and in the audit log, and `as_of` views before the reaffirmation still see it stand.
"""

from __future__ import annotations

from collections.abc import Mapping

SUPERSEDES = "supersedes"
REAFFIRMS = "reaffirms"


def standing_supersessions(graph, node_id: str) -> list[tuple[str, Mapping]]:
    """(successor, edge attributes) of the `supersedes` links into `node_id` that no later
    `reaffirms` link has overturned. Later means written later (`insertion_order` of the link's
    source, the turn's own memory): turns of one session may share a timestamp. `graph`: a
    WeightedKnowledgeGraph or an as-of view of one."""
    superseding = graph.in_edges(node_id, SUPERSEDES)
    if not superseding:
        return []
    latest = max((graph.insertion_order(source) for source, _ in graph.in_edges(node_id, REAFFIRMS)), default=-1)
    return [(source, attrs) for source, attrs in superseding if graph.insertion_order(source) > latest]
