"""The plugin: tools, prompts and resources declared with decorators, dispatch by name
or URI, and the classes that implement the WIT ``tools``, ``prompts`` and ``resources``
interfaces (``Tools, Prompts, Resources = plugin.exports()`` in ``app.py``, which
componentize-py looks up). Every call is a fresh instance, so the module's top level
runs once per call: keep it to declaring."""

import dataclasses
import inspect
import json
import re
import typing
from typing import Any, Callable, Optional

from . import docs, schema
from .content import ToolResult, compact_json, text
from .errors import InputFailed, InputPending, InputUnsupported, PromptError, ResourceError, ToolError
from .uri_template import match_template, variables_of

_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
_MISSING = dataclasses.MISSING


def _check_name(kind: str, name: str, taken: dict) -> None:
    if not _NAME.match(name):
        raise ValueError(f"{kind} name {name!r} must be 1 to 64 characters of A-Z a-z 0-9 _ - .")
    if name in taken:
        raise ValueError(f"two {kind}s are named {name!r}")


def _parameters(function: Callable, skip: tuple[str, ...] = ()) -> list:
    """(name, hint, required, default, description) of a function's parameters."""
    hints = typing.get_type_hints(function, include_extras=True)
    _, param_docs = docs.parse(function.__doc__)
    out = []
    for name, param in inspect.signature(function).parameters.items():
        if name in skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        hint = hints.get(name, Any)
        default = _MISSING if param.default is param.empty else param.default
        out.append((name, hint, default is _MISSING, default, param_docs.get(name)))
    return out


def _structured_type(hint: Any) -> bool:
    return dataclasses.is_dataclass(hint) or schema._is_typeddict(hint)


def _suggest(complete: Any, value: str, context: dict) -> list[str]:
    if complete is None:
        return []
    found = complete(value, context) if callable(complete) else [c for c in complete if c.startswith(value)]
    return [str(s) for s in list(found)[:100]]


@dataclasses.dataclass
class _Tool:
    name: str
    function: Callable
    title: Optional[str]
    description: Optional[str]
    params: list
    output: Any
    annotations: dict


@dataclasses.dataclass
class _Prompt:
    name: str
    function: Callable
    title: Optional[str]
    description: Optional[str]
    params: list
    complete: dict


@dataclasses.dataclass
class _Resource:
    uri: str
    name: str
    function: Callable
    title: Optional[str]
    description: Optional[str]
    mime_type: Optional[str]
    size: Optional[int]
    poll_ms: Optional[int]


@dataclasses.dataclass
class _Template:
    uri_template: str
    name: str
    function: Callable
    title: Optional[str]
    description: Optional[str]
    mime_type: Optional[str]
    complete: dict


def _decorator(register: Callable, function: Optional[Callable], options: dict):
    """Supports both ``@plugin.tool`` and ``@plugin.tool(...)``."""
    if function is not None:
        register(function, **options)
        return function

    def wrap(f: Callable) -> Callable:
        register(f, **options)
        return f

    return wrap


