"""The plugin's dispatch under plain Python, with the stand-in host."""

import unittest
from dataclasses import dataclass
from typing import Optional, TypedDict

from wharf_sdk import Plugin, PromptError, ResourceError, ToolError, ToolResult, ask, info, progress, user
from wharf_sdk.plugin import guard
from wharf_sdk.testing import test_host


@dataclass
class Quotient:
    """A quotient.

    Attributes:
        result: a / b.
    """

    result: float


class Form(TypedDict):
    x: str


class Other(TypedDict):
    y: int


def make() -> Plugin:
    plugin = Plugin()

    @plugin.tool(title="Divide", read_only=True)
    def divide(a: float, b: float) -> Quotient:
        """Divides a by b.

        Args:
            a: The dividend.
            b: The divisor.
        """
        if b == 0:
            return ToolResult.error("cannot divide by zero")
        return Quotient(a / b)

    @plugin.tool
    def boom() -> str:
        raise RuntimeError("it broke")

    @plugin.tool(name="ask-two")
    def ask_two() -> str:
        a, b = ask.together(lambda: ask.elicit("a", "A?", Form), lambda: ask.elicit("b", "B?", Other))
        info("asked")
        progress(1, 2)
        return f"{a.action}:{a.content['x'] if a.content else None} {b.action}"

    @plugin.prompt(complete={"who": ["ada", "bob", "al"]})
    def hello(who: str, tone: Optional[str] = None) -> list:
        """Says hello.

        Args:
            who: Whom to greet.
        """
        return [user(f"Hello {who}" + (f" ({tone})" if tone else ""))]

    @plugin.resource("x://a", name="a", mime_type="text/plain", size=3)
    def a() -> str:
        return "abc"

    @plugin.resource_template("x://item/{id}", complete={"id": lambda value, ctx: [v for v in ["one", "two"]
                                                                                   if v.startswith(value)]})
    def item(id: str, uri: str) -> bytes:
        if id == "none":
            raise ResourceError.not_found(uri)
        return b"\x01\x02"

    return plugin


