"""Matching URIs against the RFC 6570 templates a plugin declares: ``{var}`` matches one
path segment (no ``/``, ``?`` or ``#``), ``{+var}`` any text, and the literal text
between must match exactly (as the TypeScript SDK does)."""

import re
import urllib.parse
from typing import Optional

_EXPRESSION = re.compile(r"\{(\+?)([A-Za-z0-9_.]+)\}")


def variables_of(template: str) -> list[str]:
    """The template's variable names, in order."""
    return [m.group(2) for m in _EXPRESSION.finditer(template)]


def match_template(template: str, uri: str) -> Optional[dict[str, str]]:
    """The (decoded) variables of ``uri`` under ``template``, or None."""
    pattern = "^"
    names = []
    last = 0
    for m in _EXPRESSION.finditer(template):
        pattern += re.escape(template[last:m.start()])
        pattern += "(.+?)" if m.group(1) == "+" else "([^/?#]+)"
        names.append(m.group(2))
        last = m.end()
    pattern += re.escape(template[last:]) + "$"
    found = re.match(pattern, uri)
    if not found:
        return None
    return {name: urllib.parse.unquote(found.group(i + 1)) for i, name in enumerate(names)}
