"""services.vault: which files are notes, path safety, and everything read_note extracts."""

from __future__ import annotations

import json
import os
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from services.vault import (
    NoteSkipped,
    PathOutsideVault,
    extract_headings,
    extract_links,
    extract_tags,
    file_hash,
    is_indexable,
    iter_vault_paths,
    read_note,
    resolve_in_vault,
    split_frontmatter,
)
from services.vault.models import NoteType
from services.vault.syntax import WikiLink

MB = 1024 * 1024


def write(vault: Path, rel_path: str, content: str | bytes = "") -> Path:
    path = vault / rel_path
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def note(tmp_path: Path, content: str | bytes, rel_path: str = "note.md", max_bytes: int = 5 * MB):
    write(tmp_path, rel_path, content)
    return read_note(tmp_path, rel_path, max_bytes)


def local_midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day).astimezone()


# --- listing the vault ------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in [
        "b.md",
        "A.md",
        "upper.MD",
        "image.png",
        "notes.txt",
        "Sub/deep/n.md",
        ".obsidian/workspace.md",
        ".trash/old.md",
        ".hidden/x.md",
        "Sub/.dotfile.md",
        "Templates/t.md",
        "Projects/Templates/p.md",
        "Archive/a.md",
        "Projects/Archive/kept.md",
        "Daily/2024/d.md",
        "Daily/top.md",
        "Sub/drawing.excalidraw.md",
        "Sub/draft-1.md",
    ]:
        write(tmp_path, rel, "x")
    return tmp_path


def test_lists_markdown_sorted_and_skips_dot_folders(tree: Path) -> None:
    found = list(iter_vault_paths(tree, []))
    assert found == sorted(found)
    assert "upper.MD" in found and "Sub/deep/n.md" in found
    assert not [p for p in found if p.startswith(".") or "/." in p]
    assert "image.png" not in found and "notes.txt" not in found


@pytest.mark.parametrize(
    ("pattern", "gone", "kept"),
    [
        ("Templates", ["Templates/t.md", "Projects/Templates/p.md"], ["b.md"]),
        ("Templates/", ["Templates/t.md", "Projects/Templates/p.md"], ["b.md"]),
        ("/Archive", ["Archive/a.md"], ["Projects/Archive/kept.md"]),
        ("Daily/**", ["Daily/2024/d.md", "Daily/top.md"], ["b.md"]),
        ("Daily/*.md", ["Daily/top.md"], ["Daily/2024/d.md"]),
        ("Daily/*", ["Daily/top.md", "Daily/2024/d.md"], ["b.md"]),
        ("*.excalidraw.md", ["Sub/drawing.excalidraw.md"], ["Sub/draft-1.md"]),
        ("**/draft-?.md", ["Sub/draft-1.md"], ["Sub/deep/n.md"]),
        ("Sub/**/n.md", ["Sub/deep/n.md"], ["Sub/draft-1.md"]),
        ("[AB].md", ["A.md"], ["b.md"]),
        ("[!A].md", ["b.md"], ["A.md"]),
    ],
)
def test_exclusion_globs(tree: Path, pattern: str, gone: list[str], kept: list[str]) -> None:
    found = list(iter_vault_paths(tree, [pattern]))
    assert not set(gone) & set(found)
    assert set(kept) <= set(found)


def test_is_indexable_agrees_with_the_listing(tree: Path) -> None:
    exclude = ["Templates", "/Archive", "Daily/*.md", "*.excalidraw.md"]
    listed = set(iter_vault_paths(tree, exclude))
    every_file = {p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()}
    assert {p for p in every_file if is_indexable(p, exclude)} == listed


@pytest.mark.parametrize(
    ("rel_path", "expected"),
    [
        ("note.md", True),
        ("Deep/Folder/Note.MD", True),
        ("Sub\\win.md", True),
        ("note.txt", False),
        (".obsidian/x.md", False),
        (".trash/x.md", False),
        ("a/.hidden/x.md", False),
        (".dot.md", False),
        ("../escape.md", False),
        ("a//b.md", False),
        ("", False),
    ],
)
def test_is_indexable(rel_path: str, expected: bool) -> None:
    assert is_indexable(rel_path, []) is expected


