"""``obsirag model pull | use | remove``: add a model, choose it, take it away (issue #33)."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from services.config import Settings
from services.models.installed import Role
from services.models.progress import PullProgress
from workers.cli_text import LANG, Command, example, tr

ROLE_WORDS = {
    "generation": ("génération", "generation"),
    "embedding": ("embedding", "embedding"),
    "reranking": ("reranking", "reranking"),
}
SWITCH_WAIT_SECONDS = 15.0


def role_word(role: Role) -> str:
    return tr(*ROLE_WORDS[role])


def size_text(size: float) -> str:
    """Bytes as a person reads them: « 1,2 Go » in French, "1.2 GB" in English."""
    units = tr("o ko Mo Go To", "B kB MB GB TB").split()
    for unit in units:
        if size < 1000 or unit == units[-1]:
            text = f"{size:.0f}" if unit == units[0] else f"{size:.1f}"
            return f"{text.replace('.', ',') if LANG == 'fr' else text} {unit}"
        size /= 1000
    return ""


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


class ProgressLine:
    """A pull's progress on stderr: one line rewritten in a terminal, a line every 5 s otherwise (a log)."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.drawn = False

    def __call__(self, progress: PullProgress) -> None:
        now = time.monotonic()
        if not self.tty and now - self.last < 5.0 and progress.state == "downloading":
            return
        self.last = now
        line = describe_pull(progress)
        if self.tty:
            click.echo(f"\r{line:<100}", nl=False, err=True)
            self.drawn = True
        else:
            click.echo(line, err=True)

    def end(self) -> None:
        if self.drawn:
            click.echo("", err=True)


def describe_pull(progress: PullProgress) -> str:
    """« 123,4 Mo / 517,0 Mo (24 %) · 45,2 Mo/s · reste 8 s »: what a pull has done and has left."""
    if progress.state == "sizing":
        return tr(f"  {progress.model} : liste des fichiers…", f"  {progress.model}: listing the files…")
    if progress.state == "failed":
        return tr(f"  {progress.model} : échec — {progress.error}", f"  {progress.model}: failed — {progress.error}")
    share = progress.done_bytes / progress.total_bytes if progress.total_bytes else 1.0
    done = f"{size_text(progress.done_bytes)} / {size_text(progress.total_bytes)} ({share:.0%})"
    if progress.interrupted:
        return tr(
            f"  {progress.model} : interrompu à {done} ; `obsirag model pull {progress.model}` reprend",
            f"  {progress.model}: interrupted at {done}; `obsirag model pull {progress.model}` resumes",
        )
    if progress.state == "verifying":
        return tr(f"  {progress.model} : {done} · vérification…", f"  {progress.model}: {done} · verifying…")
    rate = f"{size_text(progress.bytes_per_s)}/s" if progress.bytes_per_s else "…"
    left = tr("reste ", "") + duration_text(progress.eta_s) + tr("", " left")
    return (
        f"  {progress.model} : {done} · {rate} · {left}"
        if LANG == "fr"
        else f"  {progress.model}: {done} · {rate} · {left}"
    )


