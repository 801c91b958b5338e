"""The knowledge graph page: filters, metrics, top-5, and the nodes/edges handed to ``graph.js``."""

from __future__ import annotations

from litestar import Controller, Request
from litestar.di import NamedDependency
from litestar.params import FromQuery
from litestar.response import Template

from services.catalog.graph import DEFAULT_LIMIT, GraphFilter
from services.catalog.graph_cache import GraphCache
from services.vault.models import NoteType
from web.page_route import page

RECENCY = ((0, "toutes dates"), (7, "7 derniers jours"), (30, "30 derniers jours"), (365, "12 derniers mois"))
LIMITS = (100, 300, 1000, 2000)


class GraphController(Controller):
    path = "/graph"

    @page("/", sync_to_thread=True)
    def index(
        self,
        graph: NamedDependency[GraphCache],
        request: Request,
        q: FromQuery[str] = "",
        folder: FromQuery[str] = "",
        tag: FromQuery[str] = "",
        type: FromQuery[str] = "",
        days: FromQuery[int] = 0,
        limit: FromQuery[int] = DEFAULT_LIMIT,
        own: FromQuery[bool] = False,
    ) -> Template:
        flt = GraphFilter(text=q, folder=folder, tag=tag, note_type=type, days=days or None, limit=limit, own=own)
        view = graph.get().view(flt)
        index = {node.id: i for i, node in enumerate(view.nodes)}
        data = {  # compact: edges as node indexes, 1 for a synapse; a node's last item 1 when it gets a label
            "nodes": [[n.id, n.title, n.color, n.degree, n.folder, int(n.label)] for n in view.nodes],
            "edges": [[index[e.source], index[e.target], int(e.kind == "synapse")] for e in view.edges],
        }
        context = {
            "active": "graph",
            "view": view,
            "flt": flt,
            "data": data,
            "recency": RECENCY,
            "limits": LIMITS,
            "types": [t.value for t in NoteType],
        }
        partial = request.headers.get("hx-target") == "graph-panel"
        return Template("_graph_panel.html" if partial else "graph.html", context=context)
