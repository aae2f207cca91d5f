"""The README sections the benchmarks write: each figure in the README comes from a run, never typed by hand."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def replace_section(writer: str, body: str) -> None:
    """Put body between '<!-- {writer} writes from here -->' and '<!-- end of {writer} output -->'."""
    start_mark, end_mark = f"<!-- {writer} writes from here -->\n", f"\n<!-- end of {writer} output -->"
    text = README.read_text(encoding="utf-8")
    start, end = text.index(start_mark) + len(start_mark), text.index(end_mark)
    README.write_text(text[:start] + body + text[end:], encoding="utf-8")