class PluginTest(unittest.TestCase):
    def setUp(self):
        test_host.reset()
        self.plugin = make()

    def test_tools_are_listed_with_schemas_from_hints_and_docstrings(self):
        divide, boom, _ = self.plugin.list_tools()
        self.assertEqual(divide, {
            "name": "divide",
            "title": "Divide",
            "description": "Divides a by b.",
            "inputSchema": {"type": "object", "properties": {
                "a": {"type": "number", "description": "The dividend."},
                "b": {"type": "number", "description": "The divisor."}}, "required": ["a", "b"]},
            "outputSchema": {"description": "A quotient.", "type": "object",
                             "properties": {"result": {"type": "number", "description": "a / b."}},
                             "required": ["result"]},
            "annotations": {"title": "Divide", "readOnlyHint": True},
        })
        self.assertEqual(boom, {"name": "boom", "inputSchema": {"type": "object", "properties": {}}})

    def test_structured_output_errors_and_tool_errors(self):
        self.assertEqual(self.plugin.call_tool("divide", '{"a": 1, "b": 4}'),
                         ToolResult([{"type": "text", "text": '{"result":0.25}'}], {"result": 0.25}))
        self.assertTrue(self.plugin.call_tool("divide", {"a": 1, "b": 0}).is_error)
        for args, kind, message in [
            ({"a": 1}, "invalid-arguments", "`b`: missing required field"),
            ("{", "invalid-arguments", "the arguments are not valid JSON"),
            ("[]", "invalid-arguments", "expected an object, got an array"),
        ]:
            with self.assertRaises(ToolError) as caught:
                self.plugin.call_tool("divide", args)
            self.assertEqual((caught.exception.kind, caught.exception.message), (kind, message))
        with self.assertRaises(ToolError) as caught:
            self.plugin.call_tool("nope")
        self.assertEqual((caught.exception.kind, caught.exception.message), ("unknown-tool", "nope"))

    def test_guard_ends_pending_calls_and_reports_failures(self):
        run = lambda name: guard(lambda: self.plugin.call_tool(name), lambda: "pending", ToolError.failed)  # noqa: E731
        self.assertEqual(run("ask-two"), "pending")
        self.assertEqual(list(test_host.asked), ["a", "b"])
        self.assertEqual(test_host.asked["a"], {"elicit-form": {"message": "A?", "requestedSchema": {
            "type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}})
        test_host.answers = {"a": {"action": "accept", "content": {"x": "hi"}}, "b": {"action": "decline"}}
        self.assertEqual(run("ask-two").content, [{"type": "text", "text": "accept:hi decline"}])
        self.assertEqual(test_host.logs, [("info", "asked")])
        self.assertEqual(test_host.progress, [(1.0, 2, None)])
        test_host.answers = {"a": "unsupported"}
        with self.assertRaises(ToolError) as caught:
            run("ask-two")
        self.assertEqual(caught.exception.message, "the client cannot answer `a`: it lacks the capability")
        test_host.answers = {"a": {"action": "accept", "content": {"x": 1}}, "b": {"action": "cancel"}}
        with self.assertRaises(ToolError) as caught:
            run("ask-two")
        self.assertEqual(caught.exception.message, "`x`: expected a string, got the number 1")
        with self.assertRaises(ToolError) as caught:
            run("boom")
        self.assertEqual((caught.exception.kind, caught.exception.message), ("failed", "it broke"))

    def test_prompts(self):
        self.assertEqual(self.plugin.list_prompts(), [{"name": "hello", "description": "Says hello.", "arguments": [
            {"name": "who", "required": True, "description": "Whom to greet."}, {"name": "tone", "required": False}]}])
        self.assertEqual(self.plugin.get_prompt("hello", {"who": "bob", "tone": "warm", "x": "y"}),
                         {"messages": [{"role": "user", "content": {"type": "text", "text": "Hello bob (warm)"}}]})
        self.assertEqual(self.plugin.complete_prompt_argument("hello", "who", "a"), ["ada", "al"])
        self.assertEqual(self.plugin.complete_prompt_argument("hello", "nope", "a"), [])
        for name, args, kind, message in [("hello", {}, "invalid-arguments", "missing required argument `who`"),
                                          ("nope", {}, "unknown-prompt", "nope")]:
            with self.assertRaises(PromptError) as caught:
                self.plugin.get_prompt(name, args)
            self.assertEqual((caught.exception.kind, caught.exception.message), (kind, message))

    def test_resources_and_templates(self):
        self.assertEqual(self.plugin.list_resources(), [{"uri": "x://a", "name": "a", "mimeType": "text/plain",
                                                         "size": 3}])
        self.assertEqual(self.plugin.list_resource_templates(), [{"uriTemplate": "x://item/{id}", "name": "item"}])
        self.assertEqual(self.plugin.read_resource("x://a"), [{"uri": "x://a", "text": "abc", "mimeType": "text/plain"}])
        self.assertEqual(self.plugin.read_resource("x://item/one"), [{"uri": "x://item/one", "blob": b"\x01\x02"}])
        for uri in ["x://item/none", "y://z"]:
            with self.assertRaises(ResourceError) as caught:
                self.plugin.read_resource(uri)
            self.assertEqual((caught.exception.kind, caught.exception.message), ("not-found", uri))
        self.assertEqual(self.plugin.complete_template_variable("x://item/{id}", "id", "t"), ["two"])
        self.assertEqual(self.plugin.complete_template_variable("x://item/{id}", "nope", ""), [])

    def test_names_are_checked(self):
        plugin = Plugin()
        with self.assertRaisesRegex(ValueError, r"tool name 'a b' must be 1 to 64 characters"):
            plugin.tool(name="a b")(lambda: "")
        plugin.tool(name="a")(lambda: "")
        with self.assertRaisesRegex(ValueError, "two tools are named 'a'"):
            plugin.tool(name="a")(lambda: "")

    def test_exports_need_a_component(self):
        tools, _, _ = self.plugin.exports()
        with self.assertRaisesRegex(RuntimeError, "works only inside a component"):
            tools()


class UriTemplateTest(unittest.TestCase):
    def test_matching(self):
        from wharf_sdk.uri_template import match_template, variables_of

        self.assertEqual(match_template("notes://note/{id}", "notes://note/a%20b"), {"id": "a b"})
        self.assertIsNone(match_template("notes://note/{id}", "notes://note/a/b"))
        self.assertEqual(match_template("files:///{+path}", "files:///a/b.txt"), {"path": "a/b.txt"})
        self.assertEqual(variables_of("x://{a}/{+b}"), ["a", "b"])

    def test_decoding_as_in_the_rust_sdk(self):
        from wharf_sdk.uri_template import match_template

        # In a reserved expansion a reserved character's triplet stays encoded.
        self.assertEqual(match_template("files:///{+path}", "files:///a%2Fb%20c"), {"path": "a%2Fb c"})
        self.assertEqual(match_template("files:///{+path}", "files:///x%23y%3Fz"), {"path": "x%23y%3Fz"})
        self.assertEqual(match_template("notes://note/{id}", "notes://note/a%2Fb"), {"id": "a/b"})
        self.assertEqual(match_template("notes://note/{id}", "notes://note/caf%C3%A9"), {"id": "café"})
        self.assertEqual(match_template("notes://note/{id}", "notes://note/caf%c3%a9"), {"id": "café"})
        # Not UTF-8 once decoded: the text as it came.
        self.assertEqual(match_template("notes://note/{id}", "notes://note/a%FFb"), {"id": "a%FFb"})
        # A `%` without two hex digits is text.
        self.assertEqual(match_template("notes://note/{id}", "notes://note/100%"), {"id": "100%"})
        self.assertEqual(match_template("notes://note/{id}", "notes://note/%zz%41"), {"id": "%zzA"})
        self.assertEqual(match_template("files:///{+path}", "files:///é/%41"), {"path": "é/A"})


if __name__ == "__main__":
    unittest.main()
