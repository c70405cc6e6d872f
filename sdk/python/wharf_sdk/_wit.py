"""Conversion between the SDK's MCP-shaped values and the bindings componentize-py
generates for the ``wharf:plugin`` world (imported only inside a component)."""

import json
from typing import Any

from componentize_py_types import Err
from wit_world.exports import prompts as wit_prompts
from wit_world.exports import resources as wit_resources
from wit_world.imports import types as t

from .errors import PromptError, ResourceError, ToolError
from .plugin import guard

_TOOL_ERRORS = {"unknown-tool": t.ToolError_UnknownTool, "invalid-arguments": t.ToolError_InvalidArguments,
                "failed": t.ToolError_Failed}
_PROMPT_ERRORS = {"unknown-prompt": wit_prompts.PromptError_UnknownPrompt,
                  "invalid-arguments": wit_prompts.PromptError_InvalidArguments,
                  "failed": wit_prompts.PromptError_Failed}
_RESOURCE_ERRORS = {"not-found": wit_resources.ResourceError_NotFound, "failed": wit_resources.ResourceError_Failed}


def _body(item: dict) -> Any:
    if item.get("blob") is not None:
        return t.ResourceBody_Blob(bytes(item["blob"]))
    return t.ResourceBody_Text(item.get("text", ""))


def content(item: dict) -> Any:
    kind = item["type"]
    if kind == "text":
        return t.Content_Text(item["text"])
    if kind == "image":
        return t.Content_Image(t.BinaryContent(data=item["data"], mime_type=item["mimeType"]))
    if kind == "audio":
        return t.Content_Audio(t.BinaryContent(data=item["data"], mime_type=item["mimeType"]))
    if kind == "resource_link":
        return t.Content_ResourceLink(t.ResourceLink(
            uri=item["uri"], name=item["name"], title=item.get("title"), description=item.get("description"),
            mime_type=item.get("mimeType"), size=item.get("size")))
    if kind == "resource":
        r = item["resource"]
        return t.Content_EmbeddedResource(t.EmbeddedResource(uri=r["uri"], mime_type=r.get("mimeType"), body=_body(r)))
    raise ValueError(f"unknown content type {kind!r}")


def _raise_as(error: Exception, table: dict) -> None:
    raise Err(table[error.kind](error.message))


def export_classes(plugin: Any) -> tuple[type, type, type]:
    class Tools:
        def list_tools(self) -> list:
            out = []
            for tool in plugin.list_tools():
                a = tool.get("annotations")
                out.append(t.Tool(
                    name=tool["name"], title=tool.get("title"), description=tool.get("description"),
                    input_schema=json.dumps(tool["inputSchema"]),
                    output_schema=json.dumps(tool["outputSchema"]) if "outputSchema" in tool else None,
                    annotations=t.ToolAnnotations(
                        title=a.get("title"), read_only_hint=a.get("readOnlyHint"),
                        destructive_hint=a.get("destructiveHint"), idempotent_hint=a.get("idempotentHint"),
                        open_world_hint=a.get("openWorldHint")) if a else None))
            return out

        def call_tool(self, name: str, arguments: str) -> Any:
            def body() -> Any:
                result = plugin.call_tool(name, arguments)
                structured = result.structured_content
                return t.CallResult(content=[content(c) for c in result.content],
                                    structured_content=None if structured is None else json.dumps(structured),
                                    is_error=result.is_error)
            try:
                return guard(body, lambda: t.CallResult(content=[], structured_content=None, is_error=False),
                             ToolError.failed)
            except ToolError as error:
                _raise_as(error, _TOOL_ERRORS)

    class Prompts:
        def list_prompts(self) -> list:
            return [wit_prompts.Prompt(
                name=p["name"], title=p.get("title"), description=p.get("description"),
                arguments=[wit_prompts.PromptArgument(name=a["name"], title=a.get("title"),
                                                      description=a.get("description"), required=a["required"])
                           for a in p["arguments"]]) for p in plugin.list_prompts()]

        def get_prompt(self, name: str, arguments: list) -> Any:
            def body() -> Any:
                result = plugin.get_prompt(name, dict(arguments))
                return wit_prompts.PromptResult(
                    description=result.get("description"),
                    messages=[wit_prompts.PromptMessage(role=wit_prompts.Role[m["role"].upper()],
                                                        content=content(m["content"]))
                              for m in result["messages"]])
            try:
                return guard(body, lambda: wit_prompts.PromptResult(description=None, messages=[]),
                             PromptError.failed)
            except PromptError as error:
                _raise_as(error, _PROMPT_ERRORS)

        def complete_argument(self, name: str, argument: str, value: str, context: list) -> list:
            return plugin.complete_prompt_argument(name, argument, value, dict(context))

    class Resources:
        def list_resources(self) -> list:
            return [wit_resources.Resource(
                uri=r["uri"], name=r["name"], title=r.get("title"), description=r.get("description"),
                mime_type=r.get("mimeType"), size=r.get("size"), poll_ms=r.get("pollMs"))
                for r in plugin.list_resources()]

        def list_resource_templates(self) -> list:
            return [wit_resources.ResourceTemplate(
                uri_template=r["uriTemplate"], name=r["name"], title=r.get("title"),
                description=r.get("description"), mime_type=r.get("mimeType"))
                for r in plugin.list_resource_templates()]

        def read_resource(self, uri: str) -> list:
            def body() -> list:
                return [wit_resources.ResourceContents(uri=c["uri"], mime_type=c.get("mimeType"), body=_body(c))
                        for c in plugin.read_resource(uri)]
            try:
                return guard(body, lambda: [], ResourceError.failed)
            except ResourceError as error:
                _raise_as(error, _RESOURCE_ERRORS)

        def complete_template(self, uri_template: str, variable: str, value: str, context: list) -> list:
            return plugin.complete_template_variable(uri_template, variable, value, dict(context))

    return Tools, Prompts, Resources
