"""Worker processes for replays that split into independent users (scenarios, LoCoMo conversations).

Spawned, not forked: a forked child would inherit torch's thread pool and any open store. Each
worker runs torch on one thread, because two processes on two cores, each at torch's default of
a thread per core, fight over them (measured: `make test` and scenario replays, see the log).
"""

from __future__ import annotations

import atexit
import functools


@functools.cache
def process_pool(workers: int):
    """One pool per worker count for the whole command, so each process loads the models once."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_one_torch_thread)
    atexit.register(pool.shutdown, cancel_futures=True)
    return pool


def refuse_given_chat_model(services) -> None:
    """A chat model given in code cannot be sent to another process: such a run uses one worker."""
    if services is not None and services.chat_model is not None:
        raise ValueError("a replay with a given chat model runs in one process (workers=1)")


def _one_torch_thread() -> None:
    import torch

    torch.set_num_threads(1)
