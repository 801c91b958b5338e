"""An answer cut by a failed generation (issue #41.11): its beginning and the error apart, in the chat page and
in ``obsirag ask``."""

from __future__ import annotations

import json

import click
from click.testing import CliRunner
from litestar.testing import TestClient

from services.chat.answer import ChatEvent
from services.chat.prompts import GENERATION_CUT
from workers.cli_output import fail_ask

CUT = ChatEvent(
    kind="error", text=GENERATION_CUT["fr"].format(detail="worker stopped"), partial="Le levain se nourrit <b>"
)


def test_the_chat_page_shows_the_beginning_then_the_error_apart(client: TestClient) -> None:
    template = client.app.template_engine.get_template("_chat_error.html")
    html = template.render(error=CUT.text, partial=CUT.partial, question="Comment nourrir le levain ?")
    begun, alert = html.index("Le levain se nourrit &lt;b&gt;"), html.index('role="alert">Réponse interrompue')
    assert begun < alert and "</p></div>" in html[begun:alert]  # its own block, escaped, before the error
    assert "Le levain" not in template.render(error="La réponse n'a pas pu être générée (x).", partial="")


def test_ask_ends_the_printed_line_before_the_error_and_json_gives_both_apart() -> None:
    @click.command()
    @click.option("--json", "as_json", is_flag=True)
    def ask(as_json: bool) -> None:
        if not as_json:
            click.echo(CUT.partial, nl=False)  # what was streamed before the failure
        fail_ask(CUT, "" if as_json else CUT.partial, as_json)

    printed = CliRunner().invoke(ask, [])
    assert printed.exit_code == 1
    assert printed.stdout == "Le levain se nourrit <b>\n\n"  # the line ended, a blank line, then the error
    assert printed.stderr.startswith("Error: Réponse interrompue") and "worker stopped" in printed.stderr
    as_json = CliRunner().invoke(ask, ["--json"])
    said = json.loads(as_json.stdout)
    assert as_json.exit_code == 1 and said == {"error": CUT.text, "partial_answer": CUT.partial, "cut": True}
