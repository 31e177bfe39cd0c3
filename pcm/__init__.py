"""PCM, Proactive Cognitive Memory: a surprise-driven, self-evolving long-term memory for LangGraph agents."""

import os

# torch's OpenMP threads busy-wait after each parallel region (libgomp's default spin count), and
# on a small machine that spinning takes the cores Chroma's query threads need right after the
# query is embedded: at 100k memories a Chroma query took 5-7 ms after an embedding and 2.8 ms
# with a short spin. libgomp reads this once, when torch loads, so it only applies when PCM is
# imported before torch; a value already set is kept.
os.environ.setdefault("GOMP_SPINCOUNT", "10000")

from pcm.config import PCMContext, load_context  # noqa: E402

__all__ = ["PCMContext", "load_context", "build_graph", "PCM", "Services"]
__version__ = "0.1.0"


def __getattr__(name: str):
    """Import the heavy parts (LangGraph, models) only when they are used."""
    if name == "build_graph":
        from pcm.graph import build_graph

        return build_graph
    if name == "PCM":
        from pcm.api import PCM

        return PCM
    if name == "Services":
        from pcm.services import Services

        return Services
    raise AttributeError(name)
