"""Obsidian link resolution rules (services/vault/links.py)."""

from __future__ import annotations

import unicodedata

import pytest

from services.vault.links import LinkResolver, folder_of, link_key

NOTES = [
    "Atlas.md",
    "Work/Projets/Atlas.md",
    "Work/Meeting.md",
    "Home/Meeting.md",
    "Archive/Old/Meeting.md",
    "Daily/2026-11-29.md",
    "Inbox/Idée.md",
    "My.Note.md",
]


@pytest.fixture
def resolver() -> LinkResolver:
    return LinkResolver(NOTES, {"Work/Meeting.md": ["Standup", "Réunion"]}, ["assets/image.png", "docs/file.pdf"])


def test_exact_path_with_or_without_extension(resolver: LinkResolver) -> None:
    assert resolver.resolve("Work/Projets/Atlas", "Home/Meeting.md") == "Work/Projets/Atlas.md"
    assert resolver.resolve("Work/Projets/Atlas.md", "Home/Meeting.md") == "Work/Projets/Atlas.md"
    assert resolver.resolve("Daily/2026-11-29", "Atlas.md") == "Daily/2026-11-29.md"


def test_exact_match_beats_same_folder(resolver: LinkResolver) -> None:
    # "Atlas" is the vault-relative path of Atlas.md, even from the folder of the other Atlas.
    assert resolver.resolve("Atlas", "Work/Projets/Notes.md") == "Atlas.md"


def test_path_suffix_match(resolver: LinkResolver) -> None:
    assert resolver.resolve("Projets/Atlas", "Home/Meeting.md") == "Work/Projets/Atlas.md"
    assert resolver.resolve("Old/Meeting", "Atlas.md") == "Archive/Old/Meeting.md"


def test_suffix_matches_whole_path_segments_only() -> None:
    resolver = LinkResolver(["Work/BigAtlas.md", "Work/Projets-Atlas.md"])
    assert resolver.resolve("Atlas", "x.md") is None
    assert resolver.resolve("Projets/Atlas", "x.md") is None


def test_ambiguous_name_prefers_source_folder(resolver: LinkResolver) -> None:
    assert resolver.resolve("Meeting", "Home/Journal.md") == "Home/Meeting.md"
    assert resolver.resolve("Meeting", "Work/Todo.md") == "Work/Meeting.md"
    assert resolver.resolve("Meeting", "Archive/Old/Index.md") == "Archive/Old/Meeting.md"


def test_ambiguous_name_then_shortest_then_alphabetical(resolver: LinkResolver) -> None:
    # From elsewhere: Home/Meeting.md and Work/Meeting.md are equally short; "Home" sorts first.
    assert resolver.resolve("Meeting", "Daily/2026-11-29.md") == "Home/Meeting.md"
    shortest = LinkResolver(["Deep/Folder/X.md", "A/X.md"])
    assert shortest.resolve("X", "Elsewhere/n.md") == "A/X.md"


def test_case_insensitive(resolver: LinkResolver) -> None:
    assert resolver.resolve("work/projets/ATLAS", "x.md") == "Work/Projets/Atlas.md"
    assert resolver.resolve("meeting.MD", "Work/n.md") == "Work/Meeting.md"
    assert resolver.resolve("standup", "x.md") == "Work/Meeting.md"


def test_aliases(resolver: LinkResolver) -> None:
    assert resolver.resolve("Standup", "Atlas.md") == "Work/Meeting.md"
    assert resolver.resolve("RÉUNION", "Atlas.md") == "Work/Meeting.md"


def test_note_name_beats_alias() -> None:
    resolver = LinkResolver(["Atlas.md", "Other.md"], {"Other.md": ["Atlas"]})
    assert resolver.resolve("Atlas", "x.md") == "Atlas.md"


def test_ambiguous_alias_uses_the_same_preferences() -> None:
    resolver = LinkResolver(["Z/Long/Note.md", "B/Note2.md"], {"Z/Long/Note.md": ["Hub"], "B/Note2.md": ["hub"]})
    assert resolver.resolve("Hub", "x.md") == "B/Note2.md"
    assert resolver.resolve("Hub", "Z/Long/Other.md") == "Z/Long/Note.md"


