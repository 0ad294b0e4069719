"""PostgreSQL connection URLs as memoryd shows and checks them: never with their password, and refused where libpq
would read part of a password as the host, port or database."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import quote, unquote

SECRET_KEYS = ("password", "sslpassword")  # libpq's parameters that hold a secret
_USERINFO = re.compile(r"(?s)^(\w[\w+.-]*://[^:/@]*):.*@")  # to the last '@': a password may hold '/', '@', '?'
_CONNINFO_SECRET = re.compile(r"(?i)\b((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|(?:[^\s\\]|\\.)+)")


def mask_password(url: str | None) -> str | None:
    """A connection URL or conninfo string with every secret hidden: the URL's password, a `password=` or
    `sslpassword=` parameter (its name percent-encoded or not), a conninfo string's."""
    if not url:
        return url
    url = _USERINFO.sub(r"\1:***@", url)
    url = _query_secrets(url, lambda key, value: f"{key}=***")
    return _CONNINFO_SECRET.sub(r"\1***", url) if "://" not in url else url


def without_password(url: str) -> str:
    """The URL as written, its secrets left out (libpq then reads PGPASSWORD or ~/.pgpass)."""
    return _query_secrets(_USERINFO.sub(r"\1@", url), lambda key, value: "")


def _query_secrets(url: str, replace: Callable[[str, str], str]) -> str:
    """The URL with each secret query parameter replaced (an empty replacement drops it)."""
    head, mark, query = url.partition("?")
    if not mark:
        return url
    kept = []
    for part in query.split("&"):
        key, _, value = part.partition("=")
        if unquote(key).strip().lower() in SECRET_KEYS:
            part = replace(key, value)
        if part:
            kept.append(part)
    return head + ("?" + "&".join(kept) if kept else "")


def redact_url(url: str) -> str:
    """The URL without its password (status and logs never show one)."""
    if url_problem(url):  # libpq would read part of the password as the host, port or database
        return str(mask_password(url))
    import psycopg

    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "<unparsable PostgreSQL URL>"
    host, port, user, dbname = (str(info.get(key) or "") for key in ("host", "port", "user", "dbname"))
    user = quote(user, safe="")  # as a URL writes it: a ':' in a user name must not read as a password's start
    if host.startswith("/"):  # a Unix socket's folder, as libpq writes it in a URL
        return f"postgresql://{user}@/{dbname}?host={host}" + (f"&port={port}" if port else "")
    return f"postgresql://{user}@{host}{f':{port}' if port else ''}/{dbname}"


def url_problem(url: str) -> str | None:
    """Why a postgresql:// URL would not be read as it was meant, without repeating it (it may hold a password)."""
    if "://" not in url:
        return "not a postgresql:// URL"
    if any(ord(c) < 32 or ord(c) == 127 for c in url):
        return "it holds a control character (a line break?)"
    userinfo = url.split("://", 1)[1].rpartition("@")[0]
    if any(c in userinfo for c in "/?#@"):
        return (
            "its user or password holds an unencoded '/', '?', '#' or '@': percent-encode them (%2F, %3F, %23, %40),"
            " or leave the password out and use PGPASSWORD or ~/.pgpass"
        )
    try:
        import psycopg
    except ImportError:  # without the postgres extra the store says so when it is opened
        return None
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:  # libpq's reason repeats the token it could not read: a password, perhaps
        return "not a PostgreSQL URL libpq can read (a stray '%', a bad port or an unknown parameter?)"
    return None
