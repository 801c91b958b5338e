"""``docs/configuration.md``, written from ``Settings`` itself (``make docs``): every ``OBSIRAG_*`` setting's
name, type, default and description, grouped by subject, so that the reference never drifts from the code."""

from __future__ import annotations

import os
import types
import typing
from pathlib import Path
from typing import Any

from dotenv import dotenv_values
from pydantic import BaseModel, SecretStr
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
SECRET_NAMES = ("token", "secret", "api_key", "password")
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


class EffectiveSetting(BaseModel):
    """One line of ``obsirag config``: the value in force and where it came from."""

    name: str  # OBSIRAG_…
    value: str  # secrets masked
    source: str  # "default", "environment", ".env", "command line or the running instance"


def effective_settings(settings: Settings, env_file: Path = Path(".env")) -> list[EffectiveSetting]:
    """Every setting in force, secrets masked, each with its source (read as pydantic-settings reads them:
    the environment wins over ``.env``, which wins over the default)."""
    environment = {k.upper(): v for k, v in os.environ.items()}
    dotenv = {k.upper(): v for k, v in dotenv_values(env_file).items()} if env_file.is_file() else {}
    unflagged = Settings()  # what the environment and .env give, without --vault / --data
    rows = []
    for name in Settings.model_fields:
        variable = f"OBSIRAG_{name.upper()}"
        value = getattr(settings, name)
        if name in ("vault", "data_dir") and value != getattr(unflagged, name):
            source = "command line or the running instance"
        elif variable in environment:
            source = "environment"
        elif variable in dotenv:
            source = ".env"
        else:
            source = "default"
        rows.append(EffectiveSetting(name=variable, value=_masked(name, value), source=source))
    return rows


def _masked(name: str, value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, SecretStr) or name.endswith(SECRET_NAMES):  # said set, never shown
        shown = value.get_secret_value() if isinstance(value, SecretStr) else value
        return "********" if shown else ""
    return _shown(value).replace("\\|", "|")


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
