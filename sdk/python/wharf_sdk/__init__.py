"""wharf_sdk: Wharf plugins in Python (componentize-py), over the ``wharf:plugin`` world.

    from wharf_sdk import Plugin

    plugin = Plugin()

    @plugin.tool
    def greet(name: str) -> str:
        \"\"\"Greets someone by name.

        Args:
            name: Who to greet.
        \"\"\"
        return f"Hello, {name}!"

    Tools, Prompts, Resources = plugin.exports()

See the README beside this package (or docs/sdk-python.md) for the whole API."""

from . import ask, host
from .content import ToolResult, assistant, audio, embedded_resource, image, resource_link, text, user
from .errors import InputFailed, InputPending, InputUnsupported, PromptError, ResourceError, ToolError
from .host import config, debug, error, info, is_cancelled, log, notice, progress, set_state, state, warning
from .plugin import Plugin
from .schema import Range, ValidationError, schema_of

__all__ = [
    "Plugin", "ToolResult", "ToolError", "PromptError", "ResourceError", "InputPending", "InputUnsupported",
    "InputFailed", "ValidationError", "ask", "host", "text", "image", "audio", "resource_link", "embedded_resource",
    "user", "assistant", "log", "debug", "info", "notice", "warning", "error", "progress", "is_cancelled", "config",
    "state", "set_state", "schema_of", "Range",
]
