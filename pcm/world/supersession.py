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

from pcm.formulas import reaffirmed_weight

SUPERSEDES = "supersedes"
REAFFIRMS = "reaffirms"
#: the start of the audit reason maintenance writes when it reaffirms a superseded memory
REAFFIRMED = "reaffirmed"


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


def weight_before_supersession(graph, node_id: str) -> float | None:
    """The memory's weight just before the first correction that decayed it since it was last
    reaffirmed (None: no correction decayed it), read from its audit history."""
    before = None
    for event in graph.history(node_id):
        if event.agent == "maintenance" and event.reason.startswith(REAFFIRMED):
            before = None
        elif event.agent == "correction" and event.old_weight is not None and before is None:
            before = event.old_weight
    return before


def event_weights(graph, node_ids) -> dict[str, float]:
    """The weight of each superseded memory among `node_ids` with its correction's decay undone
    (`reaffirmed_weight`), as a question asking when something happened reads it: the event keeps its
    date after the state it began has ended ("When did Gina lose her job?" after "running my own biz")."""
    weights = {}
    for node_id in node_ids:
        if standing_supersessions(graph, node_id):
            before = weight_before_supersession(graph, node_id)
            current = graph.attrs(node_id)["weight"]
            weights[node_id] = reaffirmed_weight(current, before if before is not None else current)
    return weights
