"""Worker processes for replays that split into independent users (scenarios, LoCoMo conversations).

Spawned, not forked: a forked child would inherit torch's thread pool and any open store. Each
worker runs torch on one thread, because two processes on two cores, each at torch's default of
a thread per core, fight over them (measured: `make test` and scenario replays, see the log).
"""

from __future__ import annotations

import atexit
import functools
from collections.abc import Callable

from tqdm import tqdm


@functools.cache
def process_pool(workers: int):
    """One pool per worker count for the whole command, so each process loads the models once."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_one_torch_thread)
    atexit.register(pool.shutdown, cancel_futures=True)
    return pool


def results_in_processes(
    function: Callable,
    tasks: list[tuple],
    workers: int,
    description: str,
    progress: bool,
    sizes: list[int] | None = None,
) -> list:
    """`function(*task)` for each task on `workers` processes, submitted and returned in the order
    given; the progress bar counts `sizes[i]` (default 1) when task i ends."""
    pool = process_pool(workers)
    sizes = sizes or [1] * len(tasks)
    with tqdm(total=sum(sizes), desc=description, disable=None if progress else True) as bar:
        futures = [pool.submit(function, *task) for task in tasks]
        for future, size in zip(futures, sizes):
            future.add_done_callback(lambda _, n=size: bar.update(n))
        return [future.result() for future in futures]


def refuse_given_chat_model(services) -> None:
    """A chat model given in code cannot be sent to another process: such a run uses one worker."""
    if services is not None and services.chat_model is not None:
        raise ValueError("a replay with a given chat model runs in one process (workers=1)")


def _one_torch_thread() -> None:
    import torch

    torch.set_num_threads(1)
