"""``obsirag cards make | review | due``: flashcards from a note, reviewed in the terminal and scheduled by FSRS."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click

from services.config import Settings
from workers.cli_text import JSON_HELP, example, tr

GRADES = {"1": tr("encore", "again"), "2": tr("difficile", "hard"), "3": tr("bien", "good"), "4": tr("facile", "easy")}


def register(main: click.Group, common_options: Any) -> None:
    @main.group(
        help=tr(
            "Cartes de révision tirées de tes notes (obsirag/cards/, lisibles par le module Spaced Repetition), "
            "planifiées par FSRS.",
            "Study cards from your notes (obsirag/cards/, readable by the Spaced Repetition plugin), scheduled "
            "by FSRS.",
        )
    )
    def cards() -> None:
        pass

    @cards.command(
        "make",
        help=tr(
            "Propose des cartes pour une note (le modèle, sinon ses définitions et ses sections) et les ajoute.",
            "Make cards for a note (the model's, else its definitions and sections) and add them.",
        ),
        epilog=example('obsirag cards make "Lexique.md"'),
    )
    @click.argument("path")
    @click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
    @common_options
    def make(settings: Settings, path: str, as_json: bool) -> None:
        from services.catalog import Catalog
        from services.system.cards import make_cards_now

        try:
            made = make_cards_now(settings, Catalog(settings.catalog_path), path)
        except FileNotFoundError as exc:
            raise click.ClickException(str(exc)) from None
        if as_json:
            data = {"file": made.file, "method": made.method, "cards": [c.__dict__ for c in made.cards]}
            click.echo(json.dumps(data, ensure_ascii=False, indent=2))
            return
        for card in made.cards:
            click.echo(f"- {card.question} → {card.answer}")
        click.echo(
            tr(
                f"{len(made.cards)} carte(s) ajoutée(s) à {made.file}",
                f"{len(made.cards)} card(s) added to {made.file}",
            )
        )

    @cards.command(
        "due",
        help=tr("Les cartes à revoir, et quand.", "The cards due, and when."),
        epilog=example("obsirag cards due"),
    )
    @click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
    @common_options
    def due(settings: Settings, as_json: bool) -> None:
        from services.cards.review import sync_deck
        from services.catalog import Catalog

        catalog, now = Catalog(settings.catalog_path), _now()
        sync_deck(settings, catalog, now)
        rows = catalog.cards()
        if as_json:
            data = [{"id": r.id, "question": r.question, "source": r.source, "due": r.due.isoformat()} for r in rows]
            click.echo(json.dumps({"due_now": sum(r.due <= now for r in rows), "cards": data}, ensure_ascii=False))
            return
        click.echo(
            tr(f"{sum(r.due <= now for r in rows)} à revoir maintenant", f"{sum(r.due <= now for r in rows)} due now")
        )
        for row in rows[:20]:
            click.echo(f"{row.due:%Y-%m-%d %H:%M}  {row.question}")

    @cards.command(
        "review",
        help=tr(
            "Révise les cartes dues : la question, Entrée, la réponse, puis 1 encore · 2 difficile · 3 bien · 4 facile "
            "(u annule la dernière note, q arrête).",
            "Review the due cards: the question, Enter, the answer, then 1 again · 2 hard · 3 good · 4 easy (u undoes "
            "the last grade, q stops).",
        ),
        epilog=example('obsirag cards review --note "Lexique.md"'),
    )
    @click.option(
        "--note",
        "note_path",
        metavar=tr("CHEMIN", "PATH"),
        help=tr("Seulement les cartes de cette note.", "Only this note's cards."),
    )
    @click.option(
        "--tag",
        metavar="TAG",
        default="",
        help=tr("Seulement les cartes des notes de ce tag.", "Only the cards of notes with this tag."),
    )
    @common_options
    def review(settings: Settings, note_path: str | None, tag: str) -> None:
        _review(settings, note_path, tag)


def _review(settings: Settings, note_path: str | None, tag: str = "") -> None:
    from services.cards.review import grade, source_changed, sync_deck, tagged
    from services.catalog import Catalog

    catalog = Catalog(settings.catalog_path)
    sync_deck(settings, catalog, _now())
    reviewed = 0
    while queue := tagged(catalog, catalog.cards(due_before=_now(), source=note_path), tag):
        row = queue[0]
        click.echo(f"\n{row.question}")
        click.prompt(tr("(Entrée : la réponse)", "(Enter: the answer)"), default="", show_default=False)
        click.echo(row.answer)
        if source_changed(settings, row):
            click.echo(tr("à revoir : la source a changé", "to check: its source changed"))
        choice = click.prompt(
            " · ".join(f"{k} {v}" for k, v in GRADES.items()) + " · u · q", type=click.Choice([*GRADES, "u", "q"])
        )
        if choice == "q":
            break
        if choice == "u":
            click.echo(tr("dernière note annulée", "last grade undone") if catalog.undo_last_grade() else "—")
            continue
        grade(catalog, row.id, int(choice), _now())
        reviewed += 1
    click.echo(tr(f"{reviewed} carte(s) revue(s)", f"{reviewed} card(s) reviewed"))


def _now() -> datetime:
    return datetime.now().astimezone()
