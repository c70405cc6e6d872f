"""Matching URIs against the RFC 6570 templates a plugin declares: ``{var}`` matches one
path segment (no ``/``, ``?`` or ``#``), ``{+var}`` any text, and the literal text
between must match exactly (as the TypeScript SDK does)."""

import re
from typing import Optional

_EXPRESSION = re.compile(r"\{(\+?)([A-Za-z0-9_.]+)\}")


def variables_of(template: str) -> list[str]:
    """The template's variable names, in order."""
    return [m.group(2) for m in _EXPRESSION.finditer(template)]


def match_template(template: str, uri: str) -> Optional[dict[str, str]]:
    """The variables of ``uri`` under ``template`` (decoded, see ``_decode``), or None."""
    pattern = "^"
    names = []
    reserved = []
    last = 0
    for m in _EXPRESSION.finditer(template):
        pattern += re.escape(template[last:m.start()])
        pattern += "(.+?)" if m.group(1) == "+" else "([^/?#]+)"
        names.append(m.group(2))
        reserved.append(m.group(1) == "+")
        last = m.end()
    pattern += re.escape(template[last:]) + "$"
    found = re.match(pattern, uri)
    if not found:
        return None
    return {name: _decode(found.group(i + 1), reserved[i]) for i, name in enumerate(names)}


# RFC 6570's reserved characters (RFC 3986 gen-delims and sub-delims).
_RESERVED = b":/?#[]@!$&'()*+,;="
_HEX = b"0123456789abcdefABCDEF"


def _decode(text: str, keep_reserved: bool) -> str:
    """Percent-decodes ``text`` as the Rust SDK and Wharf do; left as it is if the result
    is not UTF-8. In a ``{+var}`` value (``keep_reserved``) a triplet that stands for a
    reserved character stays encoded: a reserved expansion copies reserved characters as
    they are, so ``%2F`` there can only stand for the text ``%2F``, never for a ``/``."""
    raw = text.encode()
    out = bytearray()
    at = 0
    while at < len(raw):
        triplet = raw[at:at + 3]
        if len(triplet) == 3 and triplet[0] == ord("%") and triplet[1] in _HEX and triplet[2] in _HEX:
            byte = int(triplet[1:], 16)
            if keep_reserved and byte in _RESERVED:
                out += triplet
            else:
                out.append(byte)
            at += 3
        else:
            out.append(raw[at])
            at += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return text
