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
    """``vecbook stats`` for a person (``stats_lines``)."""
    print("\n".join(stats_lines(stats)))


def stats_lines(stats: dict[str, Any]) -> list[str]:
    """``stats`` one value a line, nested values indented under their key, a list counted then
    one line an item; what is not there (None, an empty list or table) is left out, and so is
    the data folder's file count where there is no data folder (``--json`` keeps every key)."""
    shown = dict(stats)
    if stats.get("data_directory") is None:
        shown.pop("files", None)
        if isinstance(shown.get("sources"), dict) and not shown["sources"].get("files"):
            shown["sources"] = {name: count for name, count in shown["sources"].items() if name != "files"}
    return _lines(shown, "")


def _lines(values: dict[str, Any], indent: str) -> list[str]:
    lines: list[str] = []
    for key, value in values.items():
        if value is None or (isinstance(value, (list, dict, str)) and not value):
            continue
        if isinstance(value, list):
            lines.append(f"{indent}{key}: {len(value)}")
            lines += [f"{indent}  - {_item(item)}" for item in value]
        elif isinstance(value, dict):
            lines += [f"{indent}{key}:", *_lines(value, indent + "  ")]
        else:
            lines.append(f"{indent}{key}: {value}")
    return lines


def _item(item: Any) -> str:
    """A list's item on one line: a problem as it is logged, another table as JSON."""
    if isinstance(item, dict) and {"file_path", "line", "reason"} <= item.keys():
        return str(Problem(item["file_path"], item["line"], item["reason"]))
    return json_text(item, indent=None) if isinstance(item, (dict, list)) else str(item)


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
