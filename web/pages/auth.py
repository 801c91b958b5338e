"""The login form, used only when ``OBSIRAG_WEB_TOKEN`` is set (e.g. when serving beyond loopback)."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, post
from litestar.datastructures import Cookie
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.params import Body, FromQuery
from litestar.response import Redirect, Template
from pydantic import BaseModel

from services.config import Settings
from web.page_route import page
from web.security import AUTH_COOKIE, auth_cookie_value, safe_next, token_matches, web_secret


class LoginForm(BaseModel):
    token: str
    next: FromQuery[str] = "/"


class LoginController(Controller):
    path = "/login"

    @page("/", sync_to_thread=False)
    def form(self, settings: NamedDependency[Settings], next: FromQuery[str] = "/") -> Template:
        context = {"next": safe_next(next), "error": None, "needed": _token(settings)}
        return Template("login.html", context=context)

    @post("/", sync_to_thread=True)
    def login(
        self,
        settings: NamedDependency[Settings],
        data: Annotated[LoginForm, Body(media_type=RequestEncodingType.URL_ENCODED)],
    ) -> Response:
        token = _token(settings)
        if not token or not token_matches(data.token.strip(), token):
            context = {"next": safe_next(data.next), "error": "Jeton incorrect.", "needed": bool(token)}
            return Template("login.html", context=context, status_code=401)
        value = auth_cookie_value(token, web_secret(settings))
        cookie = Cookie(key=AUTH_COOKIE, value=value, httponly=True, samesite="strict", path="/")
        return Redirect(safe_next(data.next), status_code=303, cookies=[cookie])


def _token(settings: Settings) -> str:
    token = settings.web_token
    return token.get_secret_value() if token is not None else ""
