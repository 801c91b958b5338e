"""``obsirag clip URL``: a web page clipped into the vault by the running system, searchable when it returns."""

from __future__ import annotations

import json

import click

from services.config import Settings
from workers.cli_options import common_options
from workers.cli_text import JSON_HELP, Command, example, tr


@click.command(
    cls=Command,
    help=tr(
        "Importe une page web dans le coffre (obsirag/clips/AAAA-MM/) : son texte en Markdown, ses images à côté ; "
        "rend la main une fois la page indexée. La même adresse met à jour son clip.",
        "Clip a web page into the vault (obsirag/clips/YYYY-MM/): its text as Markdown, its images beside it; "
        "returns once it is indexed. The same URL updates its clip.",
    ),
    epilog=example("obsirag clip https://fr.wikipedia.org/wiki/Lombricompostage"),
)
@click.argument("url")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@common_options
def clip(settings: Settings, url: str, as_json: bool) -> None:
    from services.clipping.clip import ClipError
    from services.system.clip_indexed import clip_and_index

    try:
        clipped, indexed = clip_and_index(settings, url)
    except ClipError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        data = {
            "path": clipped.relative,
            "title": clipped.title,
            "updated": clipped.updated,
            "images": clipped.images,
            "failed_images": clipped.failed_images,
            "indexed": indexed,
        }
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    verb = tr("mis à jour", "updated") if clipped.updated else tr("importé", "clipped")
    images = tr(f"{clipped.images} image(s)", f"{clipped.images} image(s)")
    if clipped.failed_images:
        images += tr(
            f", {len(clipped.failed_images)} gardée(s) en lien", f", {len(clipped.failed_images)} kept as links"
        )
    click.echo(f"{verb} : {clipped.relative} ({images})")
    if not indexed:
        click.echo(tr("pas encore indexé : `obsirag up` l'indexera.", "not indexed yet: `obsirag up` will index it."))
