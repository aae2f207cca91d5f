"""Property-based fuzzing of the message parsers and the rule loader: nothing escapes, nothing hangs."""

from __future__ import annotations

import io
import time

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from explainer.cli.explain import explain_stream
from explainer._errors import RuleError
from explainer.diagnose.explain import explain_text
from explainer.diagnose.logblocks import scan_blocks, split_embedded
from explainer.diagnose.logscan import scan
from explainer.probes import load_builtin_probes
from explainer.rules.rule import load_rule_file

from conftest import ROOT

LOGS = sorted((ROOT / "fixtures" / "logs").glob("*.log"))
PROBES = load_builtin_probes()
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces of real log lines, so the fuzzer reaches deep states and not only "no error found".
FRAGMENTS = [
    "Traceback (most recent call last):\n", '  File "/home/u/train.py", line 12, in <module>\n',
    "    out = model(x)\n", "    ^^^^^^^^\n", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10)\n",
    "[rank0]: ", "[rank1]: ", "2024-05-01 10:00:00,123 - trainer - ERROR - ", "\x1b[31m", "```\n", "`",
    "Original Traceback (most recent call last):\n", "During handling of the above exception, another exception occurred:\n",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n", "\n", "\t", "KeyError: 'lr'\n",
    "RuntimeError: Caught RuntimeError in DataLoader worker process 0.\n", "Watchdog caught collective operation timeout: ",
    "RuntimeError                              Traceback (most recent call last)\n", "Cell In[3], line 1\n",
    "----> 7 torch.vmap(func)(y)\n", '    "message": "RendezvousConnectionError: The connection failed.",\n',
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCReduceAll.cuh line=317 error=59 : device-side assert triggered\n",
    '  File "f.py", line 3, in g return h(x)RuntimeError: boom\n', "  what():\n", "    ~~~~ <--- HERE\n", "ValueError\n",
]
log_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=40)), max_size=60).map("".join)


def _found(errors):
    return [(e.text, e.line, [(f.file, f.line) for f in e.frames], e.ranks) for e in errors]


@FAST
@given(log_text)
def test_scan_never_raises_and_every_error_has_text(text):
    for error in scan(text.split("\n")):
        assert isinstance(error.text, str) and error.line >= 1


@FAST
@given(log_text, st.integers(min_value=1, max_value=300))
# Tracebacks opened by a line with no trigger literal in a block skipped unread (found by this test): IPython's arrow,
# also two skipped blocks before the error line, and Python 3.11's carets under a code line.
@example("----> 7 torch.vmap(func)(y)\nTHCudaCheck FAIL file=/pytorch/aten/src/THC/THCReduceAll.cuh line=317 error=59 : "
         "device-side assert triggered\n", 1)
@example("----> 7 torch.vmap(func)(y)\n  what():\nKeyError: 'lr'\n", 1)
@example("    out = model(x)\n    ^^^^^^^^\nKeyError: 'lr'\n", 1)
def test_block_scanning_finds_exactly_what_line_scanning_finds(text, block):
    blocks = [text[i:i + block] for i in range(0, len(text), block)]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert _found(scan_blocks(blocks)) == _found(scan(lines))


def test_block_scanning_matches_line_scanning_on_the_real_logs():
    for log in LOGS:
        text = log.read_text()
        for block in (17, 4096, 1 << 18):
            blocks = [text[i:i + block] for i in range(0, len(text), block)]
            assert _found(scan_blocks(blocks)) == _found(scan(text.splitlines())), f"{log.name}, blocks of {block}"


@FAST
@given(log_text)
def test_explaining_any_text_never_raises(text):
    diagnosis = explain_text(text)
    assert diagnosis.category
    split_embedded(text)
    explain_stream(io.StringIO(text))


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=2000))
def test_binary_junk_is_harmless(data):
    text = data.decode("utf-8", "replace")
    explain_stream(io.StringIO(text))
    explain_text(text)


def test_ten_megabyte_message_is_explained_within_budget():
    message = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x512 and 256x10) " + "x" * 10_000_000
    started = time.monotonic()
    diagnosis = explain_text(message)
    assert time.monotonic() - started < 5
    assert diagnosis.rule == "shape.matmul"
    started = time.monotonic()
    explain_stream(io.StringIO("a" * 10_000_000 + "\n" + message[:200] + "\n"))
    assert time.monotonic() - started < 10


front_matter = st.dictionaries(
    st.sampled_from(["id", "category", "title", "patterns", "summary", "fixes", "probes", "examples",
                     "priority", "kind", "facts", "related", "fixture", "counter_examples", "junk"]),
    st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=30)),
                 lambda children: st.one_of(st.lists(children, max_size=3),
                                            st.dictionaries(st.sampled_from(["message", "source"]), children, max_size=2)),
                 max_leaves=8),
    max_size=12)


@FAST
@given(front_matter, st.text(max_size=50))
def test_rule_loader_only_ever_raises_rule_error(tmp_path_factory, data, body):
    import yaml

    path = tmp_path_factory.mktemp("rules") / "fuzzed.md"
    path.write_text("---\n" + yaml.safe_dump(data) + "---\n" + body)
    try:
        load_rule_file(path, known_probes=PROBES)
    except RuleError:
        pass


@FAST
@given(st.text(max_size=300))
def test_rule_loader_survives_arbitrary_files(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("rules") / "raw.md"
    path.write_text(text)
    try:
        load_rule_file(path, known_probes=PROBES)
    except RuleError:
        pass
