"""A stand-in for the WIT ``host`` import, used when the plugin runs under plain Python
(its unit tests): set ``test_host.config`` and ``test_host.answers`` (key -> the
client's JSON answer, or ``"pending"``/``"unsupported"``), read ``test_host.logs``,
``test_host.progress`` and ``test_host.asked``; ``test_host.reset()`` forgets all."""

import sys
from typing import Any, Optional


class TestHost:
    """What the stand-in host was told and will answer."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.config: dict[str, str] = {}
        self.answers: dict[str, Any] = {}
        self.logs: list[tuple[str, str]] = []
        self.progress: list[tuple[float, Optional[float], Optional[str]]] = []
        self.asked: dict[str, dict] = {}
        self.state: Optional[str] = None
        self.cancelled = False
        #: Also print log messages to standard error.
        self.echo_logs = False

    # The host interface, in the SDK's terms (levels as strings, requests as dicts).
    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))
        if self.echo_logs:
            print(f"[{level}] {message}", file=sys.stderr)

    def report_progress(self, progress: float, total: Optional[float], message: Optional[str]) -> None:
        self.progress.append((progress, total, message))

    def is_cancelled(self) -> bool:
        return self.cancelled

    def get_config(self, key: str) -> Optional[str]:
        return self.config.get(key)

    def ask(self, key: str, request: dict) -> tuple[str, Any]:
        self.asked[key] = request
        answer = self.answers.get(key, "pending")
        if answer == "pending":
            return ("pending", None)
        if answer == "unsupported":
            return ("unsupported", None)
        return ("answered", answer)

    def request_state(self) -> Optional[str]:
        return self.state

    def set_request_state(self, state: str) -> None:
        self.state = state


test_host = TestHost()
