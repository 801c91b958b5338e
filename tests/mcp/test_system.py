"""The MCP server through the official ``mcp`` client, over stdio and over HTTP, against the running system.

One session's system (``live``, ``tests/support/live.py``); each transport opens one client session for the module.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from typing import Any

import httpx
import httpx2
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from services.catalog import Catalog
from services.catalog.memory_models import Fact, FactKind, FactSource, FactStatus
from services.chat.prompts import NOT_IN_VAULT
from services.system.history import TaskHistory, TaskRecord
from tests.support.live import MCP_TOKEN, ROOT
from tests.support.system import System, wait_until
from tests.support.web_pages import serving

pytestmark = pytest.mark.e2e

TOOLS = {
    "search",
    "read_note",
    "list_notes",
    "similar_notes",
    "graph_neighbors",
    "entities",
    "ask",
    "recent_changes",
    "memory_recall",
    "clip",
    "make_cards",
}
ATLAS = "Projets/Projet Atlas.md"
TODAY_NOTE = "Journal/Note MCP du jour.md"
OUTSIDE = "refused: {!r} leads outside the vault"


class McpSession:
    """A client session held open in a portal's event loop, called from the (sync) tests."""

    def __init__(self, portal: BlockingPortal, client: Client) -> None:
        self.portal, self.client = portal, client

    def call(self, tool: str, **arguments: Any) -> Any:
        """The tool's structured result; ``AssertionError`` with its message when the tool failed."""
        result = self.portal.call(self.client.call_tool, tool, arguments)
        assert not result.is_error, result.content[0].text
        structured = result.structured_content
        return structured.get("result", structured) if set(structured) == {"result"} else structured

    def error(self, tool: str, **arguments: Any) -> str:
        result = self.portal.call(self.client.call_tool, tool, arguments)
        assert result.is_error, result.structured_content
        return result.content[0].text

    def run(self, method: str, *args: Any) -> Any:
        return self.portal.call(getattr(self.client, method), *args)


@pytest.fixture(scope="module")
def system(live: System) -> System:
    """The live system with a note dated today and a symlink leading out of its vault."""
    vault = live.settings.vault
    now = datetime.now().astimezone()
    note = (
        f"---\ncreated: {now.isoformat()}\ntags: [journal]\n---\n# Note du jour\n\nBranché ObsiRAG sur un client MCP.\n"
    )
    (vault / TODAY_NOTE).write_text(note, encoding="utf-8")
    outside = vault.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text("# Secret\n\nhors du coffre\n", encoding="utf-8")
    (vault / "Lien sortant.md").symlink_to(outside / "secret.md")
    wait_until(lambda: TODAY_NOTE in live.search("Note du jour branché sur MCP"), "today's note indexed")
    catalog, now = Catalog(live.settings.catalog_path), datetime.now(UTC)
    for value, status in (("le thé vert au café", FactStatus.CONFIRMED), ("le thé noir fumé", FactStatus.PENDING)):
        catalog.insert_fact(
            Fact(
                subject="moi",
                predicate="préfère",
                value=value,
                kind=FactKind.PREFERENCE,
                status=status,
                source=FactSource.CHAT,
                source_ref="thread-mcp",
                created_at=now,
                updated_at=now,
                last_seen=now,
            )
        )
    catalog.close()
    return live


def _transport(kind: str, system: System, live_url: str) -> Client:
    if kind == "stdio":
        command = [
            "-m",
            "workers.cli",
            "mcp",
            "--vault",
            str(system.settings.vault),
            "--data",
            str(system.settings.data_dir),
        ]
        return Client(StdioServerParameters(command=sys.executable, args=command, env=system.env, cwd=ROOT))
    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {MCP_TOKEN}"}, timeout=120)
    transport: AbstractAsyncContextManager[Any] = streamable_http_client(
        live_url.rstrip("/") + "/mcp", http_client=http
    )
    return Client(transport, read_timeout_seconds=120)


@pytest.fixture(scope="module", params=["stdio", "http"])
def mcp(request: pytest.FixtureRequest, system: System, live_url: str) -> Iterator[McpSession]:
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_transport(request.param, system, live_url)) as client,
    ):
        yield McpSession(portal, client)


def test_it_lists_its_tools_resources_and_prompts(mcp: McpSession) -> None:
    tools = {tool.name: tool for tool in mcp.run("list_tools").tools}
    assert set(tools) == TOOLS
    assert all(" — " in tool.description and tool.input_schema["properties"] for tool in tools.values())  # EN — FR
    assert tools["read_note"].annotations.read_only_hint and tools["search"].input_schema["required"] == ["query"]
    resources = {r.uri: r for r in mcp.run("list_resources").resources}
    uri = "obsirag://note/Projets/Projet%20Atlas.md"
    assert resources[uri].title == "Projet Atlas" and resources[uri].mime_type == "text/markdown"
    assert "## Objectifs" in mcp.run("read_resource", uri).contents[0].text
    assert {p.name for p in mcp.run("list_prompts").prompts} == {"summarize_note", "related_notes"}
    prompt = mcp.run("get_prompt", "summarize_note", {"path": ATLAS})
    assert "Résume la note" in prompt.messages[0].content.text and "## Objectifs" in prompt.messages[0].content.text


