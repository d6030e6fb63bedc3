"""What every command needs before it runs, checked first: the settings, the database
URLs and ``MEMLEDGER_HOME``. A mistake there is the environment's, not the command's:
``main`` reports it in one line instead of a traceback, and runs nothing."""

from __future__ import annotations

import re

import sqlalchemy.exc as sa_exc
from pydantic import ValidationError
from pydantic_settings import SettingsError
from sqlalchemy.engine import make_url

from memledger.config import Settings

URL_FORM = "postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
_SHOWN_INPUT = 40
# user:password@ in a URL that a driver's message might quote.
_PASSWORD_IN_URL = re.compile(r"(\w+://[^:/@\s]*:)[^@\s]*@")


def problem() -> str | None:
    """Why memledger cannot start in this environment, as ``Kind: what is wrong``
    (naming the variable), or None. Creates ``MEMLEDGER_HOME`` if the embedded server
    will need it, as starting that server would."""
    try:
        settings = Settings()
    except ValidationError as e:
        return f"ValidationError: {_invalid_settings(e)}"
    except SettingsError as e:  # a JSON setting (MEMLEDGER_LLM_OPTIONS, ...) that does not parse
        return f"SettingsError: {e}"
    return _url_problem(settings) or _home_problem(settings)


def _url_problem(settings: Settings) -> str | None:
    urls = {"DATABASE_URL": settings.database_url, "MEMLEDGER_APP_DATABASE_URL": settings.app_database_url}
    for variable, url in urls.items():
        try:
            if url is not None:
                make_url(url)
        except sa_exc.ArgumentError:  # the value is not echoed: it may hold a password
            return f"ArgumentError: {variable} is not a database URL (expected {URL_FORM})"
    return None


def _home_problem(settings: Settings) -> str | None:
    if settings.database_url is not None:
        return None  # an external server: nothing is kept in MEMLEDGER_HOME
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        home = str(settings.home)
        return f"{type(e).__name__}: MEMLEDGER_HOME={home!r} cannot hold the embedded database: {e.strerror}"
    return None


def _invalid_settings(error: ValidationError) -> str:
    """Each invalid setting as ``VARIABLE='value': what is wrong``."""
    return "; ".join(
        f"{_variable(detail['loc'])}={_shown(detail['input'])}: {detail['msg']}"
        for detail in error.errors(include_url=False)
    )


def _variable(loc: tuple[int | str, ...]) -> str:
    """The environment variable of a setting (``DATABASE_URL`` is its own alias)."""
    if not loc:
        return "settings"
    field = Settings.model_fields.get(str(loc[0]))
    name = f"MEMLEDGER_{str(loc[0]).upper()}" if field is not None else str(loc[0])
    return ".".join([name, *(str(part) for part in loc[1:])])


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_INPUT else text[:_SHOWN_INPUT] + "..."


def connection_failure(error: Exception) -> str | None:
    """What went wrong, in one line without any password, if ``error`` is the driver's
    failure to connect (no statement was running); else None."""
    if not isinstance(error, sa_exc.OperationalError) or error.statement is not None:
        return None
    return f"could not connect to PostgreSQL: {one_line(str(error.orig))}"


def one_line(text: str) -> str:
    """``text`` on one line, any ``user:password@`` in it masked."""
    joined = " ".join(line.strip() for line in text.splitlines() if line.strip())
    return _PASSWORD_IN_URL.sub(r"\1***@", joined)
