"""Real mail and calendar servers for the connectors' tests, started once per session: Dovecot (Debian's
``dovecot-imapd``, which needs root: skipped with the reason otherwise), Radicale (CalDAV, from PyPI) and an
ICS file on a local web server."""

from __future__ import annotations

import imaplib
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

import httpx
import icalendar
import pytest

MAIL_USER = "camille@example.fr"
MAIL_SECRET = "Mdp-Tr3s-S3cret!"
CAL_USER = "camille"
CAL_SECRET = "Agenda-S3cret-42"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def _listening(command: list[str], port: int, what: str) -> Iterator[None]:
    """A server started, once it listens on ``port``; stopped after."""
    process = subprocess.Popen(command)
    try:
        _wait_port(port, process, what)
        yield
    finally:
        process.terminate()
        process.wait(10)


def _wait_port(port: int, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} stopped at start (exit {process.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port}")


# --- Dovecot ---------------------------------------------------------------------------------------

_DOVECOT_CONF = """base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_login_user = dovenull
default_internal_user = dovecot
first_valid_uid = 1
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/users
}}
userdb {{
  driver = static
  args = uid=dovecot gid=dovecot home={root}/home/%u
}}
mail_location = maildir:~/Maildir
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service stats {{
  unix_listener stats-reader {{
    mode = 0666
  }}
  unix_listener stats-writer {{
    mode = 0666
  }}
}}
"""


def dovecot_missing() -> str | None:
    """Why Dovecot cannot run here, or None."""
    if shutil.which("dovecot") is None:
        return "Dovecot (dovecot-imapd) n'est pas installé : `make test` l'installe quand il tourne en root"
    if os.geteuid() != 0:
        return "Dovecot demande root pour servir une boîte (lancer `make test` en root)"
    return None


@dataclass
class Dovecot:
    port: int
    root: Path

    def client(self) -> imaplib.IMAP4:
        client = imaplib.IMAP4("127.0.0.1", self.port)
        client.login(MAIL_USER, MAIL_SECRET)
        return client

    def append(self, message: EmailMessage, folder: str = "INBOX") -> int:
        client = self.client()
        try:
            typ, data = client.append(folder, None, None, message.as_bytes())
            assert typ == "OK", data
            return int(data[0].split(b"APPENDUID ")[1].split(b" ")[1].rstrip(b"]"))
        finally:
            client.logout()

    def delete(self, uid: int, folder: str = "INBOX") -> None:
        client = self.client()
        try:
            client.select(folder)
            client.uid("STORE", str(uid), "+FLAGS", r"(\Deleted)")
            client.expunge()
        finally:
            client.logout()

    def state(self, folder: str = "INBOX") -> list[tuple[int, bytes]]:
        """Every message's UID and flags (read-only): what a read-only client must leave as it was."""
        client = self.client()
        try:
            client.select(folder, readonly=True)
            _typ, data = client.uid("FETCH", "1:*", "(FLAGS)")
            # \\Recent is the session's, not the message's: the first session to look clears it, read-only or not.
            lines = [line.replace(rb"\Recent", b"").replace(b"( ", b"(").replace(b" )", b")") for line in data if line]
            return sorted((int(line.split(b"UID ")[1].split(b" ")[0].rstrip(b")")), line) for line in lines)
        finally:
            client.logout()


@pytest.fixture(scope="session")
def dovecot() -> Iterator[Dovecot]:
    if reason := dovecot_missing():
        pytest.skip(reason)
    # Not under pytest's temporary folders: they are private to root (0700) and Dovecot reads as its own user.
    root = Path(tempfile.mkdtemp(prefix="obsirag-dovecot-"))
    root.chmod(0o755)
    port = free_port()
    (root / "home").mkdir()
    (root / "users").write_text(f"{MAIL_USER}:{{PLAIN}}{MAIL_SECRET}\n")
    (root / "dovecot.conf").write_text(_DOVECOT_CONF.format(root=root, port=port))
    user = pwd.getpwnam("dovecot")
    os.chown(root / "home", user.pw_uid, user.pw_gid)
    try:
        with _listening(["dovecot", "-F", "-c", str(root / "dovecot.conf")], port, "Dovecot"):
            yield Dovecot(port, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --- Radicale --------------------------------------------------------------------------------------


@dataclass
class Radicale:
    port: int
    root: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def calendar(self, name: str) -> str:
        """A new calendar collection's URL."""
        url = f"{self.url}/{CAL_USER}/{name}/"
        response = httpx.request("MKCALENDAR", url, auth=(CAL_USER, CAL_SECRET))
        assert response.status_code == 201, response.text
        return url

    def put(self, calendar_url: str, ics: str) -> None:
        """Each event of ``ics`` as its own object (CalDAV keeps one UID per resource), time zones with each."""
        calendar = icalendar.Calendar.from_ical(ics)
        zones = list(calendar.walk("VTIMEZONE"))
        for number, event in enumerate(calendar.walk("VEVENT")):
            single = icalendar.Calendar()
            single.add("prodid", "-//ObsiRAG tests//FR")
            single.add("version", "2.0")
            for component in [*zones, event]:
                single.add_component(component)
            response = httpx.put(
                f"{calendar_url}event-{number}.ics",
                content=single.to_ical(),
                auth=(CAL_USER, CAL_SECRET),
                headers={"Content-Type": "text/calendar"},
            )
            assert response.status_code in (201, 204), response.text

    def state(self) -> list[tuple[str, int, float]]:
        """Every stored file, its size and time: what a read-only client must leave as it was."""
        # Radicale's own lock and caches aside (a read takes the lock and fills the cache).
        files = (
            p
            for p in (self.root / "collections").rglob("*")
            if p.is_file() and not any(part.startswith(".Radicale") for part in p.parts)
        )
        return sorted((str(p.relative_to(self.root)), p.stat().st_size, p.stat().st_mtime) for p in files)


@pytest.fixture(scope="session")
def radicale(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Radicale]:
    root = tmp_path_factory.mktemp("radicale")
    port = free_port()
    (root / "users").write_text(f"{CAL_USER}:{CAL_SECRET}\n")
    config = root / "config"
    config.write_text(
        f"[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = htpasswd\nhtpasswd_filename = {root}/users\n"
        f"htpasswd_encryption = plain\n[storage]\nfilesystem_folder = {root}/collections\n"
        "[logging]\nlevel = warning\n"
    )
    with _listening([sys.executable, "-m", "radicale", "--config", str(config)], port, "Radicale"):
        yield Radicale(port, root)
