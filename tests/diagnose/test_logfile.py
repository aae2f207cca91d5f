"""Large log files: grep finds the candidate lines, Python reads only the blocks around them, and the
errors found are exactly those of reading the whole file (explainer/_logfile.py)."""

from __future__ import annotations

import shutil

import pytest

from explainer.diagnose import logfile as _logfile
from explainer.cli.explain import explain_input, explain_stream

from conftest import ROOT, corpus_message

LOGS = ROOT / "fixtures" / "logs"
pytestmark = pytest.mark.skipif(shutil.which("grep") is None, reason="the fast path needs grep")


def _healthy(step: int) -> str:
    return (f"2024-05-01 10:00:{step % 60:02d},{step % 1000:03d} - trainer - INFO - epoch {step // 500} step {step} "
            f"loss {1.0 / (1 + step % 97):.5f} lr 0.00030\n")


def _write_log(path, errors: list[str], lines_between: int) -> None:
    """Healthy training lines (some with Windows line ends, some tqdm progress bars redrawn with a lone
    \\r) around the real error output of the fixture logs, the last one without a final newline."""
    with open(path, "w", encoding="utf-8", newline="") as out:
        step = 0
        for number, error in enumerate(errors):
            for _ in range(lines_between + 37 * number):  # errors land at different places in blocks
                line = _healthy(step)
                if step % 11 == 0:
                    line = line.replace("\n", "\r\n")
                if step % 29 == 0:
                    line = "".join(f"train: {p:3d}%|{'#' * (p // 10):<10}| {p}/100\r" for p in range(0, 100, 7)) + line
                out.write(line)
                step += 1
            out.write(error)
        out.write("x" * 300_000 + "\n")  # a line longer than a block
        out.write("RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)")


@pytest.fixture()
def small_blocks(monkeypatch):
    monkeypatch.setattr(_logfile, "GREP_MIN_BYTES", 0)
    monkeypatch.setattr(_logfile, "BLOCK_BYTES", 64 << 10)
    monkeypatch.setattr(_logfile, "PIECE_BYTES", 4 << 10)


def _plain(path) -> list[dict]:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return [d.to_dict() for d in explain_stream(handle)]


def test_the_grep_path_finds_exactly_what_reading_every_line_finds(tmp_path, small_blocks, monkeypatch):
    errors = [(LOGS / name).read_text(encoding="utf-8") for name in
              ("torchrun_two_ranks.log", "dataloader_worker.log", "issue_paste.md")]
    path = tmp_path / "train.log"
    _write_log(path, errors * 2, lines_between=900)
    read, skipped = [], []
    blocks = _logfile._blocks

    def counting(*args):
        for block in blocks(*args):
            (read if block.has_trigger else skipped).append(len(block.data))
            yield block

    monkeypatch.setattr(_logfile, "_blocks", counting)
    fast = [d.to_dict() for d in explain_input(str(path))]
    assert fast == _plain(path)
    assert len(fast) >= 5 and {d["facts"]["input_line"] for d in fast} == {d["facts"]["input_line"] for d in _plain(path)}
    assert sum(skipped) > 4 * sum(read), "most of a healthy log is skipped undecoded"


def test_without_grep_or_when_grep_fails_the_file_is_read_the_plain_way(tmp_path, small_blocks, monkeypatch):
    path = tmp_path / "train.log"
    _write_log(path, [(LOGS / "dataloader_worker.log").read_text(encoding="utf-8")], lines_between=2000)
    expected = _plain(path)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert _logfile.skippable_blocks(str(path)) is None
    assert [d.to_dict() for d in explain_input(str(path))] == expected
    monkeypatch.undo()
    monkeypatch.setattr(_logfile, "GREP_MIN_BYTES", 0)
    # a grep that dies with status 2 half-way: its offsets are not trusted
    monkeypatch.setattr(_logfile, "grep_command", lambda: ["sh", "-c", 'head -c 100 "$1" >/dev/null; exit 2', "sh"])
    with pytest.raises(_logfile.GrepFailed):
        list(_logfile.skippable_blocks(str(path)))
    assert [d.to_dict() for d in explain_input(str(path))] == expected


def test_a_quiet_stretch_costs_one_remembered_tail_however_many_blocks_it_spans(tmp_path, small_blocks, monkeypatch):
    from explainer.diagnose.logscan import Scanner

    errors = [(LOGS / name).read_text(encoding="utf-8") for name in ("dataloader_worker.log", "issue_paste.md")]
    path = tmp_path / "train.log"
    _write_log(path, errors, lines_between=3000)
    remembered, skipped = [], []
    catch_up, blocks = Scanner.catch_up, _logfile._blocks

    def counting(*args):
        for block in blocks(*args):
            if not block.has_trigger:
                skipped.append(block)
            yield block

    monkeypatch.setattr(Scanner, "catch_up", lambda self, number, tail: remembered.append(tail) or catch_up(self, number, tail))
    monkeypatch.setattr(_logfile, "_blocks", counting)
    found = [d.to_dict() for d in explain_input(str(path))]
    assert found == _plain(path)
    assert len(skipped) > 20 and len(remembered) <= 2 * len(errors) + 1


