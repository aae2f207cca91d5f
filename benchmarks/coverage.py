"""How much of the real world the rule base explains: the corpus of real messages in fixtures/real/.

    python benchmarks/coverage.py             # per family: explained / wrong / unexplained, tuning split
    python benchmarks/coverage.py --holdout   # the same for the held-out rounds (look at it rarely)
    python benchmarks/coverage.py --list unexplained|wrong|partial   # the messages behind a number
    python benchmarks/coverage.py --record    # write the floor that tests/rules/test_coverage.py enforces
    python benchmarks/coverage.py --readme    # write the figures into the README

Each corpus entry is a message copied verbatim from a public thread, with its URL, the family a person
read from the thread (`category`, a list where it is ambiguous; `none` for a message that is not a
PyTorch failure and must stay unexplained) and the values a good explanation repeats (`extract`).
The message goes through exactly what `explainer explain -` does. Outcomes:

- explained: a rule of the right family answered and named every value in `extract`;
- partial: the right family, but some value is missing from the summary, fixes and culprits;
- wrong: a rule of another family answered, or any rule answered a `none` message;
- unexplained: no rule answered a PyTorch failure.

The corpus grows in rounds (fixtures/real/rounds.yaml). The newest round is held out: collected without
looking at the rules and measured before any rule is written for it; rules are tuned on the older rounds.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "real"
ROUNDS = CORPUS / "rounds.yaml"
RECORD = Path(__file__).resolve().parent / "coverage.json"
OUTCOMES = ("explained", "partial", "wrong", "unexplained")
INTEGER_RE = re.compile(r"\d+")
DECIMAL_RE = re.compile(r"\d+\.\d+")
GLUED_RE = re.compile(r"([A-Za-z]+)(\d+)")
# a frame's place as Python prints it ('model.py", line 75') or IPython 8 names a notebook cell ('Cell In[14], line 1')
FRAME_SPELLING_RE = re.compile(r'(?:(?P<file>[^\s"”]+)["”]|(?P<cell>Cell In\s*\[\d+\])),? line (?P<line>\d+)')
# a frame as pdb prints it ('adjoint.py(31)'): the same place as 'adjoint.py:31'
PDB_SPELLING_RE = re.compile(r"(?P<file>[^\s()]+\.py)\((?P<line>\d+)\)")
# a frame as IPython < 8 prints it, with no line on its header ('core.py in transpose'): any line of that function
IPYTHON_SPELLING_RE = re.compile(r"(?P<file>[^\s]+\.py) in (?P<func>[\w<>.]+)(?:\(\))?")
# a frame's line as a paste cut it, with no file before it ('line 46'): any place the diagnosis states on that line
# a source file's place printed with its build's prefix ('/pytorch/aten/src/ATen/native/cuda/CuFFTUtils.h:70'): the
# same file and line as the source tree's path a diagnosis names ('aten/src/ATen/native/cuda/CuFFTUtils.h:70')
PATH_LINE_RE = re.compile(r"(?P<path>/?(?:[^\s/:]+/){2,}[^\s/:]+):(?P<line>\d+)")
BARE_LINE_RE = re.compile(r"line (?P<line>\d+)(?:, in (?P<func>[\w<>.]+))?")


@dataclass
class Entry:
    file: str
    index: int
    source: str
    categories: tuple[str, ...]
    family: str
    extract: tuple[str, ...]
    message: str

    @property
    def where(self) -> str:
        return f"{self.file}#{self.index}"

    @property
    def held_out(self) -> bool:
        return self.file in held_out_files()

    @property
    def negative(self) -> bool:
        return self.categories == ("none",)


@dataclass
class Result:
    entry: Entry
    outcome: str
    rule: str | None
    category: str | None
    missing: tuple[str, ...] = ()


def load_rounds() -> list[dict]:
    return yaml.safe_load(ROUNDS.read_text(encoding="utf-8"))


@functools.cache
def held_out_files() -> frozenset[str]:
    return frozenset(f for r in load_rounds() if r.get("held_out") for f in r["files"])


def load_corpus(folder: Path = CORPUS) -> list[Entry]:
    return list(_corpus_entries(folder))


@functools.cache
def _corpus_entries(folder: Path) -> tuple[Entry, ...]:
    """Read once per process: the test suite's modules each take their cases from it."""
    entries = []
    for path in sorted(folder.glob("*.yaml")):
        if path == ROUNDS:
            continue
        for index, raw in enumerate(_read_yaml(path.read_text(encoding="utf-8")) or [], start=1):
            categories = raw["category"] if isinstance(raw["category"], list) else [raw["category"]]
            entries.append(Entry(path.name, index, raw["source"], tuple(categories), raw["family"],
                                 tuple(str(v) for v in raw.get("extract") or ()), raw["message"]))
    return tuple(entries)


