"""A separate process that writes to a PCM data directory, for the crash and concurrency tests.

    python tests/storage_worker.py ingest DATA_DIR FILE       # pcm ingest's loop; "ack <id>" per stored turn
    python tests/storage_worker.py concurrent DATA_DIR NAME N  # 2 threads, N turns each, one user, one thread id
"""

from __future__ import annotations

import sys
import threading

from pcm.api import PCM
from pcm.config import load_context
from pcm.ingest import ingest_turns, read_conversation

USER = "shared"
THREAD = "t"


def context(data_dir: str):
    # the threshold router needs no language model, so a process starts in a few seconds
    return load_context(data_dir=data_dir, router="threshold", lock_timeout=600)


def ingest(data_dir: str, path: str) -> None:
    ctx = context(data_dir)
    pcm = PCM(ctx)
    pcm.services.warm_up()
    turns = read_conversation(path, ctx)
    print("ready", flush=True)
    ingest_turns(pcm, turns, USER, THREAD, on_turn=lambda turn, out: print(f"ack {turn.message_id}", flush=True))
    print("done", flush=True)


def concurrent(data_dir: str, name: str, count: int) -> None:
    pcm = PCM(context(data_dir))
    pcm.services.warm_up()
    errors: list[BaseException] = []

    def writer(index: int) -> None:
        try:
            for n in range(count):
                pcm.process(f"{name} writer {index} note {n}: today I repotted plant number {n} in pot {index}.",
                            user_id=USER, thread_id=THREAD, message_id=f"{name}-{index}-{n}")
        except BaseException as error:  # reported to the test through stdout
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("errors", [repr(e) for e in errors], flush=True)


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "ingest":
        ingest(*args)
    else:
        concurrent(args[0], args[1], int(args[2]))
