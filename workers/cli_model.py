"""``obsirag model list``: the models in use for each role, and the OpenAI-compatible servers already running on
this machine with their models (issue #33, point 3; pulling and switching come next)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from services.config import Settings
from workers.cli_text import JSON_HELP, Command, Group, example, tr

if TYPE_CHECKING:
    from services.llm.discovery import LocalServer


def register(main: click.Group, common_options: click.decorators.FC) -> None:  # type: ignore[name-defined]
    @main.group(
        cls=Group,
        help=tr(
            "Les modèles : ceux en usage, et les serveurs de modèles déjà lancés sur cette machine.",
            "The models: those in use, and the model servers already running on this machine.",
        ),
    )
    def model() -> None:
        pass

    @model.command(
        "list",
        cls=Command,
        help=tr(
            "Le modèle de chaque rôle (génération, embedding, reranking), puis les serveurs compatibles OpenAI "
            "trouvés sur 127.0.0.1 (Ollama, LM Studio, llama.cpp, vLLM) avec leurs modèles ; rien n'est utilisé "
            "sans ton choix.",
            "Each role's model (generation, embedding, reranking), then the OpenAI-compatible servers found on "
            "127.0.0.1 (Ollama, LM Studio, llama.cpp, vLLM) with their models; none is used unless you choose it.",
        ),
        epilog=example("obsirag model list"),
    )
    @click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
    @common_options
    def listing(settings: Settings, as_json: bool) -> None:
        from services.llm.discovery import find_local_servers

        servers = find_local_servers(settings.llm_local_ports, skip=[settings.port])
        in_use = _in_use(settings)
        if as_json:
            data = {**in_use, "local_servers": [server.model_dump() for server in servers]}
            click.echo(json.dumps(data, ensure_ascii=False, indent=2))
            return
        _print_in_use(settings)
        _print_servers(servers, settings.llm_local_ports)


def local_server_notice(settings: Settings) -> str | None:
    """``obsirag up``'s line when the bundled model (which cannot write) would answer while a model server
    runs on this machine: which one, and where to see how to use it. Nothing changes until the user says."""
    from services.config import BUNDLED_LLM_MODEL
    from services.llm.discovery import find_local_servers

    if settings.llm_backend != "mlx" or settings.llm_model != BUNDLED_LLM_MODEL:
        return None  # a model was chosen: not ours to second-guess
    servers = [s for s in find_local_servers(settings.llm_local_ports, skip=[settings.port]) if s.chat_models]
    if not servers:
        return None
    word = tr("modèle", "model")
    found = ", ".join(f"{s.name} ({len(s.chat_models)} {word}{'s' * (len(s.chat_models) > 1)})" for s in servers)
    return tr(
        f"Serveur de modèles trouvé sur cette machine : {found}. Le modèle intégré ne fait que citer tes notes ; "
        "pour des réponses rédigées par l'un d'eux : `obsirag model list`.",
        f"Model server found on this machine: {found}. The bundled model only quotes your notes; "
        "for answers one of them writes: `obsirag model list`.",
    )


def _in_use(settings: Settings) -> dict[str, object]:
    generation = {"backend": settings.llm_backend, "model": settings.llm_model, "base_url": settings.llm_base_url}
    return {"generation": generation, "embedding": {"model": settings.embedding_model}, "reranking": None}


def _print_in_use(settings: Settings) -> None:
    served = f" ({settings.llm_base_url})" if settings.llm_base_url else ""
    click.echo(tr("En usage :", "In use:"))
    click.echo(tr("  génération : ", "  generation: ") + f"{settings.llm_backend} {settings.llm_model}{served}")
    click.echo(tr("  embedding : ", "  embedding: ") + settings.embedding_model)
    click.echo(tr("  reranking : aucun", "  reranking: none"))


def _print_servers(servers: list[LocalServer], ports: list[int]) -> None:
    if not servers:
        listed = ", ".join(str(port) for port in ports)
        click.echo(
            tr(
                f"Aucun serveur de modèles trouvé sur 127.0.0.1 (ports {listed}).",
                f"No model server found on 127.0.0.1 (ports {listed}).",
            )
        )
        return
    click.echo(tr("Serveurs trouvés sur cette machine :", "Servers found on this machine:"))
    for server in servers:
        click.echo(f"  {server.name} — {server.base_url}")
        click.echo(tr("    chat : ", "    chat: ") + (", ".join(server.chat_models) or "—"))
        click.echo(tr("    embedding : ", "    embedding: ") + (", ".join(server.embedding_models) or "—"))
        if server.chat_models:
            use = (
                f"OBSIRAG_LLM_BACKEND=openai OBSIRAG_LLM_BASE_URL={server.base_url} "
                f"OBSIRAG_LLM_MODEL={server.chat_models[0]} obsirag up"
            )
            click.echo(tr("    pour rédiger avec : ", "    to write with it: ") + use)