def test_grep_searches_a_part_of_every_trigger_literal_and_nothing_else():
    """grep may find more blocks than TRIGGER_RE (each is searched again before it is read), never fewer."""
    from explainer.diagnose.logpatterns import GREP_LITERALS, TRIGGER_LITERALS

    assert [t for t in TRIGGER_LITERALS if not any(part in t for part in GREP_LITERALS)] == []
    assert [part for part in GREP_LITERALS if not any(part in t for t in TRIGGER_LITERALS)] == []


def test_grep_marks_the_block_of_every_trigger_literal(tmp_path, small_blocks):
    from explainer.diagnose.logpatterns import TRIGGER_LITERALS

    path = tmp_path / "train.log"
    with open(path, "w", encoding="utf-8") as out:
        for step in range(100 * len(TRIGGER_LITERALS) + 50):
            out.write(_healthy(step))
            if step % 100 == 50 and step // 100 < len(TRIGGER_LITERALS):  # 8 KB apart: a piece of its own
                out.write(f"2024-05-01 10:00:00,000 - trainer - INFO - {TRIGGER_LITERALS[step // 100]} (x)\n")
    blocks = list(_logfile._blocks(str(path), _logfile.grep_command()))
    assert len(blocks) > 2 * len(TRIGGER_LITERALS)
    found = b"".join(bytes(b.data) for b in blocks if b.has_trigger).decode()
    assert [t for t in TRIGGER_LITERALS if t not in found] == []


def test_a_ranks_message_left_open_does_not_make_the_healthy_lines_after_it_read_one_by_one(tmp_path, small_blocks,
                                                                                            monkeypatch):
    """A rank's error stays open until STALE_LINES lines pass without that rank (a tagged line may go on with it): the
    untagged healthy lines after it are skipped as when nothing is open, and it is closed where reading every line
    closes it (so it is reported in the same order)."""
    from explainer.diagnose.logscan import Scanner

    ranked = [corpus_message(where) + "\n" for where in ("r41_c.yaml#48", "r34_c.yaml#14")]
    errors = [ranked[0], (LOGS / "dataloader_worker.log").read_text(encoding="utf-8"), ranked[1], ranked[0]]
    path = tmp_path / "train.log"
    _write_log(path, errors, lines_between=1500)
    fed, feed = [], Scanner.feed
    monkeypatch.setattr(Scanner, "feed", lambda self, number, raw: fed.append(number) or feed(self, number, raw))
    found = [d.to_dict() for d in explain_input(str(path))]
    read = len(set(fed))
    assert found == _plain(path)
    assert [d["facts"]["ranks"] for d in found if d["rule"] and d["rule"].startswith("dtype.")] == [[0], [0]]
    error_lines = sum(error.count("\n") for error in errors) + 1
    assert read < error_lines + 6 * 32, f"{read} lines read one by one, for {error_lines} lines of errors"


