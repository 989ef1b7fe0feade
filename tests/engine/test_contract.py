"""The benchmark contract stays small: hooks that one benchmark uses are its own opt-in capabilities
(checked by the generic code with isinstance), and the record look-up is one helper with a typed error."""

from __future__ import annotations

import json

import pytest

from tooltrap.envs.core import (
    Backend,
    Benchmark,
    CommitEndsEpisode,
    FollowUpTurns,
    IdLookups,
    OverbroadCalls,
    RecordNotFoundError,
    ShorterPromptHint,
    State,
    TrapNotes,
    tool,
)

ONE_BENCHMARK_MEMBERS = (
    "follow_up",
    "overbroad",
    "lookup_calls",
    "trap_note",
    "commit_ends_episode",
    "shorter_prompt_hint",
)


def test_the_base_class_has_no_hook_that_only_one_benchmark_uses():
    for member in ONE_BENCHMARK_MEMBERS:
        assert not hasattr(Benchmark, member), member


def test_each_benchmark_opts_in_to_its_own_capabilities_only():
    from tooltrap.envs.agentprop.benchmark import benchmark as agentprop
    from tooltrap.envs.episem.benchmark import benchmark as episem
    from tooltrap.envs.sabench.benchmark import benchmark as sabench
    from tooltrap.envs.sentry.benchmark import benchmark as sentry

    capabilities = (FollowUpTurns, CommitEndsEpisode, ShorterPromptHint, OverbroadCalls, IdLookups, TrapNotes)
    expected = {
        sabench(): {ShorterPromptHint, IdLookups, TrapNotes},
        episem(): {CommitEndsEpisode},
        sentry(): {FollowUpTurns, OverbroadCalls},
        agentprop(): set(),
    }
    for bench, wanted in expected.items():
        assert {c for c in capabilities if isinstance(bench, c)} == wanted, bench.name


class _Shelf(Backend):
    domain = "shelf"

    @tool("read")
    def shelf_read_book(self, book_id: str) -> dict:
        """Read one book.

        Args:
            book_id: Id of the book.
        """
        return self.find_record("books", book_id, what="book")


class _WordedShelf(_Shelf):
    missing_record = "No {what} with id {id!r}."
    missing_record_hint = "List the {what}s first."


def test_find_record_copies_the_record_and_words_a_missing_one_as_the_backend_says():
    state = State({"books": {"book-1": {"id": "book-1", "title": "Dune"}}})
    shelf = _Shelf(state)
    found = shelf.find_record("books", "book-1", what="book")
    found["title"] = "changed"
    assert state.get("books", "book-1")["title"] == "Dune"  # the caller's copy, never the state's record
    with pytest.raises(RecordNotFoundError) as err:
        shelf.find_record("books", "book-2", what="book")
    assert err.value.to_dict() == {
        "type": "tool_error",
        "message": "No book 'book-2'. Did you mean 'book-1'?",
    }
    assert (err.value.collection, err.value.record_id) == ("books", "book-2")
    with pytest.raises(RecordNotFoundError) as err:
        _WordedShelf(state).find_record("books", "book-2", what="book")
    assert err.value.to_dict() == {
        "type": "tool_error",
        "message": "No book with id 'book-2'. Did you mean 'book-1'?",
        "hint": "List the books first.",
    }
    assert (
        json.dumps(shelf.find_record("books", "book-1", what="book")) == '{"id": "book-1", "title": "Dune"}'
    )
