"""JSON Schemas from Python type hints, and arguments checked and converted by them.

A tool's parameters, a dataclass or a ``TypedDict`` give the input schema; its return
annotation the output schema. Supported: ``str``, ``int``, ``float``, ``bool``,
``None``, ``Optional[T]``/``T | None``, ``Literal[...]``, ``enum.Enum`` subclasses,
``list[T]``, ``tuple[T, ...]``, ``dict[str, T]``, unions, ``Any``, dataclasses,
``TypedDict`` (``total=False`` and ``NotRequired`` fields are optional) and
``Annotated[T, "description"]`` and ``Annotated[int, Range(1, 20)]``. Docstrings become descriptions (see ``docs``)."""

import dataclasses
import enum
import types
import typing
from typing import Any, Literal, Optional, Union, get_args, get_origin

from . import docs

_MISSING = dataclasses.MISSING


@dataclasses.dataclass(frozen=True)
class Range:
    """Bounds of a number, as metadata: ``Annotated[int, Range(1, 20)]``. Checked
    along with the type and shown in the schema (``minimum``/``maximum``)."""

    min: Optional[float] = None
    max: Optional[float] = None


class ValidationError(Exception):
    """A value that does not fit its type; the message names the path of the field."""

    def __init__(self, path: str, message: str):
        super().__init__(f"`{path}`: {message}" if path else message)
        self.path = path


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {_number(value)}"
    if isinstance(value, str):
        import json

        return f"the string {json.dumps(value, ensure_ascii=False)}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _is_typeddict(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__annotations__") and hasattr(
        hint, "__total__")


def _is_union(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType)


def _strip_annotated(hint: Any) -> tuple[Any, Any]:
    """The type inside ``Annotated`` (and ``Required``/``NotRequired``) and the first
    string metadata (a description)."""
    if get_origin(hint) in (typing.Required, typing.NotRequired):
        return _strip_annotated(get_args(hint)[0])
    if get_origin(hint) is typing.Annotated:
        base, *meta = get_args(hint)
        description = next((m for m in meta if isinstance(m, str)), None)
        return base, description
    return hint, None


def _range_of(hint: Any) -> Optional[Range]:
    if get_origin(hint) in (typing.Required, typing.NotRequired):
        return _range_of(get_args(hint)[0])
    if get_origin(hint) is typing.Annotated:
        return next((m for m in get_args(hint)[1:] if isinstance(m, Range)), None)
    return None


def is_optional(hint: Any) -> bool:
    """``Optional[T]``, ``T | None`` or ``None``."""
    hint, _ = _strip_annotated(hint)
    return hint is type(None) or hint is None or (_is_union(hint) and type(None) in get_args(hint))


def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


def fields_of(cls: Any) -> list[tuple[str, Any, bool, Any, str | None]]:
    """(name, hint, required, default, description) of a dataclass or TypedDict."""
    _, field_docs = docs.parse(cls.__doc__)
    hints = _hints(cls)
    out = []
    if dataclasses.is_dataclass(cls):
        for field in dataclasses.fields(cls):
            hint = hints[field.name]
            default: Any = _MISSING
            if field.default is not _MISSING:
                default = field.default
            elif field.default_factory is not _MISSING:
                default = field.default_factory()
            out.append((field.name, hint, default is _MISSING, default, field_docs.get(field.name)))
    else:
        required = getattr(cls, "__required_keys__", set(hints))
        for name, hint in hints.items():
            out.append((name, hint, name in required, _MISSING, field_docs.get(name)))
    return out


def _object_schema(fields: list[tuple[str, Any, bool, Any, str | None]], defs: dict) -> dict:
    properties = {}
    required = []
    for name, hint, is_required, default, description in fields:
        prop = schema_of(hint, defs)
        if description and "description" not in prop:
            prop["description"] = description
        if default is not _MISSING:
            prop["default"] = to_json(default)
        properties[name] = prop
        if is_required:
            required.append(name)
    schema: dict = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def schema_of(hint: Any, defs: dict | None = None) -> dict:
    """The JSON Schema (2020-12) of values of ``hint``."""
    defs = {} if defs is None else defs
    bounds = _range_of(hint)
    hint, description = _strip_annotated(hint)
    schema = _schema(hint, defs)
    if bounds is not None and bounds.min is not None:
        schema["minimum"] = bounds.min
    if bounds is not None and bounds.max is not None:
        schema["maximum"] = bounds.max
    if description:
        schema["description"] = description
    return schema


