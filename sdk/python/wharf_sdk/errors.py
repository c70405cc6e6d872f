"""Why a call has no ordinary result."""


class ToolError(Exception):
    """A tool call that could not run: ``ToolError.failed(...)`` (a tool execution
    error the model cannot fix) or ``ToolError.invalid_arguments(...)``."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message

    @staticmethod
    def failed(message: str) -> "ToolError":
        return ToolError("failed", message)

    @staticmethod
    def invalid_arguments(message: str) -> "ToolError":
        return ToolError("invalid-arguments", message)


class PromptError(Exception):
    """A prompt that could not be rendered."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message

    @staticmethod
    def failed(message: str) -> "PromptError":
        return PromptError("failed", message)

    @staticmethod
    def invalid_arguments(message: str) -> "PromptError":
        return PromptError("invalid-arguments", message)


class ResourceError(Exception):
    """A resource that could not be read."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message

    @staticmethod
    def not_found(uri: str) -> "ResourceError":
        return ResourceError("not-found", uri)

    @staticmethod
    def failed(message: str) -> "ResourceError":
        return ResourceError("failed", message)


class InputPending(Exception):
    """Raised by the ``ask`` functions while the client's answer is pending: the SDK
    ends the call and Wharf calls again, from the start, once it is answered. Let it
    pass (do not catch it)."""

    def __init__(self, key: str):
        super().__init__(f"the answer to `{key}` is pending")
        self.key = key


class InputUnsupported(Exception):
    """The client lacks the capability a question needs."""

    def __init__(self, key: str):
        super().__init__(f"the client cannot answer `{key}`: it lacks the capability")
        self.key = key


class InputFailed(Exception):
    """The question was malformed or the client failed to answer it."""

    def __init__(self, key: str, message: str):
        super().__init__(f"asking `{key}` failed: {message}")
        self.key = key
