"""The plugin's own tests, under plain Python with the SDK's stand-in host:
``PYTHONPATH=../../sdk/python python -m unittest`` (in a project made by
``wharf new``, where ``wharf_sdk/`` sits beside this file: ``python -m unittest``)."""

import unittest

from wharf_sdk import ToolError
from wharf_sdk.plugin import guard
from wharf_sdk.testing import test_host

from app import plugin


class NotesTest(unittest.TestCase):
    def setUp(self):
        test_host.reset()

    def test_search_returns_structured_hits_best_first(self):
        result = plugin.call_tool("search", {"query": "book home", "limit": 2})
        self.assertEqual(result.structured_content, {"hits": [
            {"id": "reading", "title": "Reading list", "score": 2},
            {"id": "groceries", "title": "Groceries", "score": 1},
        ]})
        self.assertTrue(plugin.call_tool("search", {"query": "  "}).is_error)
        with self.assertRaises(ToolError) as caught:
            plugin.call_tool("search", {"query": "x", "limit": 0})
        self.assertEqual(caught.exception.message, "`limit`: must be at least 1")

    def test_reindex_reports_progress_logs_and_honours_its_configuration(self):
        test_host.config = {"notebook": "Work"}
        self.assertEqual(plugin.call_tool("reindex").content, [{"type": "text", "text": "Indexed 3 notes in Work."}])
        self.assertEqual(len(test_host.progress), 3)
        self.assertEqual(test_host.logs[0], ("info", "indexed groceries"))
        test_host.config = {"index": "off"}
        with self.assertRaises(ToolError) as caught:
            plugin.call_tool("reindex")
        self.assertEqual(caught.exception.message, "indexing is turned off (configuration `index`)")

    def test_draft_asks_for_details_then_the_model(self):
        self.assertEqual(guard(lambda: plugin.call_tool("draft", {"topic": "tea"}), lambda: "pending",
                               ToolError.failed), "pending")
        self.assertEqual(list(test_host.asked), ["details"])
        test_host.answers["details"] = {"action": "accept", "content": {"title": "Tea", "tag": "home"}}
        test_host.answers["body"] = {"role": "assistant", "content": {"type": "text", "text": "Green tea."}}
        self.assertEqual(plugin.call_tool("draft", {"topic": "tea"}).content,
                         [{"type": "text", "text": "# Tea [home]\n\nGreen tea."}])

    def test_prompt_resource_and_template(self):
        self.assertEqual(len(plugin.get_prompt("review", {"id": "groceries"})["messages"]), 2)
        self.assertEqual(plugin.complete_prompt_argument("review", "id", "g"), ["groceries"])
        self.assertIn("[Groceries](notes://note/groceries)", plugin.read_resource("notes://index")[0]["text"])


if __name__ == "__main__":
    unittest.main()