def _read_yaml(text: str):
    """libyaml where PyYAML has it (seven times faster); the pure-Python parser for the few verbatim pastes
    libyaml refuses (a tab where a block scalar's indentation is read)."""
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return yaml.safe_load(text)


def _flatten(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("`", "").replace("'", "").replace('"', "")).lower()


def value_named(value: str, said: str) -> bool:
    """A size is named when its numbers appear in order (`3 x 3` is `(3, 3)`); a lone decimal when a stated
    number rounds to it (`372.5` for `372.53`); a word glued to its number as either (`rank5`, `rank 5`);
    a frame's place as either spelling (`model.py", line 75` is `model.py:75`, `Cell In[14], line 1` is
    `Cell In[14]:1`, pdb's `adjoint.py(31)` is `adjoint.py:31`, IPython's `core.py in transpose` is `core.py:134 in
    transpose`), a bare `line 46` (or `line 46, in forward`) as a stated place on that line (`model.py:46 in
    forward`); a source path with its line by its last three parts (a build's prefix dropped); other values as
    text, a number at either end of it whole."""
    frame = FRAME_SPELLING_RE.fullmatch(value.strip()) or PDB_SPELLING_RE.fullmatch(value.strip())
    if frame and value_named(f"{frame.groupdict().get('file') or frame['cell']}:{frame['line']}", said):
        return True
    ipython = IPYTHON_SPELLING_RE.fullmatch(value.strip())
    if ipython and re.search(rf"(?<![\w.]){re.escape(ipython['file'])}:\d+ in {re.escape(ipython['func'])}\b", said):
        return True
    bare = BARE_LINE_RE.fullmatch(value.strip())
    if bare and re.search(rf":{bare['line']} in " + (re.escape(bare["func"]) + r"\b" if bare["func"] else ""), said):
        return True
    path = PATH_LINE_RE.fullmatch(value.strip())
    if path and re.search(rf"(?<![\w.-]){re.escape('/'.join(path['path'].split('/')[-3:]))}:{path['line']}(?!\d)", said):
        return True
    glued = GLUED_RE.fullmatch(value.strip())
    if glued and value_named(f"{glued.group(1)} {glued.group(2)}", said):
        return True
    if DECIMAL_RE.fullmatch(value.strip()):
        places = len(value.strip().split(".")[1])
        return any(round(float(n), places) == float(value) for n in DECIMAL_RE.findall(said))
    numbers = INTEGER_RE.findall(value)
    if numbers and not re.search(r"[A-Za-z_]{3,}", value):
        found = INTEGER_RE.findall(said)
        width = len(numbers)
        return any(found[i:i + width] == numbers for i in range(len(found) - width + 1))
    # text, with a number at either end a whole number there (`model.py:75` is not named by `model.py:750`)
    flat = _flatten(value)
    return re.search(("(?<!\\d)" if flat[:1].isdigit() else "") + re.escape(flat) + ("(?!\\d)" if flat[-1:].isdigit() else ""),
                     _flatten(said)) is not None


def what_was_said(diagnosis) -> str:
    """Everything the text output shows: the ranks it was seen on, title, summary, the 'at' / 'raised in' /
    'also at' lines, the records printed with the error, culprits, fixes."""
    from explainer.cli.explain import ranks_note

    culprits = " ".join(json.dumps(c, ensure_ascii=False) for c in diagnosis.culprits)
    places = [diagnosis.location.to_dict()] if diagnosis.location else []
    from explainer.diagnose.render import FRAME_FACTS

    places += [diagnosis.facts[k] for k, _ in FRAME_FACTS if isinstance(diagnosis.facts.get(k), dict)]
    places += [p for p in diagnosis.facts.get("also_at") or () if isinstance(p, dict)]  # the "also at" lines
    printed_with = diagnosis.facts.get("printed_with", [])
    places += [part["location"] for part in printed_with if part.get("location")]
    where = " ".join([*(f"{p['file']}:{p['line']} in {p.get('function', '')} {p['code']}" for p in places),
                      *(part["summary"] for part in printed_with)])
    node = f"in ComfyUI node {diagnosis.facts['comfyui_node']}" if diagnosis.facts.get("comfyui_node") else ""
    return " ".join([ranks_note(diagnosis), diagnosis.title, diagnosis.summary, where, node, *diagnosis.fixes,
                     culprits])