def test_search_finds_a_french_paraphrase_first(mcp: McpSession) -> None:
    found = mcp.call("search", query="comment garder des légumes dans de l'eau salée ?", k=3)
    first = found["results"][0]
    assert first["path"] == "Cuisine/Fermentation des légumes.md"
    assert first["uri"].startswith("obsidian://open?vault=vault&file=Cuisine%2FFermentation") and first["snippet"]


def test_search_this_week_returns_only_notes_of_this_week(mcp: McpSession, system: System) -> None:
    found = mcp.call("search", query="ce que j'ai écrit cette semaine", k=20)
    since, until = datetime.fromisoformat(found["since"]), datetime.fromisoformat(found["until"])
    assert (until - since).days == 7
    paths = [hit["path"] for hit in found["results"]]
    assert TODAY_NOTE in paths
    catalog = Catalog(system.settings.catalog_path)
    try:
        for path in paths:  # a note is in range by its created or its modified date, as the chat filters
            record = catalog.get_note(path)
            assert any(since <= d.astimezone() < until for d in (record.created, record.modified) if d), path
    finally:
        catalog.close()


def test_read_note_gives_one_section_and_refuses_paths_out_of_the_vault(mcp: McpSession) -> None:
    whole = mcp.call("read_note", path=ATLAS)
    section = mcp.call("read_note", path="Projet Atlas", heading="Objectifs")  # by title
    assert section["path"] == ATLAS and section["heading"] == "Objectifs"
    assert section["body"].strip() and section["body"].strip() in whole["body"]
    assert "## Équipe" in whole["body"] and "Équipe" not in section["body"] and "## " not in section["body"]
    assert any(b["path"].startswith("Journal/") for b in whole["backlinks"]) and whole["links"]
    assert OUTSIDE.format("../outside/secret.md") in mcp.error("read_note", path="../outside/secret.md")
    assert "leads outside the vault" in mcp.error("read_note", path="Lien sortant.md")  # a symlink out
    assert "leads outside the vault" in mcp.error("read_note", path="/etc/passwd")


def test_similar_notes_flag_the_linked_ones(mcp: McpSession, system: System) -> None:
    similar = mcp.call("similar_notes", path=ATLAS, k=15)
    assert similar and all(note["path"] != ATLAS for note in similar)
    catalog = Catalog(system.settings.catalog_path)
    try:
        assert [n["linked"] for n in similar] == [catalog.linked(ATLAS, n["path"]) for n in similar]
    finally:
        catalog.close()
    assert any(n["linked"] for n in similar) and any(not n["linked"] for n in similar)


def test_listing_graph_entities_and_recent_changes(mcp: McpSession) -> None:
    page = mcp.call("list_notes", folder="Cuisine", limit=2, sort="title")
    assert page["total"] == 5 and len(page["notes"]) == 2 and page["next_cursor"] == "2"
    rest = mcp.call("list_notes", folder="Cuisine", limit=10, sort="title", cursor=page["next_cursor"])
    assert len(rest["notes"]) == 3 and rest["next_cursor"] is None
    neighbors = mcp.call("graph_neighbors", path=ATLAS, depth=2)
    depths = {n["path"]: n["depth"] for n in neighbors["neighbors"]}
    assert depths and set(depths.values()) == {1, 2}
    assert "Personnes/Claire Dubois.md" in depths
    people = wait_until(lambda: mcp.call("entities", kind="person"), "the NER worker's entities")
    assert people and all(e["kind"] == "person" and e["notes"] for e in people)
    assert TODAY_NOTE in [c["path"] for c in mcp.call("recent_changes", days=1)]


def test_memory_recall_gives_confirmed_facts_with_their_source(mcp: McpSession) -> None:
    found = mcp.call("memory_recall", query="quel thé est-ce que je préfère ?")
    values = [f["value"] for f in found]
    assert "le thé vert au café" in values and "le thé noir fumé" not in values  # a pending fact is not known yet
    fact = found[values.index("le thé vert au café")]
    assert (fact["source"], fact["source_ref"], fact["kind"]) == ("chat", "thread-mcp", "preference")
    assert "le thé vert au café" in [f["value"] for f in mcp.call("memory_recall")]  # the latest, no query
    # No word in common: the running indexer finds the fact by meaning (each fact embedded once, there).
    close = mcp.call("memory_recall", query="quelle boisson chaude me servir au petit-déjeuner ?")
    assert [f["value"] for f in close] == ["le thé vert au café"]


