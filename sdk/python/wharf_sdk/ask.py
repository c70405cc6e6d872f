"""Questions to the client in the middle of a call (a tool call, a prompt rendering, a
resource read). Write the code as if answers came at once: while an answer is pending
these functions raise ``InputPending``, the SDK ends the call, and Wharf calls again
from the start once the client answered, when the same key returns its answer."""

import dataclasses
from typing import Any, Callable, Generic, Optional, TypeVar

from . import host, schema
from .errors import InputFailed, InputPending, InputUnsupported

T = TypeVar("T")


@dataclasses.dataclass
class Elicited(Generic[T]):
    """The user's answer to a form: ``action`` is ``"accept"`` (then ``content`` holds
    the form, checked against its type), ``"decline"`` or ``"cancel"``."""

    action: str
    content: Optional[T] = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


def _answer(key: str, request: dict) -> Any:
    outcome, value = host.raw_ask(key, request)
    if outcome == "answered":
        return value
    if outcome == "pending":
        raise InputPending(key)
    if outcome == "unsupported":
        raise InputUnsupported(key)
    raise InputFailed(key, value)


def elicit(key: str, message: str, form: type[T]) -> Elicited[T]:
    """Asks the user to fill in ``form`` (a dataclass or TypedDict of strings, numbers,
    booleans and Literal/Enum choices; its docstring documents the fields)."""
    requested = schema.schema_of(form)
    answer = _answer(key, {"elicit-form": {"message": message, "requestedSchema": requested}})
    action = answer.get("action", "cancel")
    if action == "accept":
        return Elicited("accept", schema.convert(answer.get("content") or {}, form))
    return Elicited(action)


def elicit_url(key: str, message: str, url: str) -> str:
    """Sends the user to ``url``; returns the action (``"accept"``, ``"decline"``, ``"cancel"``)."""
    return _answer(key, {"elicit-url": {"message": message, "url": url}}).get("action", "cancel")


def sample(key: str, params: dict) -> dict:
    """``sampling/createMessage`` with ``params``; the client's ``CreateMessageResult``."""
    return _answer(key, {"sampling": params})


def sample_text(key: str, prompt: str, max_tokens: int = 400) -> str:
    """Asks the client's model ``prompt``; its text answer."""
    result = sample(key, {"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                          "maxTokens": max_tokens})
    content = result.get("content")
    items = content if isinstance(content, list) else [content]
    return "".join(c.get("text", "") for c in items if isinstance(c, dict) and c.get("type") == "text")


def list_roots(key: str) -> list[dict]:
    """The client's roots: ``[{"uri": ..., "name": ...}]``."""
    return _answer(key, {"list-roots": None}).get("roots", [])


def together(*questions: Callable[[], Any]) -> list[Any]:
    """Asks several questions in one round: calls each, and if any answer is pending
    raises only after all were asked, so they reach the client together."""
    answers: list[Any] = []
    pending: Optional[InputPending] = None
    for question in questions:
        try:
            answers.append(question())
        except InputPending as error:
            pending = pending or error
            answers.append(None)
    if pending is not None:
        raise pending
    return answers
