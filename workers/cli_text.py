"""The command line's one language (#39.6): French, as the web UI, or English with ``OBSIRAG_LANGUAGE=en``.

A message is written in both languages where it is said, ``tr("…", "…")`` with French first: nothing to look
up elsewhere, and a message without its other half shows in review. The language is read once, at import:
click writes each command's help when the command is declared.

Click's own frame goes through ``Group`` and ``Command`` below: « Utilisation : », the section headings, the help
option, « Erreur : » and the hint after a usage error. The details click words itself (« Missing argument »,
« Invalid value for … ») stay in English: click ships no French catalogue.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from services.config import Language, configured_language

LANG: Language = configured_language()

FRENCH_HEADINGS = {"Options": "Options", "Commands": "Commandes", "Positional arguments": "Arguments"}


def tr(fr: str, en: str) -> str:
    """``fr`` or ``en``, in the CLI's language."""
    return en if LANG == "en" else fr


def example(command: str) -> str:
    """A command's help ends with one example (shown after its options)."""
    return tr(f"Exemple : {command}", f"Example: {command}")


JSON_HELP = tr("Affiche du JSON.", "Print JSON.")
NOW_METAVAR = tr("DATE_HEURE", "DATETIME")
NOW_HELP = tr(
    "Fait comme s'il était cette heure locale (ISO 8601), par exemple pour rejouer une semaine.",
    "Act as if it were this local time (ISO 8601), e.g. to replay a week.",
)


class Formatter(click.HelpFormatter):
    def write_heading(self, heading: str) -> None:
        self.write(f"{'':>{self.current_indent}}{heading}{tr(' :', ':')}\n")

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        super().write_usage(prog, args, prefix if prefix is not None else tr("Utilisation : ", "Usage: "))

    @contextmanager
    def section(self, name: str) -> Iterator[None]:
        with super().section(tr(FRENCH_HEADINGS.get(name, name), name)):
            yield


class Context(click.Context):
    formatter_class = Formatter


def _help_option(option: click.Option | None) -> click.Option | None:
    if option is not None:
        option.help = tr("Affiche cette aide, puis quitte.", "Show this message and exit.")
    return option


class Command(click.Command):
    context_class = Context

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("options_metavar", "[OPTIONS]")  # the same word in both languages
        super().__init__(*args, **kwargs)

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        return _help_option(super().get_help_option(ctx))


class Group(click.Group):
    """``obsirag`` and its sub-groups: their commands get ``Command``, their errors are said in the CLI's language."""

    context_class = Context
    command_class = Command
    group_class = type  # a sub-group is a ``Group`` too

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("subcommand_metavar", tr("COMMANDE [ARGUMENTS]...", "COMMAND [ARGS]..."))
        super().__init__(*args, **kwargs)

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        return _help_option(super().get_help_option(ctx))

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode or LANG == "en":
            return super().main(*args, standalone_mode=standalone_mode, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as exc:
            show(exc)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Interrompu.", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def show(exc: click.ClickException) -> None:
    """Click's ``show`` in French: the usage line and the hint before a usage error, then « Erreur : … »."""
    if type(exc).show not in (click.ClickException.show, click.UsageError.show):
        exc.show()  # one that says itself (no arguments: the help)
        return
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        hint = ""
        if exc.ctx.command.get_help_option(exc.ctx) is not None:
            hint = f"Essaie « {exc.ctx.command_path} {exc.ctx.help_option_names[0]} » pour l'aide.\n"
        click.echo(f"{exc.ctx.get_usage()}\n{hint}", err=True, color=exc.ctx.color)
    click.echo(f"Erreur : {french_message(exc)}", err=True)


def french_message(exc: click.ClickException) -> str:
    """Click's most met usage errors worded in French; any other as click words it."""
    if isinstance(exc, click.NoSuchOption):
        return f"option inconnue : {exc.option_name}" + (
            f" (voulais-tu {', '.join(exc.possibilities)} ?)" if exc.possibilities else ""
        )
    if not isinstance(exc, click.BadParameter) or exc.param is None:
        return exc.format_message()
    names = exc.param.get_error_hint(exc.ctx).split(" / ") if exc.ctx else []
    hint = " / ".join(f"« {name.strip(chr(39))} »" for name in names)  # click's quotes become guillemets
    if isinstance(exc, click.MissingParameter):
        kind = "argument" if isinstance(exc.param, click.Argument) else "option"
        return f"{kind} manquant{'e' if kind == 'option' else ''} : {hint}"
    return f"valeur invalide pour {hint} : {exc.message}"