def judge(entry: Entry) -> Result:
    from explainer.cli.explain import explain_stream

    diagnoses = explain_stream(io.StringIO(entry.message))
    answered = next((d for d in diagnoses if d.rule is not None), None)
    if answered is None:
        return Result(entry, "explained" if entry.negative else "unexplained", None, None)
    if entry.negative or answered.category not in entry.categories:
        return Result(entry, "wrong", answered.rule, answered.category)
    said = what_was_said(answered)
    missing = tuple(v for v in entry.extract if not value_named(v, said))
    return Result(entry, "partial" if missing else "explained", answered.rule, answered.category, missing)


def judge_all(entries: list[Entry]) -> list[Result]:
    return [judge(entry) for entry in entries]


def summarise(results: list[Result]) -> dict[str, float]:
    """Shares of the PyTorch failures (explained, partial, unexplained) and of all messages (wrong)."""
    positives = [r for r in results if not r.entry.negative]
    counts = Counter(r.outcome for r in positives)
    wrong = sum(r.outcome == "wrong" for r in results)
    total = max(len(positives), 1)
    return {
        "messages": len(results),
        "failures": len(positives),
        "explained": round(100 * counts["explained"] / total, 1),
        "right_family": round(100 * (counts["explained"] + counts["partial"]) / total, 1),
        "unexplained": round(100 * counts["unexplained"] / total, 1),
        "wrong": round(100 * wrong / max(len(results), 1), 1),
    }


def outcomes_by_family(results: list[Result]) -> list[tuple[str, Counter]]:
    """(family, count of each outcome), families in order; a message counts under its first category."""
    by_family: dict[str, Counter] = defaultdict(Counter)
    for result in results:
        by_family[result.entry.categories[0]][result.outcome] += 1
    return sorted(by_family.items())


def table(results: list[Result]) -> str:
    lines = [f"{'family':<12} {'n':>5} " + " ".join(f"{o:>12}" for o in OUTCOMES)]
    for family, counts in outcomes_by_family(results):
        n = sum(counts.values())
        lines.append(f"{family:<12} {n:>5} " + " ".join(f"{counts[o]:>12}" for o in OUTCOMES))
    figures = summarise(results)
    lines.append("")
    lines.append(f"{figures['failures']} PyTorch failures, {figures['messages'] - figures['failures']} "
                 f"negative controls: explained {figures['explained']}% (right family "
                 f"{figures['right_family']}%), unexplained {figures['unexplained']}%, wrong {figures['wrong']}% "
                 f"of all messages")
    return "\n".join(lines)


def listing(results: list[Result], outcome: str) -> str:
    lines = []
    for r in results:
        if r.outcome != outcome:
            continue
        first = next((line.strip() for line in r.entry.message.splitlines() if line.strip()), "")
        last = r.entry.message.strip().splitlines()[-1].strip()
        detail = f" -> {r.rule} ({r.category})" if r.rule else ""
        if r.missing:
            detail += f" missing {list(r.missing)}"
        lines.append(f"{r.entry.where} [{'/'.join(r.entry.categories)} {r.entry.family}]{detail}\n"
                     f"    {first[:160]}\n" + (f"    ... {last[:160]}\n" if last != first else ""))
    return "".join(lines) or f"(no {outcome} messages)\n"


def figures_row(label: str, figures: dict[str, float]) -> str:
    return (f"| {label} | {figures['failures']} | {figures['explained']}% | {figures['right_family']}% | "
            f"{figures['unexplained']}% | {figures['wrong']}% |")


