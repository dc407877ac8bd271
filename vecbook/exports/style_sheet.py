"""An HTML mail's ``<style>`` sheet, as far as it hides text: the declarations its rules give
elements by their class or id, for ``html_text`` to weigh as it weighs an inline style.

Newsletter templates (Litmus's, Campaign Monitor's, Stripo's) hide their preheader with a rule,
``.preheader { display:none !important }``, as often as with an inline style. Only simple
selectors are read (``.preheader``, ``#preview``, ``span.preheader``, a comma list of them): no
CSS engine, and descendant or attribute selectors are left unread, so what they hide is read.
A rule inside an at-rule (``@media``, ``@supports``) applies to some screens only and hides
nothing; one there that sets a property a top-level rule also sets may show what that rule hid
(a mobile-first template's desktop column), so such a property is left out of the sheet.
"""

from __future__ import annotations

import re

# (one never closed ends at the end, as CSS reads it: each opening searched to the end was quadratic)
CSS_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.S)
# <!-- and --> around a sheet (kept from the days browsers showed CSS as text) are no CSS.
SGML_COMMENT = re.compile(r"<!--|-->")
# tag.class, .class, tag#id or #id: one element's selector, no combinator, no attribute.
SIMPLE_SELECTOR = re.compile(r"^([a-z][a-z0-9]*)?([.#])(-?[_a-z][\w-]*)$", re.I)
# The properties a rule can hide text with (html_text reads them as it reads an inline style).
HIDING_PROPERTIES = frozenset({"display", "visibility", "opacity", "max-height", "height", "overflow", "overflow-y",
                               "font-size"})

Rules = dict[tuple[str, str], dict[str, str]]  # ("." or "#", lower-case name) -> {property: value}


def sheet_rules(css: str, rules: Rules, shown: set[tuple[str, str]]) -> None:
    """Add a ``<style>`` element's top-level rules for simple selectors to ``rules`` (a later one
    overriding an earlier one, as in CSS, unless that was ``!important``), and to ``shown``
    the (selector, property) pairs a rule inside an at-rule sets."""
    css = SGML_COMMENT.sub(" ", CSS_COMMENT.sub(" ", css))
    depth, start, at_rule, selectors = 0, 0, False, ""
    for found in re.finditer(r"[{};]", css):
        char = found.group()
        if char == "{":
            if depth == 0:
                at_rule = css[start:found.start()].strip().startswith("@")
            selectors, start = css[start:found.start()], found.end()
            depth += 1
        elif char == "}":
            if depth and (depth == 1 and not at_rule or depth == 2 and at_rule):
                _add(selectors, css[start:found.start()], rules, shown, inside_at_rule=depth == 2)
            depth, start = max(0, depth - 1), found.end()
        elif depth == 0:  # the end of a statement: @import, @charset
            start = found.end()


def _add(selectors: str, body: str, rules: Rules, shown: set[tuple[str, str]], inside_at_rule: bool) -> None:
    declarations = declared(body)
    for selector in selectors.split(","):
        found = SIMPLE_SELECTOR.match(selector.strip())
        if found is None:
            continue
        key = (found.group(2), found.group(3).lower())
        if inside_at_rule:
            shown.update((key, name) for name in declarations)
            continue
        held = rules.setdefault(key, {})
        for name, value in declarations.items():
            if "!important" not in held.get(name, "") or "!important" in value:
                held[name] = value


def declared(style: str) -> dict[str, str]:
    """A declaration block's hiding properties, ``{name: value}`` in lower case."""
    pairs = (part.partition(":") for part in style.lower().split(";"))
    return {name.strip(): " ".join(value.split()) for name, colon, value in pairs
            if colon and name.strip() in HIDING_PROPERTIES}


def element_style(values: dict[str, str], rules: Rules, shown: set[tuple[str, str]]) -> str:
    """An element's inline style with the sheet's rules for its classes and id put before it:
    an inline declaration wins over a rule's, unless the rule's is ``!important``."""
    inline = values.get("style", "")
    keys = [(".", name) for name in values["class"].lower().split()] if "class" in values else []
    if "id" in values and (element_id := values["id"].strip().lower()):
        keys.append(("#", element_id))
    merged: dict[str, str] = {}
    for key in keys:
        for name, value in rules.get(key, {}).items():
            if (key, name) not in shown:
                merged[name] = value
    if not merged:
        return inline
    for name, value in declared(inline).items():
        if "!important" not in merged.get(name, ""):
            merged[name] = value
    return "; ".join(f"{name}: {value}" for name, value in merged.items())
