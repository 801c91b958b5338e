"""The Redis side of a generation: one stream of events per request, a cancel flag and an owner marker.

Every key expires, so abandoned requests never fill Redis. A worker refreshes the expiry with each
event; the caller reads the stream from its start, so it may subscribe late without losing tokens.
"""

from __future__ import annotations

import redis

from services.llm.models import StreamEvent

STREAM_KEY = "obsirag:llm:stream:{id}"
CANCEL_KEY = "obsirag:llm:cancel:{id}"
OWNER_KEY = "obsirag:llm:owner:{id}"
CALLER_KEY = "obsirag:llm:caller:{id}"
TTL_SECONDS = 900
CALLER_TTL_MS = 1200  # a watched request whose caller stopped refreshing this long ago is abandoned
FIELD = "e"


def stream_key(request_id: str) -> str:
    return STREAM_KEY.format(id=request_id)


def request_cancel(client: redis.Redis, request_id: str) -> None:
    client.set(CANCEL_KEY.format(id=request_id), 1, ex=TTL_SECONDS)


def is_cancelled(client: redis.Redis, request_id: str) -> bool:
    return bool(client.exists(CANCEL_KEY.format(id=request_id)))


def caller_alive(client: redis.Redis, request_id: str) -> None:
    """The caller is still waiting (refreshed while it reads the stream; gone soon after it dies)."""
    client.set(CALLER_KEY.format(id=request_id), 1, px=CALLER_TTL_MS)


def mark_owner(client: redis.Redis, request_id: str, instance: str) -> None:
    """Record which worker process took the request: its caller can tell when that process dies."""
    client.set(OWNER_KEY.format(id=request_id), instance, ex=TTL_SECONDS)


def owner(client: redis.Redis, request_id: str) -> str | None:
    value = client.get(OWNER_KEY.format(id=request_id))
    return value.decode() if value is not None else None


def publish(client: redis.Redis, request_id: str, event: StreamEvent, watched: bool = False) -> bool:
    """Append ``event`` in one round trip; returns whether the caller asked to cancel, or (``watched``)
    stopped refreshing its heartbeat."""
    key = stream_key(request_id)
    pipe = client.pipeline(transaction=False)
    pipe.xadd(key, {FIELD: event.model_dump_json(exclude_defaults=True)})
    pipe.expire(key, TTL_SECONDS)
    pipe.exists(CANCEL_KEY.format(id=request_id))
    pipe.exists(CALLER_KEY.format(id=request_id))
    *_, cancelled, alive = pipe.execute()
    return bool(cancelled) or (watched and not alive)


def read(client: redis.Redis, request_id: str, after: str, block_ms: int | None) -> list[tuple[str, StreamEvent]]:
    """Events after entry id ``after`` (``"0"`` for all), waiting up to ``block_ms`` (None: not at all)."""
    answer = client.xread({stream_key(request_id): after}, block=block_ms)
    if not answer:
        return []
    _key, entries = answer[0]
    return [(_text(entry_id), StreamEvent.model_validate_json(fields[FIELD.encode()])) for entry_id, fields in entries]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