def test_symlinks_are_not_followed_out_of_the_vault(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    write(outside, "secret.md", "s")
    write(outside, "dir/inner.md", "s")
    write(vault, "real/n.md", "n")
    (vault / "out_dir").symlink_to(outside / "dir", target_is_directory=True)
    (vault / "in_dir").symlink_to(vault / "real", target_is_directory=True)
    (vault / "out.md").symlink_to(outside / "secret.md")
    (vault / "alias.md").symlink_to(vault / "real" / "n.md")
    assert list(iter_vault_paths(vault, [])) == ["alias.md", "real/n.md"]


# --- path safety ------------------------------------------------------------------------------


def test_resolve_in_vault_accepts_paths_inside(tmp_path: Path) -> None:
    write(tmp_path, "a/n.md", "x")
    assert resolve_in_vault(tmp_path, "a/n.md") == (tmp_path / "a/n.md").resolve()
    assert resolve_in_vault(tmp_path, "a/../a/n.md") == (tmp_path / "a/n.md").resolve()
    assert resolve_in_vault(tmp_path, "missing.md") == tmp_path.resolve() / "missing.md"


@pytest.mark.parametrize(
    "rel_path", ["../outside.md", "a/../../outside.md", "/etc/passwd", "C:\\x.md", "\\\\srv\\x", "a\x00.md"]
)
def test_resolve_in_vault_refuses_escapes(tmp_path: Path, rel_path: str) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    with pytest.raises(PathOutsideVault):
        resolve_in_vault(vault, rel_path)


def test_symlink_escaping_the_vault_is_refused(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    secret = write(tmp_path, "secret.md", "top secret")
    write(vault, "ok.md", "fine")
    (vault / "link.md").symlink_to(secret)
    (vault / "dir").symlink_to(tmp_path, target_is_directory=True)
    for rel_path in ["link.md", "dir/secret.md"]:
        with pytest.raises(PathOutsideVault):
            read_note(vault, rel_path, MB)
    assert issubclass(PathOutsideVault, ValueError)


def test_file_hash_is_sha256_hex() -> None:
    assert file_hash(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


# --- reading: skips and failures --------------------------------------------------------------


def test_oversized_file_is_skipped_with_a_readable_reason(tmp_path: Path) -> None:
    with (tmp_path / "big.md").open("wb") as handle:
        handle.truncate(20 * MB)  # sparse: nothing written
    with pytest.raises(NoteSkipped) as caught:
        read_note(tmp_path, "big.md", 5 * MB)
    assert caught.value.reason == "oversized: 20.0 MB > 5.0 MB limit" == str(caught.value)


def test_file_at_the_limit_is_read(tmp_path: Path) -> None:
    assert note(tmp_path, "x" * 100, max_bytes=100).size == 100


@pytest.mark.parametrize(
    "content",
    [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), b"text\x00text", bytes([1, 2, 3, 4, 5, 6]) * 200],
)
def test_binary_content_is_skipped(tmp_path: Path, content: bytes) -> None:
    with pytest.raises(NoteSkipped, match="binary content"):
        note(tmp_path, content)


def test_a_single_nul_byte_marks_a_file_binary(tmp_path: Path) -> None:
    with pytest.raises(NoteSkipped) as caught:
        note(tmp_path, b"plain text " * 100 + b"\x00" + b"more text")
    assert caught.value.reason == "binary content: NUL bytes in the first 8 KB"


def test_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_note(tmp_path, "gone.md", MB)


def test_folder_named_like_a_note_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "folder.md").mkdir()
    with pytest.raises((NoteSkipped, IsADirectoryError)):
        read_note(tmp_path, "folder.md", MB)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    with pytest.raises(NoteSkipped, match="not a regular file"):
        read_note(tmp_path, "pipe.md", MB)


# --- reading: decoding ------------------------------------------------------------------------


def test_empty_file_is_a_valid_note(tmp_path: Path) -> None:
    parsed = note(tmp_path, b"", "Folder/Empty note.md")
    assert parsed.title == "Empty note"
    assert (parsed.body, parsed.tags, parsed.links, parsed.headings, parsed.frontmatter) == ("", [], [], [], {})
    assert parsed.size == 0 and parsed.content_hash == file_hash(b"")
    assert parsed.path == "Folder/Empty note.md" and parsed.folder == "Folder"


def test_cp1252_file_is_decoded(tmp_path: Path) -> None:
    parsed = note(tmp_path, "# Café “déjà”\n".encode("cp1252"))
    assert parsed.encoding == "cp1252"
    assert parsed.title == "Café “déjà”"


def test_latin1_file_with_bytes_undefined_in_cp1252(tmp_path: Path) -> None:
    parsed = note(tmp_path, b"# Caf\xe9 \x81\n")
    assert parsed.encoding == "latin-1"
    assert parsed.title == "Café \x81"


def test_utf8_bom_is_stripped_and_frontmatter_still_found(tmp_path: Path) -> None:
    parsed = note(tmp_path, b"\xef\xbb\xbf---\ntitle: Bom\n---\nbody\n")
    assert (parsed.encoding, parsed.title, parsed.body) == ("utf-8", "Bom", "body\n")


def test_utf16_with_bom_is_decoded(tmp_path: Path) -> None:
    parsed = note(tmp_path, "# Titre é\n".encode("utf-16"))
    assert (parsed.encoding, parsed.title) == ("utf-16", "Titre é")


def test_crlf_line_ends_are_normalised(tmp_path: Path) -> None:
    parsed = note(tmp_path, b"---\r\ntitle: T\r\n---\r\n# H\r\nline\r\n")
    assert parsed.title == "T" and parsed.body == "# H\nline\n"
    assert parsed.content_hash == file_hash(b"---\r\ntitle: T\r\n---\r\n# H\r\nline\r\n")


def test_stat_fields_come_from_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "n.md", "hello")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    parsed = read_note(tmp_path, "n.md", MB, now=datetime(2030, 1, 1, tzinfo=UTC))
    assert (parsed.size, parsed.mtime, parsed.content_hash) == (5, 1_700_000_000, file_hash(b"hello"))
    assert read_note(tmp_path, "./n.md", MB).path == "n.md"


