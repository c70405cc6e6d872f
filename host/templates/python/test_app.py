"""Tests of the plugin under plain Python (``python -m unittest``): the SDK's stand-in
host replaces Wharf, and ``plugin.call_tool`` returns what a client would get."""

import unittest

from app import plugin


class GreetTest(unittest.TestCase):
    def test_greet_greets(self):
        result = plugin.call_tool("greet", {"name": "Ada", "excited": True})
        self.assertEqual(result.content, [{"type": "text", "text": "Hello, Ada!"}])

    def test_an_empty_name_is_an_error_the_model_can_fix(self):
        self.assertTrue(plugin.call_tool("greet", {"name": " "}).is_error)

    def test_the_input_schema_comes_from_the_type_hints(self):
        greet = plugin.list_tools()[0]
        self.assertEqual(greet["inputSchema"]["required"], ["name"])
        self.assertEqual(greet["description"], "Greets someone by name.")


if __name__ == "__main__":
    unittest.main()
