"""PCM, Proactive Cognitive Memory: a surprise-driven, self-evolving long-term memory for LangGraph agents."""

from pcm.config import PCMContext, load_context

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
