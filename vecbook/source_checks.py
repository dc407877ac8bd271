"""Whether a config has anything to search: its data folder there, or a collection named.

Apart from ``sources`` (whose readers import numpy), so ``serve`` checks it before answering an
MCP client's handshake: a server with nothing to search says so at start, even when the client
leaves before its first message."""

from __future__ import annotations

import os
from pathlib import Path

from .config import CONFIG_NAME, Config, ConfigError, user_config_file


def check_sources(config: Config) -> None:
    """The data directory must be a folder; with none (a config of collections only) there must be
    a collection, else there is nothing to search and the error says how to add a source."""
    path = config.data_directory
    if path is None:
        if not config.collections:
            raise ConfigError(f"nothing to search: no {CONFIG_NAME} here or in {user_config_file().parent}; "
                              f"add a source with `vecbook add PATH` (a notes folder, a chat export...), "
                              f"or pass --data-dir DIR or --config FILE")
        return
    if not path.exists():
        named = os.environ.get("VECBOOK_DATA_DIRECTORY")
        if named and (Path.cwd() / Path(named).expanduser()).resolve() == path.resolve():
            raise ConfigError(f"data directory not found: {path} (from VECBOOK_DATA_DIRECTORY: create the folder, "
                              f"or set the variable to one that exists)")
        raise ConfigError(f"data directory not found: {path} (create it, or set data_directory in "
                          f"{CONFIG_NAME} or pass --data-dir)")
    if not path.is_dir():
        raise ConfigError(f"data directory is not a folder: {path}")
