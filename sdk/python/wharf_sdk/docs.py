"""Descriptions from docstrings: the summary (everything before the first section) and
the entries of an ``Args:``/``Arguments:``/``Parameters:``/``Attributes:``/``Fields:``
section (Google style, ``name: text`` or ``name (type): text``), or reST ``:param name:``
lines. Python keeps docstrings at run time, so they reach clients without a build step."""

import inspect
import re
from typing import Optional

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Attributes|Fields|Returns|Raises|Yields|Examples?|Notes?):\s*$")
_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(.*)$")
_PARAM = re.compile(r"^:(?:param|ivar|var)\s+(?:\S+\s+)?([A-Za-z_][A-Za-z0-9_]*):\s*(.*)$")
_FIELD_SECTIONS = {"Args", "Arguments", "Parameters", "Params", "Attributes", "Fields"}


def parse(doc: Optional[str]) -> tuple[Optional[str], dict[str, str]]:
    """The summary and the per-name descriptions of a docstring."""
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    fields: dict[str, str] = {}
    section: Optional[str] = None
    current: Optional[str] = None
    for line in lines:
        stripped = line.strip()
        header = _SECTION.match(stripped) if not line.startswith((" ", "\t")) else None
        if header:
            section, current = header.group(1), None
            continue
        param = _PARAM.match(stripped)
        if param:
            current = param.group(1)
            fields[current] = param.group(2).strip()
            section = "Args"
            continue
        if section is None:
            summary.append(line)
            continue
        if section not in _FIELD_SECTIONS:
            continue
        entry = _ENTRY.match(stripped) if line.startswith((" ", "\t")) and not line.startswith(("        ", "\t\t")) else None
        if entry:
            current = entry.group(1).lstrip("*")
            fields[current] = entry.group(3).strip()
        elif current and stripped:
            fields[current] = f"{fields[current]} {stripped}".strip()
    text = "\n".join(summary).strip()
    return (text or None), fields
