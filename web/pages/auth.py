"""The login form, used only when ``OBSIRAG_WEB_TOKEN`` is set (e.g. when serving beyond loopback)."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, post
from litestar.datastructures import Cookie
from litestar.enums import RequestEncodingType
from litestar.params import Body, FromQuery
from litestar.response import Redirect, Template
from pydantic import BaseModel

from web.page_route import page
from web.security import AUTH_COOKIE, auth_cookie_value, safe_next, token_matches, web_secret
from web.site import Site, SiteDep


class LoginForm(BaseModel):
    token: str
    next: FromQuery[str] = "/"


class LoginController(Controller):
    path = "/login"

    @page("/", sync_to_thread=False)
    def form(self, site: SiteDep, next: FromQuery[str] = "/") -> Template:
        return Template("login.html", context={"next": safe_next(next), "error": None, "needed": _token(site)})

    @post("/", sync_to_thread=True)
    def login(
        self, site: SiteDep, data: Annotated[LoginForm, Body(media_type=RequestEncodingType.URL_ENCODED)]
    ) -> Response:
        token = _token(site)
        if not token or not token_matches(data.token.strip(), token):
            context = {"next": safe_next(data.next), "error": "Jeton incorrect.", "needed": bool(token)}
            return Template("login.html", context=context, status_code=401)
        value = auth_cookie_value(token, web_secret(site.settings))
        cookie = Cookie(key=AUTH_COOKIE, value=value, httponly=True, samesite="strict", path="/")
        return Redirect(safe_next(data.next), status_code=303, cookies=[cookie])


def _token(site: Site) -> str:
    token = site.settings.web_token
    return token.get_secret_value() if token is not None else ""