class Plugin:
    """A plugin's tools, prompts and resources."""

    def __init__(self) -> None:
        self._tools: dict[str, _Tool] = {}
        self._prompts: dict[str, _Prompt] = {}
        self._resources: dict[str, _Resource] = {}
        self._templates: dict[str, _Template] = {}

    # ---- Declaring ----

    def tool(self, function: Optional[Callable] = None, *, name: Optional[str] = None, title: Optional[str] = None,
             description: Optional[str] = None, read_only: Optional[bool] = None, destructive: Optional[bool] = None,
             idempotent: Optional[bool] = None, open_world: Optional[bool] = None):
        """Declares a tool: its parameters (type hints, defaults, docstring ``Args:``) are
        the input schema; a dataclass or TypedDict return annotation makes it a tool
        with structured output. The docstring's summary is the description."""
        options = dict(name=name, title=title, description=description, annotations=dict(
            readOnlyHint=read_only, destructiveHint=destructive, idempotentHint=idempotent, openWorldHint=open_world))
        return _decorator(self._add_tool, function, options)

    def _add_tool(self, function: Callable, *, name, title, description, annotations) -> None:
        name = name or function.__name__
        _check_name("tool", name, self._tools)
        summary, _ = docs.parse(function.__doc__)
        output = typing.get_type_hints(function, include_extras=True).get("return")
        if title is not None:
            annotations = {"title": title, **annotations}
        self._tools[name] = _Tool(name, function, title, description or summary, _parameters(function),
                                  output if _structured_type(output) else None,
                                  {k: v for k, v in annotations.items() if v is not None})

    def prompt(self, function: Optional[Callable] = None, *, name: Optional[str] = None, title: Optional[str] = None,
               description: Optional[str] = None, complete: Optional[dict] = None):
        """Declares a prompt: its string parameters are the arguments (required unless
        they have a default; described by the docstring's ``Args:``). It returns
        messages (``user(...)``, ``assistant(...)``), a string (one user message) or
        ``{"description": ..., "messages": [...]}``. ``complete`` maps an argument to a
        list of suggestions (filtered by prefix) or a function ``(value, context)``."""
        return _decorator(self._add_prompt, function, dict(name=name, title=title, description=description,
                                                           complete=complete or {}))

    def _add_prompt(self, function: Callable, *, name, title, description, complete) -> None:
        name = name or function.__name__
        _check_name("prompt", name, self._prompts)
        summary, _ = docs.parse(function.__doc__)
        self._prompts[name] = _Prompt(name, function, title, description or summary, _parameters(function), complete)

    def resource(self, uri: str, *, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, mime_type: Optional[str] = None, size: Optional[int] = None,
                 poll_ms: Optional[int] = None):
        """Declares the resource at ``uri``; the function returns its text (``str``), its
        bytes, or contents (``{"text": ...}``/``{"blob": ...}``, or a list of them)."""
        def wrap(function: Callable) -> Callable:
            if uri in self._resources:
                raise ValueError(f"two resources have the URI {uri}")
            summary, _ = docs.parse(function.__doc__)
            self._resources[uri] = _Resource(uri, name or function.__name__, function, title,
                                             description or summary, mime_type, size, poll_ms)
            return function
        return wrap

    def resource_template(self, uri_template: str, *, name: Optional[str] = None, title: Optional[str] = None,
                          description: Optional[str] = None, mime_type: Optional[str] = None,
                          complete: Optional[dict] = None):
        """Declares resources described by an RFC 6570 template; the function takes the
        template's variables as keyword arguments (and ``uri`` if it names it)."""
        def wrap(function: Callable) -> Callable:
            if uri_template in self._templates:
                raise ValueError(f"two resource templates are {uri_template}")
            summary, _ = docs.parse(function.__doc__)
            self._templates[uri_template] = _Template(uri_template, name or function.__name__, function, title,
                                                      description or summary, mime_type, complete or {})
            return function
        return wrap

    # ---- Native API: what Wharf would get, in MCP's JSON shape (for tests). ----

    def list_tools(self) -> list[dict]:
        """The tools as ``tools/list`` shows them (before Wharf prefixes the names)."""
        out = []
        for tool in self._tools.values():
            listed: dict = {"name": tool.name, "inputSchema": schema._object_schema(tool.params, {})}
            if tool.title is not None:
                listed["title"] = tool.title
            if tool.description is not None:
                listed["description"] = tool.description
            if tool.output is not None:
                listed["outputSchema"] = schema.schema_of(tool.output)
            if tool.annotations:
                listed["annotations"] = tool.annotations
            out.append(listed)
        return out

    def call_tool(self, name: str, arguments: Any = None) -> ToolResult:
        """Runs tool ``name`` with ``arguments`` (a dict or JSON text); returns its
        ``ToolResult`` or raises ``ToolError``."""
        tool = self._tools.get(name)
        if tool is None:
            raise ToolError("unknown-tool", name)
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                raise ToolError.invalid_arguments("the arguments are not valid JSON") from None
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict):
            raise ToolError.invalid_arguments(f"expected an object, got {schema._describe(arguments)}")
        try:
            kwargs = schema.convert_fields(arguments, tool.params)
        except schema.ValidationError as error:
            raise ToolError.invalid_arguments(str(error)) from None
        value = tool.function(**kwargs)
        if isinstance(value, ToolResult):
            return value
        if tool.output is not None:
            data = schema.to_json(value)
            if not isinstance(data, dict):
                raise ToolError.failed(f"the output of `{name}` is not an object")
            return ToolResult.structured(data)
        if isinstance(value, list):
            return ToolResult.of(*value)
        if isinstance(value, dict) and isinstance(value.get("type"), str):
            return ToolResult.of(value)
        return ToolResult.text("" if value is None else str(value))

    def list_prompts(self) -> list[dict]:
        """The prompts as ``prompts/list`` shows them."""
        out = []
        for prompt in self._prompts.values():
            listed: dict = {"name": prompt.name, "arguments": []}
            if prompt.title is not None:
                listed["title"] = prompt.title
            if prompt.description is not None:
                listed["description"] = prompt.description
            for arg, _, required, _, description in prompt.params:
                entry: dict = {"name": arg, "required": required}
                if description:
                    entry["description"] = description
                listed["arguments"].append(entry)
            out.append(listed)
        return out

    def get_prompt(self, name: str, arguments: Optional[dict] = None) -> dict:
        """Renders prompt ``name``: ``{"description"?: ..., "messages": [...]}``."""
        prompt = self._prompts.get(name)
        if prompt is None:
            raise PromptError("unknown-prompt", name)
        arguments = arguments or {}
        kwargs = {}
        for arg, _, required, _, _ in prompt.params:
            if arg in arguments:
                kwargs[arg] = arguments[arg]
            elif required:
                raise PromptError.invalid_arguments(f"missing required argument `{arg}`")
        rendered = prompt.function(**kwargs)
        if isinstance(rendered, str):
            return {"messages": [{"role": "user", "content": text(rendered)}]}
        if isinstance(rendered, list):
            return {"messages": rendered}
        return rendered

    def complete_prompt_argument(self, name: str, argument: str, value: str, context: Optional[dict] = None) -> list:
        prompt = self._prompts.get(name)
        return _suggest(prompt.complete.get(argument) if prompt else None, value, context or {})

    def list_resources(self) -> list[dict]:
        """The resources as ``resources/list`` shows them (before Wharf prefixes URIs)."""
        out = []
        for r in self._resources.values():
            listed = {"uri": r.uri, "name": r.name}
            for key, value in (("title", r.title), ("description", r.description), ("mimeType", r.mime_type),
                               ("size", r.size), ("pollMs", r.poll_ms)):
                if value is not None:
                    listed[key] = value
            out.append(listed)
        return out

    def list_resource_templates(self) -> list[dict]:
        out = []
        for t in self._templates.values():
            listed = {"uriTemplate": t.uri_template, "name": t.name}
            for key, value in (("title", t.title), ("description", t.description), ("mimeType", t.mime_type)):
                if value is not None:
                    listed[key] = value
            out.append(listed)
        return out

    def read_resource(self, uri: str) -> list[dict]:
        """Reads ``uri``: ``[{"uri", "mimeType"?, "text" | "blob"}]``; raises ``ResourceError``."""
        resource = self._resources.get(uri)
        if resource is not None:
            return _contents(uri, resource.mime_type, resource.function())
        for template in self._templates.values():
            variables = match_template(template.uri_template, uri)
            if variables is None:
                continue
            wanted = inspect.signature(template.function).parameters
            kwargs = {k: v for k, v in variables.items() if k in wanted}
            if "uri" in wanted:
                kwargs["uri"] = uri
            return _contents(uri, template.mime_type, template.function(**kwargs))
        raise ResourceError.not_found(uri)

    def complete_template_variable(self, uri_template: str, variable: str, value: str,
                                   context: Optional[dict] = None) -> list:
        template = self._templates.get(uri_template)
        if template is None or variable not in variables_of(uri_template):
            return []
        return _suggest(template.complete.get(variable), value, context or {})

    # ---- The WIT exports ----

    def exports(self) -> tuple[type, type, type]:
        """The classes componentize-py instantiates for the WIT interfaces:
        ``Tools, Prompts, Resources = plugin.exports()`` in ``app.py``. Under plain
        Python (no bindings) the classes only say so: test through ``call_tool`` etc."""
        try:
            from . import _wit
        except ImportError:
            return _unavailable("Tools"), _unavailable("Prompts"), _unavailable("Resources")
        return _wit.export_classes(self)