# --- frontmatter ------------------------------------------------------------------------------


def test_invalid_yaml_is_reported_and_the_body_still_parsed(tmp_path: Path) -> None:
    parsed = note(tmp_path, "---\ntitle: ok\ntags: [a, b\nother: : x\n---\n# Real title\nSee [[Other]] #tag\n")
    assert parsed.frontmatter == {}
    assert parsed.frontmatter_error is not None
    assert parsed.frontmatter_error.startswith("invalid YAML frontmatter: line ")
    assert "\n" not in parsed.frontmatter_error
    assert parsed.body == "# Real title\nSee [[Other]] #tag\n"
    assert parsed.title == "Real title"
    assert parsed.tags == ["tag"] and parsed.links[0].target == "Other"


def test_a_tab_after_a_keys_colon_is_read_and_errors_keep_their_precise_message() -> None:
    """libyaml reads a tab after ``key:`` as the space it separates with (PyYAML's own scanner refused it);
    what libyaml refuses is read again by PyYAML, whose message names the character at fault."""
    assert split_frontmatter("---\ntitle:\tRéunion\n---\nbody") == ({"title": "Réunion"}, None, "body")
    _, error, _ = split_frontmatter("---\nquand: @demain\n---\n")
    assert error == "invalid YAML frontmatter: line 2: found character '@' that cannot start any token"


def test_yaml_error_line_counts_from_the_top_of_the_file() -> None:
    _, error, _ = split_frontmatter("---\ntitle: x\nbad: : here\n---\n")
    assert error == "invalid YAML frontmatter: line 3: mapping values are not allowed here"


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("- a\n- b\n", "got a list"),
        ("just text\n", "got a str"),
        ("d: 2026-13-45\n", "month must be in 1..12"),
        ("a: &x [*x]\n", "too large or too deeply nested"),
    ],
)
def test_frontmatter_that_is_not_a_mapping_is_an_error(yaml_text: str, message: str) -> None:
    frontmatter, error, body = split_frontmatter(f"---\n{yaml_text}---\nbody")
    assert frontmatter == {} and body == "body"
    assert error is not None and error.startswith("invalid YAML frontmatter") and message in error


