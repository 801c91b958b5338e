"""The mlx worker: the only process that loads an LLM; one consumer thread serves the ``generate`` queue."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import partial

import redis

from services.config import Settings, load_settings
from services.lifeline import watch_parent
from services.llm.backend import Backend
from services.llm.capability import stated_capability
from services.llm.configured_backend import decoding, open_backend
from services.llm.serving import WARM_UP_DISCOUNT, GenerationService, Limits
from services.llm.switching import ModelFollower
from services.system.client import SystemClient
from services.system.generation_client import WORKER_NAME
from services.system.handlers.generator import GenerationHandlers
from services.system.instance import read_instance
from services.system.model_bench import measured_rates
from services.system.queues import Queues
from workers.process import run_until_stopped, setup_logging, start_consumer, stop_on_signals

log = logging.getLogger(__name__)
WARM_UP_WAIT_SECONDS = 30.0  # an indexer that takes longer (a first start's model load) is not waited for
# A stop waits this long for the warm-up's model load or prompt (a few seconds) to end: unloading the model
# under it, or leaving the interpreter while it runs, aborted the process (« terminate called without an active
# exception », 2 stops in 4 right after a start).
WARM_UP_STOP_SECONDS = 15.0


def build_service(
    settings: Settings,
    queues: Queues,
    stop: threading.Event,
    backend: Backend | None = None,
    limits: Limits | None = None,
) -> GenerationService:
    """The service on ``backend`` (default: the configured one) with the worker's limits; waiting chats
    cut into learner generations, and ``stop`` ends a running generation with an error event."""
    client = redis.Redis.from_url(settings.effective_redis_url)
    backend = backend or open_backend(settings)
    backend.decoding = decoding(settings)  # every model decodes with the worker's repetition control
    service = GenerationService(
        backend,
        client,
        settings.llm_idle_unload_seconds,
        limits or worker_limits(settings),
        chats=queues.waiting_chats(),
        stopping=stop,
        capability=stated_capability(settings.llm_can_write, backend.name, backend.model),
    )
    if rates := measured_rates(settings, backend):  # `obsirag model bench` timed this model here
        service.prompt_rate, service.last_tokens_per_s = rates[0] * WARM_UP_DISCOUNT, rates[1]
    return service


def worker_limits(settings: Settings) -> Limits:
    return Limits(
        context_tokens=settings.llm_context_tokens,
        max_tokens=settings.llm_max_tokens,
        target_ttft_seconds=settings.llm_target_ttft_seconds,
        target_answer_seconds=settings.llm_target_answer_seconds,
    )


def serve(settings: Settings, stop: threading.Event, queues: Queues, service: GenerationService) -> None:
    """Serve generations until ``stop`` is set; the model loads on the first request."""
    follower = ModelFollower(settings, service)
    queues.serve(GenerationHandlers(service, follower))
    consumer = start_consumer(queues.hueys["generate"], 1)  # one thread: generations never overlap
    log.info("mlx worker ready: %s backend, model %s", service.backend.name, service.backend.model)
    warming = None
    if settings.llm_warm_up or service.capability.can_write is None:
        warm_up = partial(_warm_up, service, settings.llm_warm_up, _after_the_indexer(settings, stop))
        warming = threading.Thread(target=warm_up, name="warm-up", daemon=True)
        warming.start()

    def tick() -> None:
        follower.follow(wait=False)
        service.unload_if_idle()

    try:
        run_until_stopped(settings, WORKER_NAME, stop, [consumer], details=service.details, tick=tick)
    finally:
        if warming is not None:  # it sees ``stop`` between its steps; one under way finishes
            warming.join(WARM_UP_STOP_SECONDS)
        service.backend.unload()


def _after_the_indexer(settings: Settings, stop: threading.Event) -> Callable[[], object]:
    """What the warm-up waits for first: the indexer's start, when this system's supervisor started one.

    At a start every process loads at once and the processor is the limit (~20 processor-seconds on 2 cores);
    the warm-up's ~5 (the model, a timed prompt) now come after the indexer's start: it beat ~1.8 s sooner,
    the whole restart ~1.5 s sooner (1,000 notes, 2-core AMD EPYC). A question asked meanwhile loads the
    model itself, as without a warm-up."""
    instance = read_instance(settings.data_dir)
    if instance is None or not any(child.name == "indexer" for child in instance.children):
        return lambda: None  # a worker alone, or the indexer on another host
    # Also ends if the supervisor goes, or at a stop.
    return partial(SystemClient(settings).wait_running, WARM_UP_WAIT_SECONDS, stop)


def _warm_up(service: GenerationService, load: bool, wait: Callable[[], object]) -> None:
    """Once ``wait`` returns, load the model (``load``), then settle whether it writes the chat's answers."""
    try:
        wait()
        if load:
            service.warm_up()
        service.check_capability()
    except Exception:  # the first request loads the model (and reports what fails) instead
        log.exception("warming the model up failed")


def main() -> None:
    settings = load_settings()
    setup_logging(settings, WORKER_NAME)
    watch_parent()  # gone with the supervisor, even one killed -9
    stop, queues = stop_on_signals(), Queues(settings)
    serve(settings, stop, queues, build_service(settings, queues, stop))


if __name__ == "__main__":
    main()
