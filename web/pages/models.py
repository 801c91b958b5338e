"""« Modèles »: the model of each role, those pulled and being pulled (live progress), candidates for this
machine with what their publishers state, the model servers running here; choose one, pull one."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Template
from pydantic import BaseModel

from services.config import Settings
from services.models.background import start_pull
from services.system import SystemClient, SystemNotRunning
from services.system.model_choice import ChoiceRefused, choose, overview, resolve_choice
from web.page_route import page

Form = Body(media_type=RequestEncodingType.URL_ENCODED)
ROLE_SAYS = {
    "generation": "La génération passe à {model} dès la fin de la réponse en cours.",
    "embedding": "Embedding : {model}. Au prochain démarrage, l'index est reconstruit avec lui à côté de l'actuel, "
    "qui répond jusqu'à la fin.",
    "reranking": "Reranker : {model}, dès la prochaine recherche.",
}


REBUILDING = (
    "Embedding : {model}. L'index est reconstruit avec lui à côté de l'actuel, qui répond jusqu'à la fin (le tableau "
    "de bord montre l'avancement)."
)


def _rebuild(client: SystemClient) -> bool:
    """Start the rebuild with the model just chosen, when the system runs."""
    try:
        if not client.running():
            return False
        client.reindex()
    except SystemNotRunning:
        return False
    return True


class ModelForm(BaseModel):
    model: str
    url: str | None = None


class ModelsController(Controller):
    path = "/models"

    @page("/", sync_to_thread=True)
    def index(self, settings: NamedDependency[Settings]) -> Template:
        return Template("models.html", context={"active": "models", "seen": overview(settings)})

    @page("/pulls", sync_to_thread=True)
    def pulls(self, settings: NamedDependency[Settings]) -> Template:
        """The pulls' progress (polled every 2 s while one runs); no server probed."""
        return Template("_model_pulls.html", context={"seen": overview(settings, probe=False)})

    @post("/use", sync_to_thread=True)
    def use(
        self,
        settings: NamedDependency[Settings],
        client: NamedDependency[SystemClient],
        data: Annotated[ModelForm, Form],
    ) -> Template:
        try:
            role, fields = resolve_choice(settings, data.model, data.url or None)
            choose(settings, fields)
        except ChoiceRefused as exc:
            return Template("_flash.html", context={"message": exc.text("fr")})
        if data.model == "none":
            message = "Plus de reranker : la recherche classe comme avant."
        elif role == "embedding" and _rebuild(client):
            message = REBUILDING.format(model=data.model)
        else:
            message = ROLE_SAYS[role].format(model=data.model)
        return Template("_flash.html", context={"message": message})

    @post("/pull", sync_to_thread=True)
    def pull(self, settings: NamedDependency[Settings], data: Annotated[ModelForm, Form]) -> Template:
        model = data.model.strip()
        try:
            started = start_pull(settings, model)
        except ValueError:
            message = f"« {model} » n'est pas un identifiant du hub (organisation/nom)."
        else:
            message = (
                f"Téléchargement de {model} lancé : sa progression s'affiche ci-dessous."
                if started
                else f"{model} est déjà en cours de téléchargement."
            )
        return Template("_flash.html", context={"message": message})