def _schema(hint: Any, defs: dict) -> dict:
    origin = get_origin(hint)
    if hint is Any or hint is object:
        return {}
    if hint is None or hint is type(None):
        return {"type": "null"}
    if hint is str:
        return {"type": "string"}
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    if hint is float:
        return {"type": "number"}
    if origin is Literal:
        values = list(get_args(hint))
        if all(isinstance(v, str) for v in values):
            return {"type": "string", "enum": values}
        return {"enum": values}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        schema = {"enum": [member.value for member in hint]}
        if all(isinstance(member.value, str) for member in hint):
            schema["type"] = "string"
        return schema
    if _is_union(hint):
        options = [a for a in get_args(hint) if a is not type(None)]
        nullable = len(options) < len(get_args(hint))
        if len(options) == 1:
            inner = schema_of(options[0], defs)
            if nullable:
                if isinstance(inner.get("type"), str):
                    inner["type"] = [inner["type"], "null"]
                    if "enum" in inner:
                        inner["enum"] = [*inner["enum"], None]
                else:
                    inner = {"anyOf": [inner, {"type": "null"}]}
            return inner
        alternatives = [schema_of(o, defs) for o in options]
        if nullable:
            alternatives.append({"type": "null"})
        return {"anyOf": alternatives}
    if hint in (list, tuple) or origin in (list, tuple, typing.Sequence):
        args = get_args(hint)
        item = args[0] if args else Any
        return {"type": "array", "items": schema_of(item, defs)}
    if hint is dict or origin is dict:
        args = get_args(hint)
        value = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": schema_of(value, defs)}
    if dataclasses.is_dataclass(hint) or _is_typeddict(hint):
        schema = _object_schema(fields_of(hint), defs)
        summary, _ = docs.parse(hint.__doc__)
        if summary and not (dataclasses.is_dataclass(hint) and summary.startswith(hint.__name__ + "(")):
            schema = {"description": summary, **schema}
        return schema
    raise TypeError(f"no JSON Schema for the type {hint!r}")


def convert(value: Any, hint: Any, path: str = "") -> Any:
    """``value`` (parsed JSON) checked against ``hint``: dataclasses are built, enums
    looked up, defaults filled in. Raises ``ValidationError``."""
    bounds = _range_of(hint)
    hint, _ = _strip_annotated(hint)
    value = _convert(value, hint, path)
    if bounds is not None and isinstance(value, (int, float)):
        if bounds.min is not None and value < bounds.min:
            raise ValidationError(path, f"must be at least {_number(bounds.min)}")
        if bounds.max is not None and value > bounds.max:
            raise ValidationError(path, f"must be at most {_number(bounds.max)}")
    return value


def _convert(value: Any, hint: Any, path: str) -> Any:
    origin = get_origin(hint)
    if hint is Any or hint is object:
        return value
    if hint is None or hint is type(None):
        if value is not None:
            raise ValidationError(path, f"expected null, got {_describe(value)}")
        return None
    if hint is str:
        if not isinstance(value, str):
            raise ValidationError(path, f"expected a string, got {_describe(value)}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ValidationError(path, f"expected true or false, got {_describe(value)}")
        return value
    if hint is int:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValidationError(path, f"expected a number, got {_describe(value)}")
        if not isinstance(value, int):
            raise ValidationError(path, f"expected an integer, got {_describe(value)}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValidationError(path, f"expected a number, got {_describe(value)}")
        return float(value)
    if origin is Literal:
        options = get_args(hint)
        if not any(type(o) is type(value) and o == value for o in options):
            wanted = ", ".join(_json_text(o) for o in options)
            raise ValidationError(path, f"expected one of {wanted}, got {_describe(value)}")
        return value
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        for member in hint:
            if member.value == value and type(member.value) is type(value):
                return member
        wanted = ", ".join(_json_text(m.value) for m in hint)
        raise ValidationError(path, f"expected one of {wanted}, got {_describe(value)}")
    if _is_union(hint):
        args = get_args(hint)
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return convert(value, options[0], path)
        reasons = []
        for option in options:
            try:
                return convert(value, option, path)
            except ValidationError as error:
                reasons.append(str(error))
        raise ValidationError(path, f"fits none of the alternatives ({'; '.join(reasons)})")
    if hint in (list, tuple) or origin in (list, tuple, typing.Sequence):
        if not isinstance(value, list):
            raise ValidationError(path, f"expected an array, got {_describe(value)}")
        args = get_args(hint)
        item = args[0] if args else Any
        items = [convert(v, item, f"{path}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if (hint is tuple or origin is tuple) else items
    if hint is dict or origin is dict:
        if not isinstance(value, dict):
            raise ValidationError(path, f"expected an object, got {_describe(value)}")
        args = get_args(hint)
        item = args[1] if len(args) == 2 else Any
        return {k: convert(v, item, _join(path, k)) for k, v in value.items()}
    if dataclasses.is_dataclass(hint) or _is_typeddict(hint):
        if not isinstance(value, dict):
            raise ValidationError(path, f"expected an object, got {_describe(value)}")
        kwargs = convert_fields(value, fields_of(hint), path)
        return hint(**kwargs) if dataclasses.is_dataclass(hint) else kwargs
    raise TypeError(f"cannot check values of the type {hint!r}")


def convert_fields(value: dict, fields: list[tuple[str, Any, bool, Any, str | None]], path: str = "") -> dict:
    """The fields of an object checked one by one; unknown keys are dropped."""
    out = {}
    for name, hint, required, default, _ in fields:
        field_path = _join(path, name)
        if name not in value:
            if required:
                raise ValidationError(field_path, "missing required field")
            if default is not _MISSING:
                out[name] = default
            continue
        out[name] = convert(value[name], hint, field_path)
    return out


def _json_text(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def to_json(value: Any) -> Any:
    """A value made of dataclasses, enums, tuples and dicts as plain JSON data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value