def register_changes(model: click.Group, common_options: Any) -> None:
    @model.command(
        "pull",
        cls=Command,
        help=tr(
            "Télécharge un modèle du hub Hugging Face dans le cache de modèles (partagé par tes coffres), avec "
            "la progression ; un téléchargement interrompu reprend où il s'est arrêté, chaque fichier est vérifié. "
            "Rien ne change tant que tu ne le choisis pas (`obsirag model use`).",
            "Download a model from the Hugging Face hub into the model cache (shared by your vaults), with its "
            "progress; an interrupted download resumes where it stopped, and each file is verified. Nothing "
            "changes until you choose it (`obsirag model use`).",
        ),
        epilog=example("obsirag model pull cross-encoder/mmarco-mMiniLMv2-L12-H384-v1"),
    )
    @click.argument("model_id", metavar="ID")
    @click.option(
        "--use", "then_use", is_flag=True, help=tr("Puis l'utilise, une fois vérifié.", "Then use it, once verified.")
    )
    @common_options(find_running=False)
    def pull_command(settings: Settings, model_id: str, then_use: bool) -> None:
        from services.models.installed import role_of
        from services.models.pull import PullError, pull

        line = ProgressLine()
        try:
            folder = pull(model_id, settings.model_cache, line, lang=LANG)
        except PullError as exc:
            line.end()
            raise click.ClickException(str(exc)) from None
        line.end()
        role = role_of(folder)
        if then_use:
            use_model(settings, model_id, None)
            return
        click.echo(
            tr(
                f"Téléchargé : {model_id} ({role_word(role)}). Pour l'utiliser : obsirag model use {model_id}",
                f"Downloaded: {model_id} ({role_word(role)}). To use it: obsirag model use {model_id}",
            )
        )

    @model.command(
        "use",
        cls=Command,
        help=tr(
            "Choisit le modèle d'un rôle : un modèle téléchargé (génération, embedding ou reranking), un modèle "
            "d'un serveur trouvé sur cette machine (Ollama, LM Studio…), `bundled` (le modèle intégré) ou `none` "
            "(plus de reranker). La génération change sans redémarrage (la réponse en cours finit d'abord), le "
            "reranker dès la recherche suivante ; un nouvel embedding reconstruit l'index à côté de l'actuel, qui "
            "répond pendant ce temps (tout de suite si ObsiRAG tourne, sinon au prochain `obsirag up`).",
            "Choose a role's model: a downloaded one (generation, embedding or reranking), a model of a server "
            "found on this machine (Ollama, LM Studio…), `bundled` (the built-in model) or `none` (no reranker). "
            "Generation switches without a restart (the answer being written finishes first), the reranker from "
            "the next search; a new embedding model rebuilds the index beside the current one, which answers "
            "meanwhile (at once when ObsiRAG runs, else at the next `obsirag up`).",
        ),
        epilog=example("obsirag model use qwen2.5:7b"),
    )
    @click.argument("model_id", metavar="ID")
    @click.option(
        "--url",
        metavar="URL",
        help=tr(
            "L'adresse (…/v1) d'un serveur compatible OpenAI qui sert ID.",
            "The address (…/v1) of an OpenAI-compatible server serving ID.",
        ),
    )
    @common_options
    def use_command(settings: Settings, model_id: str, url: str | None) -> None:
        use_model(settings, model_id, url)

    @model.command(
        "remove",
        cls=Command,
        help=tr(
            "Supprime un modèle téléchargé (ou un téléchargement interrompu) du cache de modèles. Le modèle de "
            "génération ou d'embedding en usage est refusé ; le reranker en usage est d'abord retiré.",
            "Delete a downloaded model (or an interrupted download) from the model cache. The generation or "
            "embedding model in use is refused; the reranker in use is turned off first.",
        ),
        epilog=example("obsirag model remove cross-encoder/mmarco-mMiniLMv2-L12-H384-v1"),
    )
    @click.argument("model_id", metavar="ID")
    @common_options
    def remove_command(settings: Settings, model_id: str) -> None:
        from services.choices import read_choices, write_choices
        from services.models.installed import remove_model
        from services.models.progress import forget_pull
        from services.system.model_choice import in_use

        if in_use(settings, model_id):
            raise click.ClickException(
                tr(
                    f"{model_id} est en usage : choisis-en un autre d'abord (`obsirag model use`)",
                    f"{model_id} is in use: choose another one first (`obsirag model use`)",
                )
            )
        if model_id == settings.rerank_model and "rerank_model" not in settings.model_fields_set:
            write_choices(settings.data_dir, read_choices(settings.data_dir).model_copy(update={"rerank_model": ""}))
            click.echo(
                tr("Reranker retiré : la recherche classe comme avant.", "Reranker off: the search ranks as before.")
            )
        freed = remove_model(settings.model_cache, model_id)
        forget_pull(settings.model_cache, model_id)
        if not freed:
            raise click.ClickException(tr(f"{model_id} n'est pas téléchargé", f"{model_id} is not downloaded"))
        click.echo(
            tr(
                f"Supprimé : {model_id} ({size_text(freed)} libérés).",
                f"Removed: {model_id} ({size_text(freed)} freed).",
            )
        )


def use_model(settings: Settings, model_id: str, url: str | None) -> None:
    from services.system.model_choice import ChoiceRefused, choose, resolve_choice

    try:
        role, fields = resolve_choice(settings, model_id, url)
        choose(settings, fields)
    except ChoiceRefused as exc:
        raise click.ClickException(exc.text(LANG)) from None
    if role == "embedding" and model_id != settings.embedding_model:
        click.echo(rebuild_now(settings, model_id))
        return
    click.echo(chosen_line(role, model_id))
    if role == "generation":
        wait_for_switch(settings, fields)