def test_a_utf16_log_is_read_as_such_from_a_file_and_from_stdin(tmp_path, monkeypatch):
    """Windows PowerShell 5.1's `>` writes UTF-16 LE with a BOM and CRLF: that log was 'no error found' (the review of
    2026-12-07, its p3_utf16.txt); the same text as UTF-8 is explained."""
    import io
    import sys

    text = (LOGS / "dataloader_worker.log").read_text(encoding="utf-8")
    plain = tmp_path / "utf8.log"
    plain.write_text(text, encoding="utf-8")
    expected = [(d.rule, d.summary) for d in explain_input(str(plain))]
    assert expected and expected[0][0]
    wide = tmp_path / "utf16.log"
    wide.write_bytes(text.replace("\n", "\r\n").encode("utf-16"))  # (Python's utf-16 writes the BOM, little-endian here)
    assert wide.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
    assert [(d.rule, d.summary) for d in explain_input(str(wide))] == expected
    monkeypatch.setattr(_logfile, "GREP_MIN_BYTES", 0)  # a large log: grep's byte literals cannot find UTF-16 text
    assert _logfile.skippable_blocks(str(wide)) is None
    assert [(d.rule, d.summary) for d in explain_input(str(wide))] == expected
    piped = io.TextIOWrapper(io.BufferedReader(io.BytesIO(wide.read_bytes())), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", piped)
    assert [(d.rule, d.summary) for d in explain_input("-")] == expected


# A log record that only names an error word in passing, as the review of 2026-12-07 (defect 8) put one every 1,000
# lines of a 300 MB log: 11x grep's CPU, each such line read one by one with the 16 lines above it.
MENTION = ("2026-12-07 10:00:00,000 WARNING dataloader.py:88] worker 3 slow: batch took 2.1s (0 errors so far, "
           "errors=0, no RuntimeError)\n")


def test_log_lines_that_only_name_an_error_word_are_skipped_unread(tmp_path, small_blocks, monkeypatch):
    from explainer.diagnose.logblocks import SkippableBlock
    from explainer.diagnose.logscan import Scanner

    errors = [(LOGS / name).read_text(encoding="utf-8") for name in ("dataloader_worker.log", "torchrun_two_ranks.log")]
    path = tmp_path / "train.log"
    with open(path, "w", encoding="utf-8") as out:
        for step in range(6000):
            out.write(MENTION if step % 100 == 1 else _healthy(step))
            if step in (2000, 4500):
                out.write(errors[step // 4000])
    fed, decoded = [], []
    feed, decode = Scanner.feed, SkippableBlock.decode
    monkeypatch.setattr(Scanner, "feed", lambda self, number, raw: fed.append(number) or feed(self, number, raw))
    monkeypatch.setattr(SkippableBlock, "decode", lambda self: decoded.append(len(self.data)) or decode(self))
    found = [d.to_dict() for d in explain_input(str(path))]
    read, error_lines = len(set(fed)), sum(error.count("\n") for error in errors)
    assert read < error_lines + 4 * 32, f"{read} lines read one by one, for {error_lines} of errors"
    assert len(decoded) <= 8, f"{len(decoded)} blocks decoded for 2 errors and 60 lines that only name an error word"
    assert found == _plain(path) and len(found) >= 2


def test_in_a_log_with_no_record_a_line_that_names_an_error_word_is_still_tried_alone(tmp_path, small_blocks):
    """Skipped unread, such a line is still one of the last lines with a trigger literal that a log with no record
    tries alone (logblocks.LoneLines): the same answer as reading every line."""
    path = tmp_path / "train.log"
    with open(path, "w", encoding="utf-8") as out:
        for step in range(3000):
            out.write(MENTION if step % 100 == 1 else _healthy(step))
        out.write("2026-12-07 10:00:00,000 WARNING ngp.py:12] Got cutlass error: Error Internal at: 394\n")
        out.write(_healthy(3001))
    fast = [d.to_dict() for d in explain_input(str(path))]
    assert [d["rule"] for d in fast] == ["device.cutlass_status"] and fast[0]["facts"]["input_line"] == 3001
    assert fast == _plain(path)


def test_a_line_read_as_a_mention_begins_nothing_when_read():
    """loglines.only_mentions: a log record whose error words are mentions; each line of the fixture logs it takes for
    one, read by a scanner with nothing open, finds nothing and leaves nothing open."""
    from explainer.diagnose.loglines import only_mentions
    from explainer.diagnose.logpatterns import TRIGGER_RE
    from explainer.diagnose.logscan import Scanner

    assert only_mentions(MENTION)
    assert only_mentions("W0501 10:00:00.123456 1234 trainer.py:12] retrying, no RuntimeError seen yet")
    for line in ("2026-12-07 10:00:00,000 WARNING RuntimeError: CUDA error: out of memory",  # a header after the prefix
                 "2026-12-07 10:00:00,000 INFO dataloader.py:88] RuntimeError: retrying",  # an error word and a colon
                 "2026-12-07 10:00:00,000 - trainer - INFO - Exception has occurred: RuntimeError",  # VS Code's opener
                 "2026-12-07 10:00:00,000 - trainer - INFO - retried `RuntimeError: CUDA error: out of memory`",  # code
                 "2026-12-07 10:00:00,000 - trainer - INFO - Traceback (most recent call last):",  # another trigger
                 '2026-12-07 10:00:00,000 - trainer - INFO - File "train.py", line 3, in <module>',
                 "[rank1]: 2026-12-07 10:00:00,000 WARNING trainer.py:9] no RuntimeError",  # a rank's stream
                 "worker 3 slow: no RuntimeError"):  # no log record's prefix
        assert not only_mentions(line), line
    lines = [line for log in LOGS.iterdir() for line in log.read_text(encoding="utf-8").splitlines()]
    lines += [line for line in corpus_message("r41_c.yaml#48").splitlines()]
    for line in lines:
        if TRIGGER_RE.search(line) and only_mentions(line):
            scanner = Scanner()
            assert list(scanner.feed(1, line)) == [] and scanner.idle(), line
