"""Processes that write to a PCM data directory, for the crash and concurrency tests.

A zygote imports everything once (loading no model), then forks a fresh
process per command, so each of the crash test's 20 victims skips most of the start-up of a
new Python process. Commands on stdin, answers on stdout:

    ingest DATA_DIR FILE LOG        -> "child PID"; the child runs `pcm ingest`'s loop and appends
                                       "ready", "ack <message id>" per turn it stored, "skip <id>"
                                       per turn already stored, "done" to LOG
    concurrent DATA_DIR NAME N LOG  -> "child PID"; the child runs 2 threads of N turns each on one
                                       user and one thread id, and appends "errors [...]" to LOG
    reap PID                        -> "status CODE" (the child's exit status; -9 when killed)
"""

from __future__ import annotations

import os
import sys
import threading
import traceback

USER = "shared"
THREAD = "t"


def context(data_dir: str):
    from pcm.config import load_context

    # the threshold router and the hybrid scorer need no language model
    return load_context(data_dir=data_dir, router="threshold", lock_timeout=600)


def ingest(data_dir: str, path: str, log) -> None:
    from pcm.api import PCM
    from pcm.ingest import ingest_turns, read_conversation

    ctx = context(data_dir)
    pcm = PCM(ctx)
    turns = read_conversation(path, ctx)
    log.write("ready\n")
    ingest_turns(
        pcm,
        turns,
        USER,
        THREAD,
        on_turn=lambda turn, out: log.write(f"{'skip' if out.get('already_stored') else 'ack'} {turn.message_id}\n"),
    )
    log.write("done\n")


def concurrent(data_dir: str, name: str, count: int, log) -> None:
    from pcm.api import PCM

    pcm = PCM(context(data_dir))
    errors: list[str] = []

    def writer(index: int) -> None:
        try:
            for n in range(count):
                pcm.process(
                    f"{name} writer {index} note {n}: today I repotted plant number {n} in pot {index}.",
                    user_id=USER,
                    thread_id=THREAD,
                    message_id=f"{name}-{index}-{n}",
                )
        except BaseException:
            errors.append(traceback.format_exc())

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    log.write(f"errors {errors!r}\n")


def run_child(command: list[str]) -> None:
    with open(command[-1], "a", buffering=1) as log:
        if command[0] == "ingest":
            ingest(command[1], command[2], log)
        else:
            concurrent(command[1], command[2], int(command[3]), log)


def zygote(data_dir: str) -> None:
    # import everything (most of a process's start-up) but load no model and use no thread pool:
    # a child forked after the parent ran inference can inherit a thread pool's locks held, and
    # hang (it did, with the models loaded here); the idle threads that imports start are harmless
    import chromadb  # noqa: F401
    import sentence_transformers  # noqa: F401
    import transformers  # noqa: F401

    import pcm.api  # noqa: F401
    import pcm.ingest  # noqa: F401

    print("zygote ready", flush=True)
    for line in sys.stdin:
        command = line.split()
        if not command:
            continue
        if command[0] == "reap":
            _, status = os.waitpid(int(command[1]), 0)
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            print(f"status {code}", flush=True)
            continue
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                run_child(command)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        print(f"child {pid}", flush=True)


if __name__ == "__main__":
    zygote(sys.argv[1])
