"""Calendars, read-only: an ICS address (GET) or a CalDAV collection (one REPORT, else its calendars found by
PROPFIND), their events between ``days`` ago and ``ahead_days`` from now, recurrences expanded by
``recurring_ical_events`` and times put in the machine's time zone; all-day events stay dates.

httpx rather than the ``caldav`` package: reading needs two requests, and ``caldav`` brings its own HTTP
stack (niquests and four more packages) for them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import httpx
import icalendar
import recurring_ical_events
from lxml import etree

from services.connectors.french import long_day
from services.connectors.mirror import Item
from services.connectors.models import ConnectorConfig, MalformedCalendar, Refused

TIMEOUT_SECONDS = 20.0
MAX_BYTES = 20 * 1024 * 1024
DAV = "DAV:"
CALDAV = "urn:ietf:params:xml:ns:caldav"
_QUERY = """<?xml version="1.0" encoding="utf-8"?>
<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
  <d:prop><c:calendar-data/></d:prop>
  <c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT">
    <c:time-range start="{start}" end="{end}"/>
  </c:comp-filter></c:comp-filter></c:filter>
</c:calendar-query>"""
_CALENDARS = """<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>"""


def read_events(config: ConnectorConfig, secret: str, now: datetime) -> list[Item]:
    start, end = now - timedelta(days=config.days), now + timedelta(days=config.ahead_days)
    with _client(config, secret) as client:
        texts = _ics(client, config.url) if config.kind == "ics" else _caldav(client, config.url, start, end)
    return events_between([parse(text) for text in texts], start, end)


def test_calendar(config: ConnectorConfig, secret: str, now: datetime) -> int:
    """One cheap read: the events of the window."""
    return len(read_events(config, secret, now))


def _client(config: ConnectorConfig, secret: str) -> httpx.Client:
    auth = httpx.BasicAuth(config.username, secret) if config.username else None
    return httpx.Client(auth=auth, timeout=TIMEOUT_SECONDS, follow_redirects=True, trust_env=False)


def _ics(client: httpx.Client, url: str) -> list[str]:
    response = _checked(client.get(url))
    if len(response.content) > MAX_BYTES:
        raise MalformedCalendar("calendrier de plus de 20 Mo")
    return [response.text]


def _caldav(client: httpx.Client, url: str, start: datetime, end: datetime) -> list[str]:
    body = _QUERY.format(start=_utc(start), end=_utc(end))
    response = client.request("REPORT", url, content=body, headers={"Depth": "1", "Content-Type": "application/xml"})
    if response.status_code in (400, 403, 404, 405, 501) or _no_calendar(response):
        calendars = _calendars_under(client, url)  # a home or principal address: its calendars, one by one
        return [text for found in calendars for text in _caldav(client, found, start, end)]
    _checked(response)
    return [node.text or "" for node in _xml(response).iter(f"{{{CALDAV}}}calendar-data")]


def _checked(response: httpx.Response) -> httpx.Response:
    if response.status_code in (401, 403):
        raise Refused()
    response.raise_for_status()
    return response


def _no_calendar(response: httpx.Response) -> bool:
    return response.status_code == 207 and b"calendar-data" not in response.content and b"<" in response.content[:1]


def _calendars_under(client: httpx.Client, url: str) -> list[str]:
    response = _checked(client.request("PROPFIND", url, content=_CALENDARS, headers={"Depth": "1"}))
    found = []
    for entry in _xml(response).iter(f"{{{DAV}}}response"):
        href = entry.findtext(f"{{{DAV}}}href") or ""
        if entry.find(f".//{{{CALDAV}}}calendar") is not None and href:
            found.append(str(httpx.URL(url).join(href)))
    return [f for f in found if f.rstrip("/") != url.rstrip("/")]


def _xml(response: httpx.Response) -> Any:
    try:
        return etree.fromstring(response.content, etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        raise MalformedCalendar(f"réponse CalDAV illisible ({exc})") from None


def _utc(stamp: datetime) -> str:
    return stamp.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def parse(text: str) -> icalendar.Calendar:
    try:
        calendar = icalendar.Calendar.from_ical(text)
    except (ValueError, IndexError, KeyError) as exc:
        raise MalformedCalendar(str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__) from None
    if not isinstance(calendar, icalendar.Calendar) or calendar.name != "VCALENDAR":
        raise MalformedCalendar("pas de VCALENDAR")
    return calendar


def events_between(calendars: Iterable[icalendar.Calendar], start: datetime, end: datetime) -> list[Item]:
    items: dict[str, Item] = {}
    for calendar in calendars:
        name = str(calendar.get("X-WR-CALNAME", "") or "")
        for event in recurring_ical_events.of(calendar).between(start, end):
            item = event_item(event, name)
            if item is not None:
                items[item.key] = item
    return sorted(items.values(), key=lambda i: i.frontmatter["date"])


def event_item(event: icalendar.Event, calendar: str = "") -> Item | None:
    begins = event.get("DTSTART")
    if begins is None:
        return None
    start, all_day = _moment(begins.dt)
    finish = event.get("DTEND")
    end = _moment(finish.dt)[0] if finish is not None else None
    summary = " ".join(str(event.get("SUMMARY", "") or "(sans titre)").split())
    when = long_day(start.date()) + ("" if all_day else f", {start:%H:%M}")
    uid = str(event.get("UID", "") or summary)
    key = hashlib.sha1(uid.encode()).hexdigest()[:16] + "-" + start.strftime("%Y%m%dT%H%M")
    front: dict[str, Any] = {
        "type": "event",
        "summary": summary,
        "date": start.date().isoformat() if all_day else start.isoformat(),
        "start": start.isoformat(),
        "end": end.isoformat() if end else None,
        "all_day": all_day,
        "location": str(event.get("LOCATION", "") or "") or None,
        "calendar": calendar or None,
    }
    return Item(
        key=key,
        title=f"{summary} ({when})",
        frontmatter={k: v for k, v in front.items() if v is not None},
        body=_body(event, start, end, all_day, front.get("location")),
    )


def _moment(value: date | datetime) -> tuple[datetime, bool]:
    if isinstance(value, datetime):
        return value.astimezone(), False  # a floating time is the machine's local time
    return datetime.combine(value, time()).astimezone(), True


def _body(event: icalendar.Event, start: datetime, end: datetime | None, all_day: bool, place: object) -> str:
    if all_day:
        days = max(1, (end.date() - start.date()).days) if end else 1
        when = f"Toute la journée du {long_day(start.date())}" + (f" ({days} jours)" if days > 1 else "")
    else:
        when = f"Le {long_day(start.date())} de {start:%H:%M}" + (f" à {end:%H:%M}" if end else "")
    lines = [when + "."]
    if place:
        lines.append(f"Lieu : {place}")
    if description := str(event.get("DESCRIPTION", "") or "").strip():
        lines += ["", description]
    return "\n".join(lines)
