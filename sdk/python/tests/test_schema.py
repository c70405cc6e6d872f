"""Schemas inferred from type hints and docstrings, and the exact message of every
value that does not fit."""

import enum
import unittest
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict

from wharf_sdk import Range
from wharf_sdk.docs import parse
from wharf_sdk.schema import ValidationError, convert, schema_of, to_json


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Point:
    """A point.

    Attributes:
        x: Across.
        y: Down, a longer text
            on two lines.
    """

    x: float
    y: float = 0.0
    tags: list[str] = field(default_factory=list)


class Movie(TypedDict):
    """A film."""

    title: str
    year: NotRequired[int]


class Partial(TypedDict, total=False):
    a: int


class SchemaTest(unittest.TestCase):
    def test_scalars(self):
        self.assertEqual(schema_of(str), {"type": "string"})
        self.assertEqual(schema_of(int), {"type": "integer"})
        self.assertEqual(schema_of(float), {"type": "number"})
        self.assertEqual(schema_of(bool), {"type": "boolean"})
        self.assertEqual(schema_of(Any), {})
        self.assertEqual(schema_of(Literal["a", "b"]), {"type": "string", "enum": ["a", "b"]})
        self.assertEqual(schema_of(Literal[1, 2]), {"enum": [1, 2]})
        self.assertEqual(schema_of(Color), {"enum": ["red", "blue"], "type": "string"})
        self.assertEqual(schema_of(Annotated[int, Range(1, 9), "A digit."]),
                         {"type": "integer", "minimum": 1, "maximum": 9, "description": "A digit."})

    def test_optional_union_and_collections(self):
        self.assertEqual(schema_of(Optional[str]), {"type": ["string", "null"]})
        self.assertEqual(schema_of(int | None), {"type": ["integer", "null"]})
        self.assertEqual(schema_of(Optional[Literal["a"]]), {"type": ["string", "null"], "enum": ["a", None]})
        self.assertEqual(schema_of(int | str), {"anyOf": [{"type": "integer"}, {"type": "string"}]})
        self.assertEqual(schema_of(list[int]), {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(schema_of(tuple[int, ...]), {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(schema_of(dict[str, bool]), {"type": "object", "additionalProperties": {"type": "boolean"}})

    def test_dataclasses_and_typeddicts_with_docstrings(self):
        self.assertEqual(schema_of(Point), {
            "description": "A point.",
            "type": "object",
            "properties": {
                "x": {"type": "number", "description": "Across."},
                "y": {"type": "number", "description": "Down, a longer text on two lines.", "default": 0.0},
                "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            },
            "required": ["x"],
        })
        self.assertEqual(schema_of(Movie), {
            "description": "A film.",
            "type": "object",
            "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
            "required": ["title"],
        })
        self.assertEqual(schema_of(Partial), {"type": "object", "properties": {"a": {"type": "integer"}}})

    def test_unsupported_types_are_named(self):
        with self.assertRaisesRegex(TypeError, "no JSON Schema for the type <class 'set'>"):
            schema_of(set)

    def test_conversion_builds_values(self):
        self.assertEqual(convert({"x": 1, "extra": 2}, Point), Point(1.0, 0.0, []))
        self.assertEqual(convert({"title": "Up"}, Movie), {"title": "Up"})
        self.assertEqual(convert("red", Color), Color.RED)
        self.assertEqual(convert(3.0, int), 3)
        self.assertIsNone(convert(None, Optional[int]))
        self.assertEqual(convert([1, 2], tuple[int, ...]), (1, 2))
        self.assertEqual(to_json({"p": Point(1, 2, ["a"]), "c": Color.BLUE}),
                         {"p": {"x": 1, "y": 2, "tags": ["a"]}, "c": "blue"})

    def assert_rejects(self, value, hint, message):
        with self.assertRaises(ValidationError) as caught:
            convert(value, hint)
        self.assertEqual(str(caught.exception), message)

    def test_every_mismatch_is_named(self):
        self.assert_rejects(7, str, "expected a string, got the number 7")
        self.assert_rejects("1", int, 'expected a number, got the string "1"')
        self.assert_rejects(True, int, "expected a number, got true")
        self.assert_rejects(1.5, int, "expected an integer, got the number 1.5")
        self.assert_rejects(None, float, "expected a number, got null")
        self.assert_rejects("yes", bool, 'expected true or false, got the string "yes"')
        self.assert_rejects("c", Literal["a", "b"], 'expected one of "a", "b", got the string "c"')
        self.assert_rejects(True, Literal[1], "expected one of 1, got true")
        self.assert_rejects("green", Color, 'expected one of "red", "blue", got the string "green"')
        self.assert_rejects({}, list[int], "expected an array, got an object")
        self.assert_rejects([1, "x"], list[int], '`[1]`: expected a number, got the string "x"')
        self.assert_rejects([], dict[str, int], "expected an object, got an array")
        self.assert_rejects({"a": "x"}, dict[str, int], '`a`: expected a number, got the string "x"')
        self.assert_rejects({"y": 1}, Point, "`x`: missing required field")
        self.assert_rejects({"x": 1, "tags": [2]}, Point, "`tags[0]`: expected a string, got the number 2")
        self.assert_rejects({"year": 1}, Movie, "`title`: missing required field")
        self.assert_rejects(0, Annotated[int, Range(1, 9)], "must be at least 1")
        self.assert_rejects(10, Annotated[int, Range(1, 9)], "must be at most 9")
        self.assert_rejects(3, str | bool,
                            "fits none of the alternatives (expected a string, got the number 3; "
                            "expected true or false, got the number 3)")
        self.assert_rejects(1, None, "expected null, got the number 1")


class DocsTest(unittest.TestCase):
    def test_google_and_rest_styles(self):
        self.assertEqual(parse("""Adds.

        More text.

        Args:
            a (int): The first.
            b: The second,
                continued.

        Returns:
            x: not a field.
        """), ("Adds.\n\nMore text.", {"a": "The first.", "b": "The second, continued."}))
        self.assertEqual(parse("Adds.\n\n:param a: The first.\n:param int b: The second."),
                         ("Adds.", {"a": "The first.", "b": "The second."}))
        self.assertEqual(parse(None), (None, {}))


if __name__ == "__main__":
    unittest.main()
