"""What Wharf offers a plugin during a call (the WIT ``host`` interface): logs, progress,
cancellation, configuration, request state and questions to the client (``ask``).

Inside a component these call the WIT imports; under plain Python (a plugin's unit
tests) they go to ``wharf_sdk.testing.test_host``."""

import json
from typing import Any, Optional

try:  # Inside a component built by componentize-py.
    from wit_world.imports import host as _wit
    from wit_world.imports import types as _types
except ImportError:  # Plain Python: the stand-in host.
    _wit = None
    _types = None

from .testing import test_host

_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def log(level: str, message: str) -> None:
    """Writes ``message`` to Wharf's log at ``level`` (``"info"``, ``"warning"``, ...)."""
    if level not in _LEVELS:
        raise ValueError(f"unknown log level {level!r}; the levels are {', '.join(_LEVELS)}")
    if _wit is None:
        test_host.log(level, str(message))
    else:
        _wit.log(_types.LogLevel[level.upper()], str(message))


def debug(message: str) -> None:
    log("debug", message)


def info(message: str) -> None:
    log("info", message)


def notice(message: str) -> None:
    log("notice", message)


def warning(message: str) -> None:
    log("warning", message)


def error(message: str) -> None:
    log("error", message)


def progress(progress: float, total: Optional[float] = None, message: Optional[str] = None) -> None:
    """Reports progress of the current call (``total`` when known)."""
    if _wit is None:
        test_host.report_progress(float(progress), total, message)
    else:
        _wit.progress(float(progress), None if total is None else float(total), message)


def is_cancelled() -> bool:
    """True once the client cancelled the current call or its deadline passed."""
    return test_host.is_cancelled() if _wit is None else _wit.is_cancelled()


def config(key: str, default: Optional[str] = None) -> Optional[str]:
    """A configuration value granted by the plugin's manifest (``[config]``)."""
    value = test_host.get_config(key) if _wit is None else _wit.config(key)
    return default if value is None else value


def state() -> Optional[str]:
    """The state this call kept with ``set_state`` in an earlier round, if any."""
    return test_host.request_state() if _wit is None else _wit.request_state()


def set_state(value: str) -> None:
    """Keeps ``value`` (at most 16 KiB) for the next round of this call."""
    if _wit is None:
        test_host.set_request_state(value)
    else:
        _wit.set_request_state(value)


def raw_ask(key: str, request: dict) -> tuple[str, Any]:
    """Asks ``request`` (``{"elicit-form": {...}}``, ``{"elicit-url": {...}}``,
    ``{"sampling": params}`` or ``{"list-roots": None}``); returns ``(outcome, value)``:
    ``("answered", json)``, ``("pending", None)``, ``("unsupported", None)`` or
    ``("failed", message)``."""
    if _wit is None:
        return test_host.ask(key, request)
    (kind, body), = request.items()
    if kind == "elicit-form":
        wit_request = _wit.InputRequest_ElicitForm(
            _wit.ElicitForm(message=body["message"], requested_schema=json.dumps(body["requestedSchema"])))
    elif kind == "elicit-url":
        wit_request = _wit.InputRequest_ElicitUrl(_wit.ElicitUrl(message=body["message"], url=body["url"]))
    elif kind == "sampling":
        wit_request = _wit.InputRequest_Sampling(json.dumps(body))
    elif kind == "list-roots":
        wit_request = _wit.InputRequest_ListRoots()
    else:
        raise ValueError(f"unknown input request {kind!r}")
    outcome = _wit.ask(key, wit_request)
    if isinstance(outcome, _wit.InputOutcome_Answered):
        return ("answered", json.loads(outcome.value))
    if isinstance(outcome, _wit.InputOutcome_Pending):
        return ("pending", None)
    if isinstance(outcome, _wit.InputOutcome_Unsupported):
        return ("unsupported", None)
    return ("failed", outcome.value)
