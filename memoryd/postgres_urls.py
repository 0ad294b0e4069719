"""PostgreSQL connection URLs as memoryd shows and checks them: never with their password, and refused where libpq
would read part of a password as the host, port or database."""

from __future__ import annotations

import re


def mask_password(url: str | None) -> str | None:
    """A connection URL or conninfo string with its password hidden."""
    if not url:
        return url
    url = re.sub(r"(password\s*=\s*)('[^']*'|[^\s&]+)", r"\1***", url)
    # to the last '@': a password may hold an unencoded '/', '@' or '?' (which config refuses, and must not print)
    return re.sub(r"^(\w+://[^:/@]*):.*@", r"\1:***@", url)


def without_password(url: str) -> str:
    """The URL as written, its password left out (libpq then reads PGPASSWORD or ~/.pgpass)."""
    url = re.sub(r"([?&])password=[^&]*&?", r"\1", url).rstrip("?&")
    return re.sub(r"^(\w+://[^:/@]*):.*@", r"\1@", url)


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
    if host.startswith("/"):  # a Unix socket's folder, as libpq writes it in a URL
        return f"postgresql://{user}@/{dbname}?host={host}" + (f"&port={port}" if port else "")
    return f"postgresql://{user}@{host}{f':{port}' if port else ''}/{dbname}"


def url_problem(url: str) -> str | None:
    """Why a postgresql:// URL would not be read as it was meant, without repeating it (it may hold a password)."""
    if "://" not in url:
        return "not a postgresql:// URL"
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
