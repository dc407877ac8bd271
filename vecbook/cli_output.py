"""What ``vecbook stats`` and ``vecbook sources`` print for a person (``--json`` prints the data
as it is, in ``cli``)."""

from __future__ import annotations

from typing import Any

from .config import Config
from .exports.notes import describe_kinds
from .exports.outlook_files import outlook_advice
from .hit_lines import json_text
from .records import Problem
from .source_counts import held


def print_stats(stats: dict[str, Any]) -> None:
    """``vecbook stats``: one line a value; a list (the problems) counted, then one line an item."""
    for key, value in stats.items():
        if isinstance(value, list):
            print(f"{key}: {len(value)}")
            for item in value:
                print(f"  - {Problem(item['file_path'], item['line'], item['reason'])}"
                      if isinstance(item, dict) else f"  - {item}")
        elif isinstance(value, dict):
            print(f"{key}: {json_text(value, indent=None)}")
        else:
            print(f"{key}: {value}")


def print_sources(config: Config, listed: list[dict[str, Any]]) -> None:
    """``vecbook sources``: the config in use, then each source with what it holds."""
    from .registry import left_out_lines

    print(f"config: {config.config_file or 'none'}")
    if config.cache_directory is None:
        print("last indexed: at every start (the cache is off)")
    for source in listed:
        dates = f", {source['first_date']} to {source['last_date']}" if source["first_date"] else ""
        holds = held(source["records"], source["windows"], source["messages"])
        print(f"\n{source['name']}: {source['format']}, {holds}{dates}")
        print(f"  path: {source['path']}")
        if source["kinds"] or source["not_read"]:
            print(f"  files: {describe_kinds(source['kinds'], source['not_read'])}")
            print("".join(f"    {advice}\n" for advice in outlook_advice(source["not_read"])), end="")
        if source["description"]:
            print(f"  description: {source['description']}")
        if config.cache_directory is not None and source["last_indexed"]:
            print(f"  last indexed: {source['last_indexed']}")
        for line in left_out_lines(source.get("left_out", [])):
            print(f"  {line}")
        if source["problems"]:
            print(f"  problems: {len(source['problems'])} (`vecbook stats` lists them)")
