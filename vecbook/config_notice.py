"""Which config file a command reads, said: at INFO (``-v``), and as a WARN where the working
folder's ``vecbook.toml`` is read in place of a user config that lists sources. The lookup order
stays (``config.find_config_file``); only its silence goes: a search run in a checkout or project
folder with its own file answered from that file alone, and nothing said the user's sources were
left out."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from .config import CONFIG_NAME, Config, counted, user_config_file

log = logging.getLogger("vecbook")


def log_config_in_use(config: Config, named: bool) -> None:
    """INFO the config file ``config`` was read from; WARN when it is the working folder's, found
    by the lookup (not ``named`` with ``--config``), and the user config holds sources it hides."""
    file = config.config_file
    if file is None:
        where = config.data_directory
        log.info("config: none (%s)", f"{where} is searched alone" if where else "nothing to search")
        return
    log.info("config: %s", file)
    hidden = [] if named or file.name != CONFIG_NAME or file.parent.resolve() != Path.cwd().resolve() \
        else _user_sources(file)
    if hidden:
        user = user_config_file()
        log.warning("reading ./%s, not your user config %s: its %s (%s) %s not searched here (`--config %s` "
                    "reads %s)", CONFIG_NAME, user, counted(len(hidden), "source"), ", ".join(hidden),
                    "is" if len(hidden) == 1 else "are", user, "it" if len(hidden) == 1 else "them")


def _user_sources(used: Path) -> list[str]:
    """The names of the user config's sources, where it is another file than ``used``; none
    where it is missing or is not TOML (a search with it would say why). Its tables are read, not
    loaded as a config: loading reads the ``VECBOOK_*`` variables again, and would repeat the
    warning about a misspelt one the config in use gave already."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    user = user_config_file()
    try:
        if not user.is_file() or user.resolve() == used.resolve():
            return []
        with open(user, "rb") as handle:
            tables = tomllib.load(handle).get("collections", [])
    except (OSError, ValueError):  # (TOMLDecodeError is a ValueError)
        return []
    return [str(table["name"]) for table in tables if isinstance(table, dict) and "name" in table] \
        if isinstance(tables, list) else []