def test_ask_answers_with_sources_and_refuses_what_the_vault_lacks(mcp: McpSession) -> None:
    # Not the browser test's question: its saved conversation, indexed since, would be the main note.
    answer = mcp.call("ask", question="Combien de riverains jardinent avec moi ?")
    assert not answer["refused"] and answer["provenance"] == "vault" and answer["thread_id"]
    assert "Projets/Potager partagé.md" in [s["path"] for s in answer["sources"]] and answer["answer"]
    refusal = mcp.call("ask", question="quelle est la capitale du Pérou ?")
    assert refusal["refused"] and refusal["provenance"] == "none" and not refusal["sources"]
    assert refusal["answer"].startswith(NOT_IN_VAULT["fr"])


def test_clip_fetches_only_public_pages_and_says_why_in_one_line(mcp: McpSession, system: System) -> None:
    clips = system.settings.vault / "obsirag" / "clips"
    before = sorted(clips.rglob("*")) if clips.exists() else []
    with serving() as site:
        site.pages["/page"] = ("text/html", b"<html><body><article><p>Une page locale.</p></article></body></html>")
        refused = mcp.error("clip", url=f"{site.url}/page")
    assert "non-public address" in refused and site.asked == []  # never even asked
    assert "not a web address" in mcp.error("clip", url="file:///etc/passwd")
    assert (sorted(clips.rglob("*")) if clips.exists() else []) == before  # nothing written


def test_make_cards_adds_a_note_s_cards_never_twice(mcp: McpSession, system: System) -> None:
    seen: set[str] = set()
    for name in ("Lexique personnel", "Lexique.md", "Lexique.md"):  # by title, then by path
        made = mcp.call("make_cards", path=name)
        questions = {card["question"] for card in made["cards"]}
        assert not questions & seen and made["method"] == "rules"  # never a card the deck has
        seen |= questions
    assert made["cards"] == [] and made["file"].startswith("obsirag/cards/")  # twelve at a time: all made by now
    assert "::" in (system.settings.vault / made["file"]).read_text(encoding="utf-8")


def test_ask_in_research_mode_gives_its_steps_and_names_what_the_vault_lacks(mcp: McpSession) -> None:
    answer = mcp.call("ask", question="Compare la tarte tatin et l'abonnement Netflix", research=True)
    assert not answer["refused"] and "Cuisine/Tarte tatin.md" in [s["path"] for s in answer["sources"]]
    assert answer["steps"][0].startswith("Plan : 2 sous-question(s)")
    assert "2. rien trouvé pour « l'abonnement Netflix »" in answer["steps"] and "Netflix" in answer["answer"]


def test_every_call_is_in_the_task_history_and_on_the_dashboard(mcp: McpSession, system: System, live_url: str) -> None:
    called = time.time()
    mcp.error("read_note", path="Nulle part.md")

    def failure() -> TaskRecord | None:  # the server's writer thread stores records just after each call
        return next((r for r in mcp_records(system) if r.at >= called and r.kwargs == {"path": "Nulle part.md"}), None)

    failed = wait_until(failure, "the failed call in the task history")
    records = mcp_records(system)
    assert failed.name == "read_note" and failed.status == "error" and "no note" in failed.error
    searched = next(r for r in records if r.name == "search" and r.status == "complete")
    assert searched.duration_ms is not None and searched.duration_ms > 0 and "query" in searched.kwargs
    dashboard = httpx.get(live_url.rstrip("/") + "/admin/live", headers={"accept": "text/html"}).text
    # In French, the tool's own name behind « détails » (web/templates/_details.html).
    assert "<td>clients MCP</td><td>outil MCP <details" in dashboard
    assert "<code>read_note</code></details></td><td>path=Nulle part.md</td>" in dashboard


def mcp_records(system: System) -> list[TaskRecord]:
    return [r for r in TaskHistory(system.redis).recent(200) if r.queue == "mcp"]


def test_http_refuses_a_missing_token_and_a_foreign_origin(system: System, live_url: str) -> None:
    url = live_url.rstrip("/") + "/mcp"
    hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    token = {"authorization": f"Bearer {MCP_TOKEN}"}
    assert httpx.post(url, content=json.dumps(hello), headers=accept).status_code == 401
    wrong = {**accept, "authorization": "Bearer nope"}
    assert httpx.post(url, content=json.dumps(hello), headers=wrong).status_code == 401
    foreign = {**accept, **token, "origin": "http://evil.example"}
    assert httpx.post(url, content=json.dumps(hello), headers=foreign).status_code == 403
    own = {**accept, **token, "origin": live_url.rstrip("/")}
    assert httpx.post(url, content=json.dumps(hello), headers=own).status_code not in (401, 403)
