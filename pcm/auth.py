"""Custom auth for the LangGraph server (`"auth": {"path": "./pcm/auth.py:auth"}` in `langgraph.json`).

Authentication: a bearer token in the `Authorization` header, looked up in
`PCM_AUTH_TOKENS`, a JSON object mapping each token to a user id (from the environment,
`.env` or `langgraph.json`'s `env`; keep the tokens out of the repository). Replace
`authenticate` with your identity provider's check (a JWT verification, for example)
in production; the rest stays.

Studio: `langgraph.json` sets `disable_studio_auth`, so LangGraph's own shortcut (a request
with `x-auth-scheme: langsmith` and no token runs as a shared Studio user) is off and every
request reaches `authenticate`. There, a request with that header and no token is let in
only when the deployment opts in by naming the user Studio runs as in `PCM_STUDIO_USER`
(`make studio` does, for local development) and the request comes from loopback; else it
is refused like any request without a token.

Authorization: every thread, run and cron belongs to the user who created it, and no
one else can read, search, update or run it; assistants (the served graph) are readable
by all and changeable by none. The identity ends up in the run's config
(`langgraph_auth_user`), and PCM's graph then uses it as the user whose memory a turn
reads and writes, whatever `user_id` the input names (`pcm.nodes.turn_user`).
"""

from __future__ import annotations

import hmac
import json
import os

from langgraph_sdk import Auth

auth = Auth()


def _tokens() -> dict[str, str]:
    raw = os.environ.get("PCM_AUTH_TOKENS", "")
    try:
        tokens = json.loads(raw) if raw else {}
    except json.JSONDecodeError:
        raise Auth.exceptions.HTTPException(status_code=500, detail="PCM_AUTH_TOKENS is not a JSON object") from None
    if not isinstance(tokens, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and v for k, v in tokens.items()
    ):
        raise Auth.exceptions.HTTPException(
            status_code=500, detail="PCM_AUTH_TOKENS must map tokens to user ids (strings)"
        )
    return tokens


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def studio_user(headers: dict | None, scope: dict | None) -> str | None:
    """The user a token-less Studio request runs as: `PCM_STUDIO_USER`, for a request with
    `x-auth-scheme: langsmith` from loopback; None otherwise (the request needs a token)."""
    user = os.environ.get("PCM_STUDIO_USER", "").strip()
    if not user or (headers or {}).get(b"x-auth-scheme") != b"langsmith":
        return None
    client = (scope or {}).get("client") or ("", 0)
    return user if client[0] in LOOPBACK else None


@auth.authenticate
async def authenticate(
    authorization: str | None, headers: dict | None = None, scope: dict | None = None
) -> Auth.types.MinimalUserDict:
    scheme, _, token = (authorization or "").partition(" ")
    if not authorization and (user := studio_user(headers, scope)):
        return {"identity": user, "is_authenticated": True}
    if scheme.lower() != "bearer" or not token.strip():
        raise Auth.exceptions.HTTPException(status_code=401, detail="send 'Authorization: Bearer <token>'")
    for known, user_id in _tokens().items():
        if hmac.compare_digest(known.encode(), token.strip().encode()):
            return {"identity": user_id, "is_authenticated": True}
    raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: dict) -> dict:
    """Threads, runs and crons: stamp the creator as owner, and show each user only their own."""
    if isinstance(value, dict):
        if value.get("metadata") is None:
            value["metadata"] = {}
        value["metadata"]["owner"] = ctx.user.identity  # in place: the server keeps this dict
    return {"owner": ctx.user.identity}


@auth.on.assistants.read
@auth.on.assistants.search
async def assistants_are_public(ctx: Auth.types.AuthContext, value: dict) -> bool:
    return True


@auth.on.assistants.create
@auth.on.assistants.update
@auth.on.assistants.delete
async def assistants_are_fixed(ctx: Auth.types.AuthContext, value: dict) -> bool:
    return False


@auth.on.store
async def own_namespace_only(ctx: Auth.types.AuthContext, value: dict) -> None:
    namespace = tuple(value.get("namespace") or ())
    if not namespace or namespace[0] != ctx.user.identity:
        raise Auth.exceptions.HTTPException(status_code=403, detail="store namespaces start with your user id")
