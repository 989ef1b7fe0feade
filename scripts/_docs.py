"""The documents that hold generated blocks: README.md and the pages under docs/. A block lives between its
start and end markers in exactly one of them; the scripts that write tables render into whichever holds
it, and their ``--check`` modes (and the tests) compare every document with what they would write."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def document_paths() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


class Documents:
    """The texts of the documents, changed in memory by :meth:`replace`, written by :meth:`write`."""

    def __init__(self, texts: dict[Path, str]):
        self.texts = dict(texts)
        self.original = dict(texts)

    @classmethod
    def load(cls) -> Documents:
        return cls({path: path.read_text(encoding="utf-8") for path in document_paths()})

    def holder(self, start: str, end: str) -> Path:
        """The one document holding the block ``start`` ... ``end``.

        Raises:
            SystemExit: No document holds it, or more than one does.
        """
        found = [path for path, text in self.texts.items() if start in text and end in text]
        if len(found) != 1:
            where = ", ".join(p.relative_to(ROOT).as_posix() for p in found) or "no document"
            raise SystemExit(
                f"{start} ... {end}: expected in exactly one of README.md and docs/*.md, found in {where}"
            )
        return found[0]

    def block(self, start: str, end: str) -> str:
        """The text between the markers (without them)."""
        text = self.texts[self.holder(start, end)]
        return text.split(start, 1)[1].split(end, 1)[0]

    def replace(self, start: str, end: str, body: str) -> None:
        """Put ``body`` between the markers, in the document that holds them."""
        path = self.holder(start, end)
        head, _, rest = self.texts[path].partition(start)
        _, _, tail = rest.partition(end)
        self.texts[path] = f"{head}{start}\n{body}\n{end}{tail}"

    def changed(self) -> list[Path]:
        return [path for path, text in self.texts.items() if text != self.original[path]]

    def write(self) -> list[Path]:
        changed = self.changed()
        for path in changed:
            path.write_text(self.texts[path], encoding="utf-8")
        self.original = dict(self.texts)
        return changed
