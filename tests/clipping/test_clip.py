"""Web clipping (issue #36 point 3): a page served locally clipped into a vault with its image, the
Web Clipper's frontmatter, a failed image kept as its link, the same URL updating its clip, and the guards."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from PIL import Image

from services.clipping.clip import ClipError, clip_url
from services.config import Settings
from services.vault import split_frontmatter
from tests.support.web_pages import Pages, serving

NOW = datetime(2026, 12, 4, 9, 30).astimezone()
ARTICLE = """<!doctype html><html lang="fr"><head><meta charset="utf-8">
<title>Le lombricompostage en appartement</title>
<meta name="author" content="Lucie Martin"><meta name="description" content="Composter sans jardin.">
<meta property="article:published_time" content="2026-10-02"></head><body>
<nav><a href="/">Accueil</a> <a href="/boutique">Boutique</a></nav>
<article><h1>Le lombricompostage en appartement</h1>
<p>Le lombricompostage permet de composter en appartement, même sans balcon : des vers rouges transforment les
épluchures en terreau en quelques semaines.</p>
<img src="/img/vers.png" alt="Des vers rouges dans un bac">
<h2>Ce qu'il faut éviter</h2>
<p>Évitez les agrumes et l'ail, qui acidifient le bac. Le thé de vers se dilue au dixième avant d'arroser.</p>
<img src="/img/absente.png" alt="Une image disparue">
<p>{extra}</p></article><footer>Mentions légales</footer></body></html>"""


def png(color: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), color).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def site() -> Iterator[Pages]:
    with serving() as pages:
        pages.pages["/compost"] = ("text/html; charset=utf-8", ARTICLE.format(extra="Première version.").encode())
        pages.pages["/img/vers.png"] = ("image/png", png("red"))
        pages.pages["/fichier.pdf"] = ("application/pdf", b"%PDF-1.7\n" + b"0" * 1000)
        pages.pages["/vide"] = ("text/html", b"<html><body><nav>Accueil</nav></body></html>")
        yield pages


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    vault = tmp_path / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes" / "Jardin.md").write_text("# Jardin\n\nMes notes.\n", encoding="utf-8")
    return Settings(_env_file=None, vault=vault, data_dir=tmp_path / "data", clip_allow_private=True)


def snapshot(vault: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in vault.rglob("*") if path.is_file()}


def test_a_page_is_clipped_with_its_text_image_and_the_web_clipper_s_frontmatter(
    settings: Settings, site: Pages
) -> None:
    before = snapshot(settings.vault)
    clipped = clip_url(settings, f"{site.url}/compost", NOW)
    assert clipped.relative == "obsirag/clips/2026-12/Le_lombricompostage_en_appartement.md" and not clipped.updated
    meta, error, body = split_frontmatter(clipped.path.read_text(encoding="utf-8"))
    assert error is None and meta["title"] == "Le lombricompostage en appartement"
    assert meta["source"] == f"{site.url}/compost" and meta["author"] == ["[[Lucie Martin]]"]
    assert meta["published"] == "2026-10-02" and meta["created"] == "2026-12-04" and meta["tags"] == ["clippings"]
    assert meta["description"] == "Composter sans jardin."
    assert "des vers rouges transforment" in body and "Boutique" not in body and "Mentions" not in body
    assert "## Ce qu'il faut éviter" in body  # headings kept as Markdown
    (image,) = (settings.vault / "obsirag" / "clips" / "assets").iterdir()
    assert image.suffix == ".png" and image.read_bytes() == site.pages["/img/vers.png"][1]
    assert f"![[obsirag/clips/assets/{image.name}|Des vers rouges dans un bac]]" in body
    assert f"![Une image disparue]({site.url}/img/absente.png)" in body  # failed: its URL kept
    assert clipped.images == 1 and clipped.failed_images == [f"{site.url}/img/absente.png"]
    after = snapshot(settings.vault)
    assert {p: after[p] for p in before} == before  # every file already there, byte for byte
    assert sorted(p.relative_to(settings.vault).parts[0] for p in set(after) - set(before)) == ["obsirag", "obsirag"]


def test_the_same_url_clipped_again_updates_its_clip_and_keeps_when_it_was_first_taken(
    settings: Settings, site: Pages
) -> None:
    first = clip_url(settings, f"{site.url}/compost", NOW)
    site.pages["/compost"] = ("text/html; charset=utf-8", ARTICLE.format(extra="Deuxième version.").encode())
    again = clip_url(settings, f"{site.url}/compost", datetime(2027, 1, 5, 10, 0).astimezone())
    assert again.updated and again.path == first.path
    clips = [p for p in (settings.vault / "obsirag" / "clips").rglob("*.md")]
    assert clips == [first.path]  # one clip per URL
    text = first.path.read_text(encoding="utf-8")
    assert "Deuxième version." in text and "Première version." not in text
    assert yaml.safe_load(text.split("---")[1])["created"].isoformat() == "2026-12-04"
    assert len(list((settings.vault / "obsirag" / "clips" / "assets").iterdir())) == 1  # the same image once


@pytest.mark.parametrize(
    ("path", "says"),
    [("/fichier.pdf", "not a web page (application/pdf)"), ("/vide", "no article text"), ("/absente", "404")],
)
def test_what_is_not_an_article_fails_in_one_line_and_writes_nothing(
    settings: Settings, site: Pages, path: str, says: str
) -> None:
    with pytest.raises(ClipError, match=says.replace("(", r"\(").replace(")", r"\)")):
        clip_url(settings, f"{site.url}{path}", NOW)
    assert not (settings.vault / "obsirag").exists()


def test_only_public_addresses_are_fetched_unless_allowed(settings: Settings, site: Pages) -> None:
    guarded = settings.model_copy(update={"clip_allow_private": False})
    with pytest.raises(ClipError, match="non-public address"):
        clip_url(guarded, f"{site.url}/compost", NOW)
    with pytest.raises(ClipError, match="not a web address"):
        clip_url(settings, "file:///etc/passwd", NOW)
    assert site.asked == []  # nothing was even asked of the local server


def test_an_image_past_the_cap_or_of_another_type_keeps_its_link(settings: Settings, site: Pages) -> None:
    site.pages["/img/vers.png"] = ("text/html", b"<html>pas une image</html>")
    clipped = clip_url(settings.model_copy(update={"clip_image_max_bytes": 10}), f"{site.url}/compost", NOW)
    assert clipped.images == 0 and len(clipped.failed_images) == 2
    assert f"({site.url}/img/vers.png)" in clipped.path.read_text(encoding="utf-8")


def test_the_command_says_what_it_kept_as_links_and_why_a_page_cannot_be_clipped(
    settings: Settings, site: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from workers.cli import main

    monkeypatch.setenv("OBSIRAG_CLIP_ALLOW_PRIVATE", "true")  # the test's pages are on this machine
    where = ["--vault", str(settings.vault), "--data", str(settings.data_dir)]
    done = CliRunner().invoke(main, ["clip", f"{site.url}/compost", *where])
    assert done.exit_code == 0, done.output
    assert done.output.startswith("importé : obsirag/clips/")
    assert "(1 image(s), 1 gardée(s) en lien)" in done.output and "pas encore indexé" in done.output  # no system
    refused = CliRunner().invoke(main, ["clip", f"{site.url}/fichier.pdf", *where])
    assert refused.exit_code == 1 and "not a web page (application/pdf)" in refused.output
