"""The chat page: composer, answers streamed over SSE, sources, badges, stop, follow-ups in one thread.

``POST /chat/ask`` answers at once with the question and an empty answer wired to
``GET /chat/stream/<run>`` (htmx's SSE extension), which sends ``sources``, ``token``…, ``done`` and
``end`` events, each an HTML fragment rendered from the same partials as a reopened thread.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from html import escape
from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.params import Body, FromPath, FromQuery
from litestar.response import ServerSentEvent, ServerSentEventMessage, Template
from pydantic import BaseModel

from services.catalog import ConversationsTable
from services.catalog.models import Thread
from services.chat.engine import ChatEvent
from services.chat.websearch import WebSearch
from services.config import Settings
from services.language.detect import detect_language
from services.research.trail import save_research
from web.chat_runs import ChatRun, ChatRuns
from web.page_route import page
from web.rendering import MarkdownRenderer

UrlEncoded = Body(media_type=RequestEncodingType.URL_ENCODED)


class AskForm(BaseModel):
    question: str = ""
    thread_id: str = ""
    use_web: str = ""
    write: str = ""  # « rédiger avec le modèle » ticked
    research: str = ""  # « mode recherche » ticked


class ChatController(Controller):
    path = "/"

    @page("/", sync_to_thread=True)
    def page(
        self,
        conversations: NamedDependency[ConversationsTable],
        renderer: NamedDependency[MarkdownRenderer],
        settings: NamedDependency[Settings],
        web_search: NamedDependency[WebSearch],
        thread: FromQuery[str] = "",
    ) -> Template:
        current = conversations.get_thread(thread) if thread else None
        context = {"active": "chat", "thread": current, "turns": _turns(renderer, current)}
        return Template("chat.html", context={**context, **_web_choice(settings, web_search)})

    @post("/chat/ask", sync_to_thread=True)
    def ask(
        self,
        conversations: NamedDependency[ConversationsTable],
        chat_runs: NamedDependency[ChatRuns],
        data: Annotated[AskForm, UrlEncoded],
    ) -> Response:
        question = data.question.strip()
        if not question:
            return Template("_flash.html", context={"message": "Écrivez une question."}, status_code=422)
        thread_id = data.thread_id.strip()
        if not thread_id or conversations.get_thread(thread_id) is None:
            thread_id = conversations.create_thread(question)
        write = True if data.write else None
        run = chat_runs.create(
            question, thread_id, use_web=bool(data.use_web), write=write, research=bool(data.research)
        )
        headers = {"HX-Replace-Url": f"/?thread={thread_id}"}
        return Template("_pending_turn.html", context={"run": run, "thread_id": thread_id}, headers=headers)

    @get("/chat/stream/{run_id:str}")
    async def stream(
        self,
        chat_runs: NamedDependency[ChatRuns],
        renderer: NamedDependency[MarkdownRenderer],
        request: Request,
        run_id: FromPath[str],
    ) -> ServerSentEvent:
        run = chat_runs.claim(run_id)
        return ServerSentEvent(_sse(chat_runs, renderer, request, run))

    @post("/chat/research/save/{turn_id:int}", sync_to_thread=True, status_code=200)
    def save_research(
        self,
        conversations: NamedDependency[ConversationsTable],
        settings: NamedDependency[Settings],
        turn_id: FromPath[int],
    ) -> Template:
        """The research answer kept as a note under obsirag/research/ (the watcher indexes it)."""
        turn = conversations.get_turn(turn_id)
        if turn is None or turn.research is None:
            return Template(
                "_flash.html", context={"message": "Cette réponse n'est pas une recherche."}, status_code=404
            )
        path = save_research(settings.vault, turn, datetime.now().astimezone(), detect_language(turn.question))
        relative = path.relative_to(settings.vault).as_posix()
        return Template("_research_saved.html", context={"path": relative})

    @post("/chat/stop/{run_id:str}", status_code=200)
    async def stop(self, chat_runs: NamedDependency[ChatRuns], run_id: FromPath[str]) -> str:
        chat_runs.stop(run_id)
        return ""


async def _sse(
    chat_runs: ChatRuns, renderer: MarkdownRenderer, request: Request, run: ChatRun | None
) -> AsyncIterator[ServerSentEventMessage]:
    if run is None:  # a reconnect after the end, or a stale page: say so and let the browser close
        yield _message(request, "done", "_chat_error.html", error="Cette réponse n'est plus disponible.")
        yield ServerSentEventMessage(event="end", data="")
        return
    async for event in chat_runs.events(run):
        for message in _to_messages(renderer, request, run, event):
            yield message
    yield ServerSentEventMessage(event="end", data="")


def _to_messages(
    renderer: MarkdownRenderer, request: Request, run: ChatRun, event: ChatEvent
) -> list[ServerSentEventMessage]:
    if event.kind == "progress":  # the model reads the prompt: minutes on a slow CPU, so say how far it is
        run.reading = True
        return [ServerSentEventMessage(event="progress", data=reading_progress(event.progress or 0.0))]
    if event.kind == "token":
        token = ServerSentEventMessage(event="token", data=f"<span>{escape(event.text)}</span>")
        if run.reading:  # the first token after the prompt
            run.reading = False
            return [ServerSentEventMessage(event="progress", data="Réponse en cours…"), token]
        return [token]
    if event.kind == "sources":
        return [_message(request, "sources", "_sources.html", sources=event.sources)]
    if event.kind == "step" and event.step is not None:  # a research step, as it happens
        return [
            ServerSentEventMessage(
                event="step", data=f'<li class="step step-{event.step.kind}">{escape(event.step.text)}</li>'
            )
        ]
    if event.kind == "error":  # the question stays in its thread: it can be asked again from here
        context = {"error": event.text, "question": run.question, "thread_id": run.thread_id, "use_web": run.use_web}
        context["partial"] = event.partial  # the answer cut midway, kept apart from why it was cut
        return [_message(request, "done", "_chat_error.html", **context)]
    answer = event.answer
    html = renderer.render_answer(answer.answer, answer.sources) if answer else ""
    context = {
        "turn": answer,
        "html": html,
        "stopped": run.stopped,
        "model_ttft_ms": run.model_ttft_ms,
        "thread_id": run.thread_id,
    }
    return [_message(request, "done", "_answer.html", **context)]


def reading_progress(fraction: float) -> str:
    return f"Lecture des extraits… {round(fraction * 100)}\u00a0%"


def _message(request: Request, event: str, template: str, **context: Any) -> ServerSentEventMessage:
    rendered = request.app.template_engine.get_template(template).render(**context)
    return ServerSentEventMessage(event=event, data=rendered)


def _web_choice(settings: Settings, web_search: WebSearch) -> dict[str, Any]:
    """The composer's web opt-in: ticked only when configured so, and naming who would receive the question."""
    return {"web_default": settings.web_search, "web_engine": web_search.engine}


def _turns(renderer: MarkdownRenderer, thread: Thread | None) -> list[dict[str, Any]]:
    if thread is None:
        return []
    return [{"turn": t, "html": renderer.render_answer(t.answer, t.sources)} for t in thread.turns]
