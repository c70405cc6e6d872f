"""Results and their contents, in MCP's JSON shape (so that a native test sees what a
client will); the SDK converts them to the WIT types at the component boundary."""

import json
from typing import Any, Optional


def text(value: str) -> dict:
    """Text (or Markdown) content."""
    return {"type": "text", "text": str(value)}


def image(data: bytes, mime_type: str) -> dict:
    """An image (raw bytes, such as PNG)."""
    return {"type": "image", "data": bytes(data), "mimeType": mime_type}


def audio(data: bytes, mime_type: str) -> dict:
    """An audio clip."""
    return {"type": "audio", "data": bytes(data), "mimeType": mime_type}


def resource_link(uri: str, name: str, *, title: Optional[str] = None, description: Optional[str] = None,
                  mime_type: Optional[str] = None, size: Optional[int] = None) -> dict:
    """A link to a resource the client may read."""
    link = {"type": "resource_link", "uri": uri, "name": name}
    for key, value in (("title", title), ("description", description), ("mimeType", mime_type), ("size", size)):
        if value is not None:
            link[key] = value
    return link


def embedded_resource(uri: str, *, text: Optional[str] = None, blob: Optional[bytes] = None,
                      mime_type: Optional[str] = None) -> dict:
    """A resource's contents embedded in a result or a prompt message."""
    resource: dict = {"uri": uri}
    if mime_type is not None:
        resource["mimeType"] = mime_type
    if blob is not None:
        resource["blob"] = bytes(blob)
    else:
        resource["text"] = text or ""
    return {"type": "resource", "resource": resource}


def _content(item: Any) -> dict:
    return text(item) if isinstance(item, str) else item


def compact_json(value: Any) -> str:
    """JSON text without spaces, as the TypeScript SDK writes it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class ToolResult:
    """What a tool call produced: contents, optional structured output, the is-error flag."""

    def __init__(self, content: Optional[list] = None, structured_content: Any = None, is_error: bool = False):
        self.content = list(content or [])
        self.structured_content = structured_content
        self.is_error = is_error

    @staticmethod
    def text(value: str) -> "ToolResult":
        """A result holding text."""
        return ToolResult([text(value)])

    @staticmethod
    def error(message: str) -> "ToolResult":
        """A failed result the model should see and may correct (``isError: true``)."""
        return ToolResult([text(message)], None, True)

    @staticmethod
    def structured(value: dict) -> "ToolResult":
        """Structured output (a JSON object) with its JSON text as content."""
        return ToolResult([text(compact_json(value))], value)

    @staticmethod
    def of(*items: Any) -> "ToolResult":
        """A result holding these contents (strings become text)."""
        return ToolResult([_content(item) for item in items])

    def with_(self, item: Any) -> "ToolResult":
        """Adds a content item (a string becomes text)."""
        return ToolResult([*self.content, _content(item)], self.structured_content, self.is_error)

    def as_error(self) -> "ToolResult":
        """The same result, flagged as an error."""
        return ToolResult(self.content, self.structured_content, True)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolResult) and (self.content, self.structured_content, self.is_error) == (
            other.content, other.structured_content, other.is_error)

    def __repr__(self) -> str:
        return f"ToolResult({self.content!r}, {self.structured_content!r}, {self.is_error!r})"


def user(content: Any) -> dict:
    """A prompt message spoken by the user (a string becomes text)."""
    return {"role": "user", "content": _content(content)}


def assistant(content: Any) -> dict:
    """A prompt message spoken by the assistant."""
    return {"role": "assistant", "content": _content(content)}