def test_nfc_and_nfd_match_both_ways() -> None:
    nfd_path = unicodedata.normalize("NFD", "Inbox/Idée.md")
    resolver = LinkResolver([nfd_path], {nfd_path: [unicodedata.normalize("NFD", "Café")]})
    assert resolver.resolve("Idée", "x.md") == nfd_path  # returns the path as stored
    assert resolver.resolve("Café", "x.md") == nfd_path
    nfc_resolver = LinkResolver(["Inbox/Idée.md"])
    assert nfc_resolver.resolve(unicodedata.normalize("NFD", "idée"), "x.md") == "Inbox/Idée.md"


def test_unicode_case_folding(resolver: LinkResolver) -> None:
    assert resolver.resolve("IDÉE", "x.md") == "Inbox/Idée.md"


def test_same_note_link_resolves_to_source(resolver: LinkResolver) -> None:
    assert resolver.resolve("", "Work/Meeting.md") == "Work/Meeting.md"
    assert resolver.resolve("  ", "Unknown.md") == "Unknown.md"


def test_dangling(resolver: LinkResolver) -> None:
    assert resolver.resolve("Nowhere", "Atlas.md") is None
    assert resolver.resolve("Work/Nowhere", "Atlas.md") is None
    assert resolver.resolve("/", "Atlas.md") is None


def test_dots_in_note_names(resolver: LinkResolver) -> None:
    assert resolver.resolve("My.Note", "x.md") == "My.Note.md"


def test_attachments(resolver: LinkResolver) -> None:
    assert resolver.resolve("image.png", "Work/Meeting.md") == "assets/image.png"
    assert resolver.resolve("assets/IMAGE.png", "x.md") == "assets/image.png"
    assert resolver.resolve("docs/file.pdf", "x.md") == "docs/file.pdf"
    assert resolver.resolve("missing.png", "x.md") is None
    assert LinkResolver(NOTES).resolve("image.png", "x.md") is None


def test_note_beats_attachment_of_the_same_name() -> None:
    resolver = LinkResolver(["Report.md"], attachments=["Report"])
    assert resolver.resolve("Report", "x.md") == "Report.md"


def test_relative_targets() -> None:
    resolver = LinkResolver(["Work/A.md", "Work/Sub/B.md", "Top.md"])
    assert resolver.resolve("./Sub/B", "Work/A.md") == "Work/Sub/B.md"
    assert resolver.resolve("../A", "Work/Sub/B.md") == "Work/A.md"
    assert resolver.resolve("../../Top", "Work/Sub/B.md") == "Top.md"
    assert resolver.resolve("../../../Top", "Work/Sub/B.md") is None


def test_leading_slash_and_spaces() -> None:
    resolver = LinkResolver(["Work/A.md"])
    assert resolver.resolve("/Work/A", "x.md") == "Work/A.md"
    assert resolver.resolve(" A ", "x.md") == "Work/A.md"


def test_same_name_differing_only_by_case_is_deterministic() -> None:
    resolver = LinkResolver(["notes/atlas.md", "notes/Atlas.md"])
    assert resolver.resolve("notes/atlas", "x.md") == resolver.resolve("NOTES/ATLAS", "y.md")


def test_memo_depends_on_source_folder(resolver: LinkResolver) -> None:
    assert resolver.resolve("Meeting", "Work/a.md") == "Work/Meeting.md"
    assert resolver.resolve("Meeting", "Home/a.md") == "Home/Meeting.md"
    assert resolver.resolve("Meeting", "work/b.md") == "Work/Meeting.md"


def test_helpers() -> None:
    assert folder_of("A/B/n.md") == "A/B"
    assert folder_of("n.md") == ""
    assert link_key(" /É/x/ ") == link_key(unicodedata.normalize("NFD", "é/X"))