def test_frontmatter_edge_shapes() -> None:
    assert split_frontmatter("---\n---\nbody") == ({}, None, "body")
    assert split_frontmatter("---\ntitle: x\nno closing line\n") == ({}, None, "---\ntitle: x\nno closing line\n")
    assert split_frontmatter("text\n---\na: 1\n---\n")[0] == {}
    assert split_frontmatter("---\na: 1\n---") == ({"a": 1}, None, "")


def test_frontmatter_values_are_json_safe() -> None:
    frontmatter, error, _ = split_frontmatter("---\ncreated: 2026-03-12\nat: 2026-03-12 10:30:00\n1: one\n---\n")
    assert error is None
    assert frontmatter == {"created": "2026-03-12", "at": "2026-03-12T10:30:00", "1": "one"}
    json.dumps(frontmatter)


def test_title_precedence(tmp_path: Path) -> None:
    assert note(tmp_path, "---\ntitle: From YAML\n---\n# From H1\n").title == "From YAML"
    assert note(tmp_path, "---\ntitle: ''\n---\n## Sub\n# From H1\n# Second\n").title == "From H1"
    assert note(tmp_path, "## Only a level 2\n", "My Stem.md").title == "My Stem"


@pytest.mark.parametrize(
    ("yaml_text", "aliases"),
    [
        ("aliases: [Alpha, Beta, Alpha]\n", ["Alpha", "Beta"]),
        ("aliases: Alpha, Beta\n", ["Alpha", "Beta"]),
        ("alias: Solo\n", ["Solo"]),
        ("aliases:\n  - 'Smith, John'\n  - 42\nalias: Extra\n", ["Smith, John", "42", "Extra"]),
        ("aliases:\n", []),
    ],
)
def test_aliases(tmp_path: Path, yaml_text: str, aliases: list[str]) -> None:
    assert note(tmp_path, f"---\n{yaml_text}---\n").aliases == aliases


# --- tags -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("yaml_text", "tags"),
    [
        ("tags: [Projet, '#idée', area/work/]\n", ["Projet", "idée", "area/work"]),
        ("tags: '#one, two three'\n", ["one", "two", "three"]),
        ("tag: solo\n", ["solo"]),
        ("tags:\n  - a\n  - 2024\n  - A\n", ["a"]),
        ("Tags: [Upper]\n", ["Upper"]),
    ],
)
def test_frontmatter_tags(yaml_text: str, tags: list[str]) -> None:
    frontmatter, _, body = split_frontmatter(f"---\n{yaml_text}---\n")
    assert extract_tags(body, frontmatter) == tags


def test_inline_tags_follow_obsidian_rules() -> None:
    body = (
        "#start then #Tag and #tag again, #123 no, #1a yes, #café/été/ nested, #a-b_c/d\n"
        "(#paren) foo#glued http://example.com/page#frag [x](#anchor) [[#Heading]] &#123; a/#slash\n"
        "# Heading marker\n## Sub #in-heading\n#end.\n"
    )
    tags = extract_tags(body, {})
    assert tags == ["start", "Tag", "1a", "café/été", "a-b_c/d", "paren", "in-heading", "end"]


def test_tags_in_code_are_ignored() -> None:
    body = "Text `#inline-code` and\n```\n#fenced\n```\n~~~ #info-string\n# comment #also\n~~~\n#real\n"
    assert extract_tags(body, {}) == ["real"]


def test_frontmatter_and_inline_tags_dedupe_keeping_first_spelling() -> None:
    assert extract_tags("#Work #new #Area/Sub", {"tags": ["work", "area/sub"]}) == ["work", "area/sub", "new"]


# --- links ------------------------------------------------------------------------------------


