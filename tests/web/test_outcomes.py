"""What the page says about the chat's outcome: the « pas sûr » badge, « pourquoi ces sources ? » in French, and
the dashboard's last questions with the outcome and its two numbers (issue #32)."""

from __future__ import annotations

from datetime import UTC, datetime

from litestar.testing import TestClient

from services.catalog import Catalog
from services.catalog.models import AnswerKind, Provenance, Source, Turn
from services.chat.grounding import FEATURES, Evidence, Grounding
from services.chat.outcome import Outcome
from services.chat.prompts import CLOSEST_INTRO
from tests.support.web_app import html


def decision(outcome: Outcome, confidence: float, nearness: float) -> dict[str, object]:
    grounding = Grounding(outcome == Outcome.ANSWER, confidence, Evidence(*[0.5] * len(FEATURES)), outcome=outcome)
    grounding.nearness, grounding.answer_from, grounding.near_from = nearness, 0.65, 0.76
    return grounding.explain()


def test_a_closest_answer_is_marked_not_sure_and_says_why_on_reopening(
    client: TestClient, web_catalog: Catalog
) -> None:
    thread = web_catalog.create_thread("Potager")
    sources = [
        Source(n=1, title="Potager partagé", path="Projets/Potager partagé.md"),
        Source(n=2, title="Accueil", path="Accueil.md"),
    ]
    web_catalog.add_turn(
        Turn(
            thread_id=thread,
            question="Combien de riverains jardinent avec moi ?",
            answer=f"{CLOSEST_INTRO['fr']}\n\n> Nous sommes sept.\n\n— Potager partagé [1]",
            sources=sources,
            provenance=Provenance.VAULT,
            created_at=datetime.now(UTC),
            kind=AnswerKind.CLOSEST,
            grounding=decision(Outcome.CLOSEST, 0.42, 0.81),
        )
    )
    page = html(client, f"/?thread={thread}")
    assert 'class="badge closest"' in page and ">pas sûr<" in page
    assert "Pas sûr : aucune note n'est assez sûre pour répondre (confiance 0,42, réponse à partir de 0,65)" in page
    assert "proximité 0,81, passages montrés à partir de 0,76" in page
    assert "Note principale" not in page.split("Combien de riverains")[-1]  # nothing given as the answer
    dashboard = html(client, "/admin")
    row = dashboard.split("Dernières questions")[1].split("</table>")[0]
    assert "Combien de riverains jardinent avec moi ?" in row and "pas sûr : passages proches" in row
    assert "confiance 0,42 &lt; 0,65 ; proximité 0,81 ≥ 0,76" in row


def test_a_refusal_says_nothing_in_the_vault_is_near(client: TestClient, web_catalog: Catalog) -> None:
    thread = web_catalog.create_thread("Pérou")
    web_catalog.add_turn(
        Turn(
            thread_id=thread,
            question="Quelle est la capitale du Pérou ?",
            answer="Cette information n'est pas dans ton coffre.",
            provenance=Provenance.NONE,
            created_at=datetime.now(UTC),
            kind=AnswerKind.REFUSED,
            grounding=decision(Outcome.REFUSED, 0.02, 0.31),
        )
    )
    page = html(client, f"/?thread={thread}")
    assert "Refus : rien dans ton coffre n'est assez proche de cette question (proximité 0,31" in page
    assert web_catalog.get_thread(thread).turns[0].grounding["outcome"] == "refused"  # kept with the turn
