"""What one user's memory says about the user as a whole, for the layers above the world model:
who speaks in it, which words are informative, how well consecutive facts agree in domain, and
how the router judged the turns that stated the latest facts. The two measured over the latest
facts are cached until a memory is added or removed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from itertools import islice

from pcm.formulas import domain_agreement
from pcm.models import NodeType
from pcm.world.graph_model import GraphModel
from pcm.world.text import lexical_forms

#: the latest facts over which `domain_agreement` is measured
AGREEMENT_WINDOW = 1000


class GraphStatistics:
    """Statistics of one memory's graph `model`, read under the memory's `lock`."""

    def __init__(self, model: GraphModel, lock: threading.RLock):
        self.model = model
        self.lock = lock
        self._agreement: tuple[tuple[int, int], float] | None = None
        self._posteriors: tuple[tuple[int, int], list[list[float]]] | None = None

    def _version(self) -> tuple[int, int]:
        """Changes whenever a memory is added or removed."""
        return len(self.model.graph), self.model.next_order

    def speakers(self) -> list[str]:
        """Everyone whose words this memory holds (speakers of its retrievable memories)."""
        with self.lock:
            return [speaker for speaker, count in self.model.speakers.items() if count > 0]

    def informative_words(self, words: Iterable[str], max_share: float = 0.05) -> set[str]:
        """The words that few memories contain: in at most `max_share` of them (at least 2), so a
        word shared with a memory says something about what it is about ("FastAPI", "pottery"),
        unlike words that half the conversation uses ("great", "thanks")."""
        lexical = self.model.lexical
        limit = max(2.0, max_share * len(lexical))
        words = list(dict.fromkeys(words))
        return {w for w, form in zip(words, lexical_forms(words)) if lexical.document_frequency(form) <= limit}

    def domain_agreement(self) -> float:
        """ι (`pcm.formulas.domain_agreement`) of this memory: how much more often consecutive facts
        of a thread share a domain than chance, over the latest `AGREEMENT_WINDOW` facts (bounded
        cost at any size). Cached until a memory is added or removed."""
        with self.lock:
            key = self._version()
            if self._agreement is not None and self._agreement[0] == key:
                return self._agreement[1]
            nodes = self.model.graph.nodes
            latest = list(islice(reversed(self.model.by_type[NodeType.FACT.value]), AGREEMENT_WINDOW))[::-1]
            pairs, previous = [], {}
            for node_id in latest:
                attrs = nodes[node_id]
                distribution = attrs.get("domain_distribution")
                if not distribution:
                    continue
                thread = (attrs.get("source") or {}).get("thread_id")
                if thread in previous:
                    pairs.append((previous[thread], distribution))
                previous[thread] = distribution
            value = domain_agreement(pairs)
            self._agreement = (key, value)
            return value

    def router_posteriors(self) -> list[list[float]]:
        """The router's class-balanced P(low, medium, high) of the turns that stated the latest
        `AGREEMENT_WINDOW` facts (those that carry one), for the user's own level prior
        (`pcm.formulas.adapted_level_prior`). Cached until a memory is added or removed."""
        with self.lock:
            key = self._version()
            if self._posteriors is None or self._posteriors[0] != key:
                latest = islice(reversed(self.model.by_type[NodeType.FACT.value]), AGREEMENT_WINDOW)
                found = [self.model.graph.nodes[node_id].get("router_posterior") for node_id in latest]
                self._posteriors = (key, [p for p in found if p])
            return self._posteriors[1]