def test_every_wikilink_form() -> None:
    body = (
        "[[Plain]] [[Folder/Sub/Note.md]] [[Note#Heading|Shown]] [[Note#^block-1]] [[#Local heading]]\n"
        "![[image.png]] ![[Embedded note#Part]] [[Note#H1#H2]] | [[Table\\|cell]] | [[ ]] [[Spaced | alias ]]\n"
    )
    assert extract_links(body) == [
        WikiLink(target="Plain"),
        WikiLink(target="Folder/Sub/Note"),
        WikiLink(target="Note", heading="Heading", alias="Shown"),
        WikiLink(target="Note", block="block-1"),
        WikiLink(target="", heading="Local heading"),
        WikiLink(target="image.png", embed=True),
        WikiLink(target="Embedded note", heading="Part", embed=True),
        WikiLink(target="Note", heading="H1#H2"),
        WikiLink(target="Table", alias="cell"),
        WikiLink(target="Spaced", alias="alias"),
    ]


def test_markdown_links_to_local_notes() -> None:
    body = (
        "[Other](Other%20note.md) [web](https://example.com/page.md) [img](pic.png) "
        "[deep](Folder/N.md#Some%20heading) ![embed](E.md) [angle](<My note.md>) [blk](B.md#^id)"
    )
    assert extract_links(body) == [
        WikiLink(target="Other note", alias="Other"),
        WikiLink(target="Folder/N", heading="Some heading", alias="deep"),
        WikiLink(target="E", alias="embed", embed=True),
        WikiLink(target="My note", alias="angle"),
        WikiLink(target="B", block="id", alias="blk"),
    ]


def test_links_in_code_are_ignored_and_order_is_kept() -> None:
    body = "[[First]] `[[inline]]`\n```\n[[fenced]]\n```\n[b](B.md) ``[[double `tick`]]`` [[Last]]\n"
    assert [link.target for link in extract_links(body)] == ["First", "B", "Last"]


# --- headings ---------------------------------------------------------------------------------


def test_headings() -> None:
    body = (
        "# Title #\n"
        "text\n"
        "## Section ^sec-id\n"
        "```\n"
        "# not a heading\n"
        "```\n"
        "###### Six `code` ###\n"
        "####### seven\n"
        "#tag-not-heading\n"
        "    # indented code\n"
        "#\n"
        "   ### Indented three\n"
    )
    assert [(h.level, h.text, h.line) for h in extract_headings(body)] == [
        (1, "Title", 0),
        (2, "Section", 2),
        (6, "Six `code`", 6),
        (3, "Indented three", 11),
    ]


def test_heading_lines_are_counted_within_the_body(tmp_path: Path) -> None:
    parsed = note(tmp_path, "---\ntitle: x\n---\nintro\n\n## Part\n")
    assert [(h.text, h.line) for h in parsed.headings] == [("Part", 2)]
    assert parsed.body.split("\n")[2] == "## Part"


def test_fences_in_lists_and_quotes_hide_their_content() -> None:
    body = "- ```\n  # inside\n  ```\n> ```\n> # quoted code\n> ```\n# After\n"
    assert [h.text for h in extract_headings(body)] == ["After"]


# --- dates ------------------------------------------------------------------------------------


def test_dates_from_frontmatter_date_values(tmp_path: Path) -> None:
    parsed = note(tmp_path, "---\ncreated: 2026-03-12\nupdated: 2026-04-01T08:30:00+02:00\n---\n")
    assert parsed.created == local_midnight(date(2026, 3, 12))
    assert parsed.modified == datetime(2026, 4, 1, 8, 30, tzinfo=timezone(timedelta(hours=2)))
    assert parsed.created.tzinfo is not None and parsed.modified.tzinfo is not None


def test_date_key_and_modified_falls_back_to_it(tmp_path: Path) -> None:
    parsed = note(tmp_path, "---\ndate: 2025-12-31 23:15\n---\n")
    expected = datetime(2025, 12, 31, 23, 15).astimezone()
    assert parsed.created == expected == parsed.modified


def test_created_wins_over_date_and_modified_key(tmp_path: Path) -> None:
    parsed = note(tmp_path, "---\ncreated: 2026-01-02\ndate: 2020-01-01\nmodified: '2026-02-03T10:00:00Z'\n---\n")
    assert parsed.created == local_midnight(date(2026, 1, 2))
    assert parsed.modified == datetime(2026, 2, 3, 10, tzinfo=UTC)