def rebuild_now(settings: Settings, model_id: str) -> str:
    """A new embedding model: with the system up, its rebuild starts now beside the live index."""
    from services.system import SystemClient, SystemNotRunning

    client = SystemClient(settings)
    try:
        if not client.running():
            raise SystemNotRunning("not running")
        client.reindex()
    except SystemNotRunning:
        return chosen_line("embedding", model_id)
    return tr(
        f"Embedding : {model_id}. L'index est reconstruit avec lui à côté de l'actuel, qui répond jusqu'à la fin "
        "(`obsirag status` montre l'avancement).",
        f"Embedding: {model_id}. The index is rebuilt with it beside the current one, which answers until it is "
        "done (`obsirag status` shows the progress).",
    )


def offer_better_model(settings: Settings) -> None:
    """At `obsirag up`: on Apple silicon, the model that writes, proposed once; pulled in the background while
    the bundled model serves, and used once verified (``OBSIRAG_AUTO_PULL``)."""
    from services.models.background import start_pull
    from services.system.model_choice import decline_offer, first_start_offer

    offer = first_start_offer(settings)
    if offer is None:
        return
    what = f"{offer.model} ({size_text(offer.size_gb * 1e9)}, {offer.licence})"
    if settings.auto_pull == "ask" and not sys.stdin.isatty():
        click.echo(
            tr(
                f"Pour des réponses rédigées sur ce Mac : obsirag model pull {offer.model} --use "
                "(ou OBSIRAG_AUTO_PULL=yes).",
                f"For written answers on this Mac: obsirag model pull {offer.model} --use (or OBSIRAG_AUTO_PULL=yes).",
            )
        )
        return
    question = tr(
        f"Télécharger {what} pour des réponses rédigées ? Le modèle intégré répond en attendant.",
        f"Download {what} for written answers? The bundled model answers meanwhile.",
    )
    if settings.auto_pull == "yes" or click.confirm(question, default=True):
        start_pull(settings, offer.model, use=True)
        click.echo(
            tr(
                "Téléchargement lancé : obsirag status ou la page Modèles en montre la progression.",
                "Download started: obsirag status or the Models page shows its progress.",
            )
        )
    else:
        decline_offer(settings)


def chosen_line(role: Role, model_id: str) -> str:
    if role == "reranking" and model_id == "none":
        return tr("Plus de reranker : la recherche classe comme avant.", "No reranker: the search ranks as before.")
    if role == "reranking":
        return tr(
            f"Reranker : {model_id}, dès la prochaine recherche (il relit les 30 premières notes).",
            f"Reranker: {model_id}, from the next search (it rereads the first 30 notes).",
        )
    if role == "embedding":
        return tr(
            f"Embedding : {model_id}. Au prochain `obsirag up`, l'index est reconstruit avec lui à côté de "
            "l'actuel, qui répond jusqu'à la fin.",
            f"Embedding: {model_id}. At the next `obsirag up` the index is rebuilt with it beside the current "
            "one, which answers until it is done.",
        )
    return tr(f"Génération : {model_id}.", f"Generation: {model_id}.")


def wait_for_switch(settings: Settings, fields: dict[str, str]) -> None:
    """With the system up, wait until the worker serves the new model (it finishes its answer first)."""
    from services.system.client import DOWN
    from services.system.generation_client import GenerationClient

    client = GenerationClient(settings)
    try:
        running = client.state() is not None
    except DOWN:  # no Redis: nothing runs
        running = False
    if not running:
        click.echo(tr("Il servira au prochain `obsirag up`.", "It serves from the next `obsirag up`."))
        return
    deadline = time.monotonic() + SWITCH_WAIT_SECONDS
    while time.monotonic() < deadline:
        state = client.state()
        if state is not None and state.model == fields["llm_model"] and state.backend == fields["llm_backend"]:
            click.echo(tr("Le worker de génération s'en sert maintenant.", "The generation worker uses it now."))
            return
        time.sleep(0.2)  # the worker publishes its state with its heartbeat
    click.echo(
        tr(
            "Le worker de génération y passera dès la fin de la réponse en cours.",
            "The generation worker switches once the answer being written is done.",
        )
    )