def _unavailable(name: str) -> type:
    def __init__(self: Any) -> None:
        raise RuntimeError(f"{name} implements a WIT interface and works only inside a component "
                           "built by componentize-py; test the plugin through Plugin.call_tool and friends")

    return type(name, (), {"__init__": __init__})


def _contents(uri: str, mime_type: Optional[str], value: Any) -> list[dict]:
    def one(item: Any) -> dict:
        if isinstance(item, str):
            out = {"uri": uri, "text": item}
        elif isinstance(item, (bytes, bytearray)):
            out = {"uri": uri, "blob": bytes(item)}
        else:
            out = {"uri": uri, **item}
        if mime_type is not None and "mimeType" not in out:
            out["mimeType"] = mime_type
        return out

    return [one(v) for v in value] if isinstance(value, list) else [one(value)]


def guard(body: Callable[[], Any], on_pending: Callable[[], Any], failed: Callable[[str], Exception]) -> Any:
    """Runs ``body`` for Wharf: a pending question ends the call early (Wharf ignores
    the result and asks the client); ``InputUnsupported``, ``InputFailed`` and any
    other exception become ``failed`` with their message rather than a trap."""
    try:
        return body()
    except InputPending:
        return on_pending()
    except (ToolError, PromptError, ResourceError):
        raise
    except (InputUnsupported, InputFailed) as error:
        raise failed(str(error)) from None
    except Exception as error:  # noqa: BLE001 - reported to the client, not lost
        raise failed(str(error) or type(error).__name__) from None
