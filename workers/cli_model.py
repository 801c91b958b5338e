"""``obsirag model list``: the models in use for each role, those downloaded, the downloads under way, the
candidates worth pulling on this machine, and the OpenAI-compatible servers already running here with their
models (issue #33). ``pull``, ``use`` and ``remove`` are in ``workers.cli_model_use``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from services.config import Settings, rechosen
from workers.cli_model_use import describe_pull, register_changes, role_word, size_text
from workers.cli_text import JSON_HELP, Command, Group, example, tr

if TYPE_CHECKING:
    from services.llm.discovery import LocalServer
    from services.models.catalog import Candidate
    from services.models.installed import InstalledModel
    from services.models.progress import PullProgress
    from services.system.model_bench import Rates
    from services.system.model_choice import ModelsOverview


def register(main: click.Group, common_options: click.decorators.FC) -> None:  # type: ignore[name-defined]
    @main.group(
        cls=Group,
        help=tr(
            "Les modèles : ceux en usage, les télécharger, en choisir un autre, et les serveurs de modèles déjà "
            "lancés sur cette machine.",
            "The models: those in use, downloading and choosing others, and the model servers already running on "
            "this machine.",
        ),
    )
    def model() -> None:
        pass

    @model.command(
        "list",
        cls=Command,
        help=tr(
            "Le modèle de chaque rôle (génération, embedding, reranking), les modèles téléchargés et les "
            "téléchargements en cours, des modèles à essayer sur cette machine (taille, licence, langues), puis les "
            "serveurs compatibles OpenAI trouvés sur 127.0.0.1 (Ollama, LM Studio, llama.cpp, vLLM) avec leurs "
            "modèles ; rien n'est utilisé sans ton choix.",
            "Each role's model (generation, embedding, reranking), the downloaded models and the downloads under "
            "way, models worth trying on this machine (size, licence, languages), then the OpenAI-compatible "
            "servers found on 127.0.0.1 (Ollama, LM Studio, llama.cpp, vLLM) with their models; none is used "
            "unless you choose it.",
        ),
        epilog=example("obsirag model list"),
    )
    @click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
    @common_options
    def listing(settings: Settings, as_json: bool) -> None:
        from services.system.model_choice import overview

        seen = overview(settings)
        if as_json:
            data = seen.model_dump(mode="json")
            for pull, shown in zip(seen.pulls, data["pulls"], strict=True):
                shown["interrupted"] = pull.interrupted
            click.echo(json.dumps(data, ensure_ascii=False, indent=2))
            return
        _print_in_use(seen)
        _print_installed(seen.installed, seen.pulls)
        _print_candidates(seen.candidates)
        _print_servers(seen.local_servers, settings.llm_local_ports)

    @model.command(
        "bench",
        cls=Command,
        help=tr(
            "Mesure sur cette machine chaque modèle en usage : lecture et écriture (jetons/s) du modèle de "
            "génération, extraits/s et latence d'une requête de l'embedding, paires/s du reranker. Gardé dans le "
            "dossier de données : au prochain démarrage, le worker de génération part de ces vitesses pour son "
            "budget de contexte.",
            "Time each model in use on this machine: the generation model's reading and writing (tokens/s), the "
            "embedding model's chunks/s and query latency, the reranker's pairs/s. Kept in the data folder: at "
            "its next start the generation worker sizes its context budget from these rates.",
        ),
        epilog=example("obsirag model bench"),
    )
    @click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
    @common_options
    def bench(settings: Settings, as_json: bool) -> None:
        from services.system.model_bench import write_bench

        measured = run_benches(rechosen(settings))
        write_bench(settings, measured)
        if as_json:
            click.echo(json.dumps([rates.model_dump() for rates in measured], ensure_ascii=False, indent=2))
            return
        for rates in measured:
            click.echo(rates_line(rates))
        click.echo(
            tr(
                "Le worker de génération part de ces vitesses à son prochain démarrage.",
                "The generation worker starts from these rates at its next start.",
            )
        )

    register_changes(model, common_options)


def run_benches(settings: Settings) -> list[Rates]:
    from services.llm.configured_backend import open_backend
    from services.retrieval.embedding import load_embedder
    from services.retrieval.reranker import open_reranker
    from services.system.model_bench import bench_embedding, bench_generation, bench_reranker

    click.echo(tr("Mesure en cours (chaque modèle est chargé ici)…", "Measuring (each model loads here)…"), err=True)
    backend = open_backend(settings)
    try:
        measured = [bench_generation(backend)]
    finally:
        backend.unload()
    cache, served = settings.model_cache, settings.embedding_served
    embedder = load_embedder(
        settings.embedding_model,
        settings.embedding_batch_size,
        settings.torch_threads,
        cache,
        served,
        settings.passage_threads,
    )
    measured.append(bench_embedding(embedder))
    if reranker := open_reranker(settings.rerank_model, settings.model_cache, settings.torch_threads):
        measured.append(bench_reranker(reranker))
    return measured


def rates_line(rates: Rates) -> str:
    n = _number
    if rates.role == "generation":
        return tr(
            f"génération {rates.model} ({rates.backend}) : lecture {n(rates.prompt_tokens_per_s)} jetons/s, "
            f"écriture {n(rates.decode_tokens_per_s)} jetons/s",
            f"generation {rates.model} ({rates.backend}): reads {n(rates.prompt_tokens_per_s)} tokens/s, "
            f"writes {n(rates.decode_tokens_per_s)} tokens/s",
        )
    if rates.role == "embedding":
        return tr(
            f"embedding {rates.model} : {n(rates.chunks_per_s)} extraits/s, une requête en {n(rates.query_ms)} ms",
            f"embedding {rates.model}: {n(rates.chunks_per_s)} chunks/s, a query in {n(rates.query_ms)} ms",
        )
    return tr(
        f"reranking {rates.model} : {n(rates.pairs_per_s)} paires/s",
        f"reranking {rates.model}: {n(rates.pairs_per_s)} pairs/s",
    )


def _number(value: float | None) -> str:
    """« 12,5 » in French, "12.5" in English; « ? » when it could not be measured."""
    if value is None:
        return "?"
    return tr(f"{value}".replace(".", ","), f"{value}")


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


def _print_in_use(seen: ModelsOverview) -> None:
    """Each role's model as chosen now (the overview already applied the choices)."""
    generation, reranking = seen.generation, seen.reranking
    served = f" ({generation['base_url']})" if generation["base_url"] else ""  # set for a server only
    click.echo(tr("En usage :", "In use:"))
    click.echo(tr("  génération : ", "  generation: ") + f"{generation['backend']} {generation['model']}{served}")
    click.echo(tr("  embedding : ", "  embedding: ") + str(seen.embedding["model"]))
    click.echo(tr("  reranking : ", "  reranking: ") + (str(reranking["model"]) if reranking else tr("aucun", "none")))


def _print_installed(installed: list[InstalledModel], pulls: list[PullProgress]) -> None:
    if not installed and not pulls:
        return
    click.echo(tr("Téléchargés :", "Downloaded:"))
    for found in installed:
        click.echo(f"  {found.model} — {role_word(found.role)}, {size_text(found.size_bytes)}")
    for pull in pulls:
        click.echo(describe_pull(pull))


def _print_candidates(offered: list[Candidate]) -> None:
    if not offered:
        return
    click.echo(
        tr("À essayer (chiffres publiés, non mesurés ici) :", "Worth trying (published figures, not measured here):")
    )
    for candidate in offered:
        size = size_text(candidate.size_gb * 1e9)
        click.echo(
            f"  {candidate.model} — {role_word(candidate.role)}, {size}, {candidate.licence}, {candidate.languages}"
        )
        click.echo(f"    {candidate.note} ({candidate.source})")
    click.echo(tr("  pour en télécharger un : obsirag model pull ID", "  to download one: obsirag model pull ID"))


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
            use = f"obsirag model use {server.chat_models[0]}"
            click.echo(tr("    pour rédiger avec : ", "    to write with it: ") + use)
