"""``@page``: a GET handler that answers HEAD too (Litestar's ``get`` alone answers HEAD with 405)."""

from __future__ import annotations

from functools import partial

from litestar import route
from litestar.enums import HttpMethod

# Litestar sends the GET response's headers without its body for HEAD; used by every page and fragment.
page = partial(route, http_method=[HttpMethod.GET, HttpMethod.HEAD])
