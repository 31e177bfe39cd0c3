"""`langgraph dev` with PCM's custom auth: the memory a run reads and writes is the
authenticated user's, whatever `user_id` the input names; threads belong to their creator."""

import json
import sqlite3
from contextlib import closing

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import NotFoundError
from servers import ROOT, langgraph_dev

from pcm.world.knowledge_graph import user_key

TOKENS = {"token-of-alice": "alice", "token-of-bob": "bob"}


def memory_contents(data_dir, user: str) -> list[str]:
    """Every stored memory of `user`, read from the graph store itself."""
    path = data_dir / "memory.sqlite"
    if not path.exists():
        return []
    with closing(sqlite3.connect(path)) as connection:
        rows = connection.execute("SELECT attrs FROM pcm_nodes WHERE user_key = ?", (user_key(user),)).fetchall()
    return [json.loads(attrs)["content"] for (attrs,) in rows]


def test_user_b_cannot_read_or_write_user_a_memory_by_naming_a(tmp_path):
    config = tmp_path / "langgraph.json"
    config.write_text(
        json.dumps(
            {
                "dependencies": [str(ROOT)],
                "graphs": {"pcm": f"{ROOT}/pcm/graph.py:graph"},
                "env": {"PCM_DATA_DIR": str(tmp_path / "data")},
                "auth": {"path": f"{ROOT}/pcm/auth.py:auth", "disable_studio_auth": True},
            }
        )
    )
    with langgraph_dev(
        config, tmp_path, env={"PCM_AUTH_TOKENS": json.dumps(TOKENS), "PCM_STUDIO_USER": "studio"}
    ) as url:
        anonymous = get_sync_client(url=url)
        with pytest.raises(Exception, match="Authorization: Bearer"):  # 401
            anonymous.threads.create()
        alice = get_sync_client(url=url, headers={"Authorization": "Bearer token-of-alice"})
        bob = get_sync_client(url=url, headers={"Authorization": "Bearer token-of-bob"})
        assistant = alice.assistants.search(graph_id="pcm")[0]["assistant_id"]

        alice_thread = alice.threads.create()["thread_id"]
        alice.runs.wait(
            alice_thread,
            assistant,
            raise_error=True,
            input={"user_input": "My locker code is 4711.", "user_id": "alice"},
        )

        bob_thread = bob.threads.create()["thread_id"]
        read = bob.runs.wait(
            bob_thread, assistant, raise_error=True, input={"user_input": "What is my locker code?", "user_id": "alice"}
        )
        bob.runs.wait(
            bob_thread,
            assistant,
            raise_error=True,
            input={"user_input": "I moved to Mars and my locker code is 0000.", "user_id": "alice"},
        )
        assert not any("4711" in m["content"] for m in read["retrieved"])
        own = alice.runs.wait(
            alice_thread, assistant, raise_error=True, input={"user_input": "What is my locker code?", "user_id": "bob"}
        )
        assert any("4711" in m["content"] for m in own["retrieved"])  # what Bob's query would have found

        with pytest.raises(NotFoundError):
            bob.threads.get_state(alice_thread)
        with pytest.raises(Exception, match="404"):
            bob.runs.wait(
                alice_thread,
                assistant,
                input={"user_input": "Read me A's thread.", "user_id": "alice"},
                raise_error=True,
            )
        assert [t["thread_id"] for t in bob.threads.search()] == [bob_thread]
        studio = get_sync_client(url=url, headers={"x-auth-scheme": "langsmith"})  # Studio: PCM_STUDIO_USER
        with pytest.raises(NotFoundError):
            studio.threads.get_state(alice_thread)
        studio_thread = studio.threads.create()["thread_id"]
        peek = studio.runs.wait(
            studio_thread,
            assistant,
            raise_error=True,
            input={"user_input": "What is the locker code of alice?", "user_id": "alice"},
        )
        assert not any("4711" in m["content"] for m in peek["retrieved"])
        alice_window = alice.threads.get_state(alice_thread)["values"]["working_memory"]
        assert [t["content"] for t in alice_window] == ["My locker code is 4711.", "What is my locker code?"]

    alice_memory = memory_contents(tmp_path / "data", "alice")
    bob_memory = memory_contents(tmp_path / "data", "bob")
    assert any("4711" in c for c in alice_memory) and not any("Mars" in c for c in alice_memory)
    assert any("Mars" in c for c in bob_memory) and not any("4711" in c for c in bob_memory)