def readme_section(results: list[Result]) -> str:
    """The README's account of the corpus and the figures, from this run."""
    rounds = load_rounds()
    held = [r for r in results if r.entry.held_out]
    tuning = [r for r in results if not r.entry.held_out]
    open_rounds = ", ".join(str(r["round"]) for r in rounds if not r.get("held_out"))
    held_rounds = [r for r in rounds if r.get("held_out")]
    lines = [
        f"`fixtures/real/` holds {len(results)} messages copied verbatim from public GitHub threads, each with "
        "its URL, the family a person read from the thread, and the values a good explanation repeats (sizes, "
        "dtypes, kernel names, status codes): torch 0.4 to 2.x, pasted the way people paste (backticks, quotes, "
        "`[rankN]:` and log prefixes, VS Code and Jupyter tracebacks, wrapped and cut lines), and "
        f"{sum(r.entry.negative for r in results)} negative controls (text in the same threads that is not a "
        "PyTorch failure, which must stay unexplained). `python benchmarks/coverage.py` puts each message through "
        "`explainer explain` and prints, per family: explained (a rule of the right family answered and named "
        "every value), partial (right family, a value missing), wrong (another family, or any rule for a negative "
        "control) and unexplained; `--list unexplained|partial|wrong` prints the messages.",
        "",
        "The corpus grows in rounds (`fixtures/real/rounds.yaml`). Each round is collected by someone who does not "
        "look at the rules, and judged once, before any rule is written for it: that first figure is the honest one "
        "for messages nobody has seen. Then the round is opened for rule writing and a new round is held out. "
        "`tests/rules/test_coverage.py` fails when a figure falls below the one recorded in `benchmarks/coverage.json`.",
        "",
        "| split | PyTorch failures | explained | right family | unexplained | wrong (of all messages) |",
        "| --- | --- | --- | --- | --- | --- |",
        figures_row(f"rounds {open_rounds} (rules written from them)", summarise(tuning)),
    ]
    if held_rounds:
        label = "held out, partly seen" if any(r.get("seen") for r in held_rounds) else "held out, never seen"
        names = ", ".join(str(r["round"]) for r in held_rounds)
        lines.append(figures_row(f"round{'s' * (len(held_rounds) > 1)} {names} ({label})", summarise(held)))
    lines += [figures_row("all", summarise(results)), "", "Each round when it was first judged:", ""]
    lines += [f"- round {r['round']}: {r['measured']}" + (f"; {r['seen']}" if r.get("seen") else "")
              for r in rounds if r.get("measured")]
    lines += ["", "Per family, all rounds (for `none`, the negative controls, \"explained\" counts the ones "
              "correctly left unexplained):", "", "| family | messages | explained | partial | wrong | unexplained |",
              "| --- | --- | --- | --- | --- | --- |"]
    for family, counts in outcomes_by_family(results):
        lines.append(f"| {family} | {sum(counts.values())} | " + " | ".join(str(counts[o]) for o in OUTCOMES) + " |")
    return "\n".join(lines)


def write_readme(results: list[Result]) -> None:
    from readme import replace_section  # benchmarks/readme.py, beside this script

    replace_section("benchmarks/coverage.py --readme", readme_section(results))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--holdout", action="store_true", help="the held-out rounds instead of the tuning split")
    parser.add_argument("--all", action="store_true", help="every round")
    parser.add_argument("--readme", action="store_true", help="write the figures into the README")
    parser.add_argument("--list", choices=OUTCOMES, help="print the messages with this outcome")
    parser.add_argument("--record", action="store_true", help=f"write both splits' figures to {RECORD.name}")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    results = judge_all(load_corpus())
    chosen = results if args.all else [r for r in results if r.entry.held_out == args.holdout]
    print(f"== {'all rounds' if args.all else 'held-out rounds' if args.holdout else 'tuning split'}")
    print(table(chosen))
    if args.list:
        print()
        print(listing(chosen, args.list), end="")
    if args.readme:
        write_readme(results)
    if args.record:
        record = {"all": summarise(results),
                  "tuning": summarise([r for r in results if not r.entry.held_out]),
                  "held_out": summarise([r for r in results if r.entry.held_out])}
        RECORD.write_text(json.dumps(record, indent=2) + "\n")
        print(f"\nrecorded in {RECORD.relative_to(ROOT)}: all messages {record['all']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
