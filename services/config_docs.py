"""``docs/configuration.md``, written from ``Settings`` itself (``make docs``): every ``OBSIRAG_*`` setting's
name, type, default and description, grouped by subject, so that the reference never drifts from the code."""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from services.config import Settings

# Each subject starts at its first setting, in the order ``Settings`` declares them.
SUBJECTS = {
    "vault": "Vault, data and storage",
    "embedding_model": "Embedding and chunking",
    "exclude": "Files read, documents and OCR",
    "debounce_seconds": "Indexing and the running system",
    "llm_backend": "Generation",
    "grounding_check": "Grounding and web search",
    "host": "Web UI, MCP and security",
    "ner_model": "Entities and the learner",
    "memory_enabled": "Memory, reminders and briefing",
}
TABLE_HEAD = "| variable | type | default | meaning |\n| --- | --- | --- | --- |"
HEADER = """# Configuration

<!-- Written by `make docs` (services/config_docs.py) from `services/config.py`: edit the field's description
there, never this page. A test fails when this page and the code differ. -->

Every setting is an environment variable `OBSIRAG_<NAME>`, or a line of a `.env` file in the working
directory; command-line flags (`--vault`, `--data`) win over both. Lists take comma-separated values.
"""


def render_configuration() -> str:
    """The whole page, Markdown."""
    lines = [HEADER.rstrip("\n")]
    for name, field in Settings.model_fields.items():
        if name in SUBJECTS:
            lines += [
                "",
                f"## {SUBJECTS[name]}",
                "",
                "| variable | type | default | meaning |",
                "| --- | --- | --- | --- |",
            ]
        lines.append(f"| `OBSIRAG_{name.upper()}` | {_type(field)} | {_default(field)} | {_cell(field)} |")
    return "\n".join(lines) + "\n"


def write_configuration(path: Path) -> bool:
    """Writes the page when it differs; whether it changed."""
    text = render_configuration()
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def _cell(field: FieldInfo) -> str:
    if not field.description:
        raise ValueError("a setting without a description: add one to its Field in services/config.py")
    return field.description.replace("|", "\\|").replace("\n", " ")


def _type(field: FieldInfo) -> str:
    return _name(field.annotation).replace("|", "\\|")


def _name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _name(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_name(a) for a in typing.get_args(annotation) if a is not type(None)) + " (optional)"
    if origin is typing.Literal:
        return " / ".join(f"`{a}`" for a in typing.get_args(annotation))
    if origin is list:
        return f"list of {_name(typing.get_args(annotation)[0])}"
    return {"Path": "path", "SecretStr": "secret", "str": "text", "int": "integer", "float": "number"}.get(
        getattr(annotation, "__name__", str(annotation)), getattr(annotation, "__name__", str(annotation))
    )


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        if field.default_factory_takes_validated_data:
            return "*(computed)*"
        value = field.default_factory()  # type: ignore[call-arg]
        return f"`{_shown(value)}`" if value not in ([], "") else "*(empty)*"
    if field.default is PydanticUndefined or field.default is None:
        return "*(unset)*"
    return f"`{_shown(field.default)}`"


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value.get_secret_value() if hasattr(value, "get_secret_value") else value).replace("|", "\\|")


if __name__ == "__main__":  # make docs
    page = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
    print(f"{page.name}: {'written' if write_configuration(page) else 'already current'}")
