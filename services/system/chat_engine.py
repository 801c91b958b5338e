"""The one factory of the chat engine wired to a running system (the CLI, the web app, the learner)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from services.catalog import Catalog
from services.catalog.problems import Lang
from services.chat.engine import ChatEngine
from services.chat.grounding_check import GenerateFn, generate_through
from services.chat.websearch import WebSearch, make_web_search
from services.config import Settings
from services.llm.models import GenerationRequest, StreamEvent
from services.system.client import SystemClient, SystemNotRunning

StreamFn = Callable[[GenerationRequest], Iterator[StreamEvent]]
NOT_RUNNING = "ObsiRAG is not running: start it with `obsirag up` (or `make run`)"


def build_chat_engine(
    settings: Settings,
    catalog: Catalog | None = None,
    *,
    client: SystemClient | None = None,
    stream: StreamFn | None = None,
    web_search: WebSearch | None = None,
    not_running: str = NOT_RUNNING,
    check: bool = True,
    lang: Lang = "en",
    check_model: GenerateFn | None = None,
) -> ChatEngine:
    """A chat engine that searches through the indexer and generates through the mlx worker.

    ``stream``: how generations are streamed (default: submit, then read the request's stream; the web
    app records its runs, the learner paces its own); ``check``: raise ``SystemNotRunning`` with
    ``not_running`` when the indexer does not run, or with why in ``lang`` when the system runs but cannot
    serve yet (Redis or the indexer restarting: waited for ``search_timeout`` first); ``check_model``: how
    the grounding check's few tokens are generated (default: through ``stream`` when given, its pacing and
    priority, else at chat priority within ``grounding_check_timeout``)."""
    client = client or SystemClient(settings)
    if check and not client.wait_running(settings.search_timeout):
        raise SystemNotRunning(client.unavailable(lang) or not_running)
    generation = client.generation

    def submit_and_stream(request: GenerationRequest) -> Iterator[StreamEvent]:
        return generation.stream(generation.submit(request, watched=True), timeout=settings.llm_timeout_seconds)

    def check_quickly(request: GenerationRequest) -> str:
        return generation.generate(request, timeout=settings.grounding_check_timeout).text

    if check_model is None:
        check_model = generate_through(stream) if stream is not None else check_quickly
    catalog = catalog or Catalog(settings.catalog_path)
    web = web_search or make_web_search(settings)
    # The budget comes from the running worker (its settings, its measured speed), not from this process.
    return ChatEngine(
        settings, client.search, stream or submit_and_stream, web, catalog, worker=generation.state,
        check_model=check_model,
    )  # fmt: skip
