from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest

from tooltrap.envs.core import (
    Backend,
    ErrorKind,
    ToolCallError,
    ToolDefinitionError,
    Toolset,
    parse_google_docstring,
    tool,
)
from tooltrap.envs.sabench import BACKENDS

SNAPSHOT = Path(__file__).parents[1] / "snapshots" / "sabench_tools.json"


def test_google_docstring_parser():
    doc = """Cancel an event.

    More details here.

    Args:
        event_id: Id of the event
            to cancel.
        scope (str): Which part.

    Returns:
        A dict.
    """
    description, args = parse_google_docstring(doc)
    assert description == "Cancel an event. More details here."
    assert args == {"event_id": "Id of the event to cancel.", "scope": "Which part."}


def test_sabench_schemas_match_snapshot():
    schemas = Toolset(BACKENDS).schemas
    current = json.dumps(schemas, indent=1, sort_keys=True) + "\n"
    if not SNAPSHOT.exists():  # first run writes the snapshot; review it in the diff
        SNAPSHOT.write_text(current)
    assert current == SNAPSHOT.read_text(), (
        "tool schemas changed: delete the snapshot to regenerate and review"
    )


def test_schema_shape():
    spec = Toolset(BACKENDS)["calendar_cancel_event"]
    params = spec.schema["function"]["parameters"]
    assert params["required"] == ["event_id"]
    assert params["properties"]["scope"]["enum"] == ["occurrence", "series"]
    assert "(default)" in params["properties"]["scope"]["description"]
    assert "notice" in params["properties"]["notify_attendees"]["description"]
    assert spec.kind == "write" and spec.external and spec.domain == "calendar"


def test_every_tool_documented_and_typed():
    for spec in Toolset(BACKENDS).specs.values():
        assert spec.description
        for name, prop in spec.parameters["properties"].items():
            assert prop["description"], f"{spec.name}.{name}"


def test_validation_errors_are_actionable():
    spec = Toolset(BACKENDS)["calendar_cancel_event"]
    with pytest.raises(ToolCallError) as err:
        spec.validate({"event_id": 3, "scop": "series"})
    assert err.value.kind is ErrorKind.INVALID_ARGUMENTS
    assert "event_id" in err.value.message and "scope" in err.value.message  # did-you-mean
    with pytest.raises(ToolCallError):
        spec.validate({"event_id": "e", "scope": "everything"})
    with pytest.raises(ToolCallError):
        spec.validate(["not", "a", "dict"])
    assert spec.validate({"event_id": "e"}) == {"event_id": "e", "scope": "series", "notify_attendees": True}


def test_unknown_tool_did_you_mean():
    with pytest.raises(ToolCallError, match="calendar_cancel_event") as err:
        Toolset(BACKENDS)["calendar_cancel_evnt"]
    assert err.value.kind is ErrorKind.UNKNOWN_TOOL


def test_bad_tool_definitions_raise():
    with pytest.raises(ToolDefinitionError, match="Args"):

        class MissingDoc(Backend):
            domain = "x"

            @tool("read")
            def x_get(self, item: str) -> dict:
                """Get an item."""
                return {}

    with pytest.raises(ToolDefinitionError, match="type hint"):

        class MissingHint(Backend):
            domain = "x"

            @tool("read")
            def x_get(self, item) -> dict:
                """Get an item.

                Args:
                    item: The item.
                """
                return {}

    with pytest.raises(ToolDefinitionError, match="kind"):
        tool("delete")  # type: ignore[arg-type]


def test_literal_and_optional_types_in_schema():
    class Demo(Backend):
        domain = "demo"

        @tool("write")
        def demo_set(self, mode: Literal["a", "b"], count: int = 1, tags: list[str] | None = None) -> dict:
            """Set things.

            Args:
                mode: The mode.
                count: How many.
                tags: Tags.
            """
            return {}

    spec = Demo.tool_specs()[0]
    props = spec.parameters["properties"]
    assert props["mode"]["enum"] == ["a", "b"]
    assert props["count"]["type"] == "integer"
    assert spec.parameters["required"] == ["mode"]
    with pytest.raises(ToolCallError):
        spec.validate({"mode": "a", "count": "2"})  # strict: no string-to-int coercion


def test_derived_fields_are_declared_checked_and_matched():
    """A read tool declares the result fields it computes from record fields; the spec names the paths
    of a concrete result that hiding those fields must hide too (a key at any depth, or a path)."""

    class Orders(Backend):
        domain = "x"

        @tool("read", derived={"covered": ("limit", "amount"), "$.lines[*].over": "limit"})
        def x_get_order(self, order_id: str) -> dict:
            """Get an order.

            Args:
                order_id: The order.
            """
            return {}

    spec = Orders.tool_specs()[0]
    assert spec.derived == {"covered": ("limit", "amount"), "$.lines[*].over": ("limit",)}
    result = {"covered": True, "lines": [{"over": 1, "covered": 0}, {"over": 2}], "note": {"covered": 1}}
    assert spec.derived_paths(result, {"amount"}) == ["$.covered", "$.lines[0].covered", "$.note.covered"]
    assert spec.derived_paths(result, {"limit"}) == [
        "$.covered",
        "$.lines[0].covered",
        "$.note.covered",
        "$.lines[0].over",
        "$.lines[1].over",
    ]
    assert spec.derived_paths(result, {"phone"}) == []  # another field: nothing
    with pytest.raises(ToolDefinitionError, match=r"read tools.*not 'write'"):
        tool("write", derived={"covered": "limit"})(lambda self: None)
    with pytest.raises(ToolDefinitionError, match=r"Cannot parse the field pattern 'lines\[x\]'.*\[\*\]"):
        tool("read", derived={"lines[x]": "limit"})(lambda self: None)
    with pytest.raises(ToolDefinitionError, match="non-empty tuple"):
        tool("read", derived={"covered": ()})(lambda self: None)