def test_file_times_when_frontmatter_has_no_usable_date(tmp_path: Path) -> None:
    path = write(tmp_path, "n.md", "---\ncreated: not a date\nupdated: 2026-02-30\n---\n")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    parsed = read_note(tmp_path, "n.md", MB)
    mtime = datetime.fromtimestamp(1_700_000_000, UTC)
    assert parsed.modified == mtime
    birth = getattr(path.stat(), "st_birthtime", None)
    assert parsed.created == (datetime.fromtimestamp(birth, UTC) if birth else mtime)
    assert parsed.created.tzinfo is not None


def test_invalid_created_falls_back_to_date(tmp_path: Path) -> None:
    parsed = note(tmp_path, "---\ncreated: someday\ndate: 2026-05-06\n---\n")
    assert parsed.created == local_midnight(date(2026, 5, 6)) == parsed.modified


# --- note types -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel_path", "yaml_text", "note_type"),
    [
        ("obsirag/insights/2026/i.md", "", NoteType.INSIGHT),
        ("obsirag/synapses/s.md", "", NoteType.SYNAPSE),
        ("obsirag/synthesis/w.md", "", NoteType.SYNTHESIS),
        ("obsirag/conversations/c.md", "", NoteType.CONVERSATION),
        ("obsirag/briefings/2026-12-01.md", "", NoteType.BRIEFING),
        ("obsirag/assistant/Profil.md", "type: profile\n", NoteType.PROFILE),
        ("obsirag/misc/x.md", "type: insight\n", NoteType.INSIGHT),
        ("obsirag/x.md", "type: Synapse\n", NoteType.SYNAPSE),
        ("obsirag/insights.md", "", NoteType.NOTE),
        ("obsirag/misc/x.md", "type: recipe\n", NoteType.NOTE),
        ("Notes/insights/x.md", "type: insight\n", NoteType.NOTE),
        ("plain.md", "", NoteType.NOTE),
    ],
)
def test_note_types(tmp_path: Path, rel_path: str, yaml_text: str, note_type: NoteType) -> None:
    content = f"---\n{yaml_text}---\n" if yaml_text else "text"
    assert note(tmp_path, content, rel_path).note_type == note_type


# --- a whole note -----------------------------------------------------------------------------


def test_full_note(tmp_path: Path) -> None:
    content = (
        "---\ntitle: Projet Atlas\naliases: [Atlas]\ntags: [projet]\ncreated: 2026-03-01\n---\n"
        "# Atlas\n\nLié à [[Équipe/Alice|Alice]] et ![[schéma.png]]. #projet #suivi/hebdo\n"
    )
    parsed = note(tmp_path, content, "Projets/Atlas.md")
    assert (parsed.title, parsed.aliases, parsed.tags) == ("Projet Atlas", ["Atlas"], ["projet", "suivi/hebdo"])
    assert parsed.links == [WikiLink(target="Équipe/Alice", alias="Alice"), WikiLink(target="schéma.png", embed=True)]
    assert parsed.frontmatter["created"] == "2026-03-01" and parsed.frontmatter_error is None
    assert parsed.body.startswith("# Atlas\n") and parsed.note_type == NoteType.NOTE
    assert parsed.content_hash == file_hash(content.encode())


def test_symlink_loops_neither_list_nor_hang(tmp_path: Path) -> None:
    (tmp_path / "a.md").symlink_to(tmp_path / "b.md")
    (tmp_path / "b.md").symlink_to(tmp_path / "a.md")
    write(tmp_path, "ok.md", "x")
    assert "ok.md" in list(iter_vault_paths(tmp_path, []))
    with pytest.raises((PathOutsideVault, OSError)):
        read_note(tmp_path, "a.md", MB)


def test_exclusions_are_gitignore_lines(tree: Path) -> None:
    found = set(iter_vault_paths(tree, ["Daily/", "!Daily/top.md", "Sub/*", "!Sub/deep/"]))
    assert "Daily/top.md" not in found and "Daily/2024/d.md" not in found  # nothing comes back from an excluded folder
    assert "Sub/deep/n.md" in found and "Sub/draft-1.md" not in found  # a later "!" line keeps a folder again
