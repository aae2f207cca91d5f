"""The runbook site generator: runbooks/ (rules and guides) -> Markdown pages -> `mkdocs build --strict`.

Pages are rendered with the jinja2 templates in site/templates into a work folder git ignores
(site/build/ by default): `docs/` for the Markdown and assets, and a `mkdocs.yml` that INHERITs
site/mkdocs.yml and adds the nav, docs_dir, site_dir and site_url. Nothing is copied by hand.
"""

from __future__ import annotations

import html
import json
import os
import re
import runpy
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import yaml
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from explainer._config import SOURCE_ROOT, guide_path, runbook_base, runbook_path
from explainer._diagnosis import CATEGORIES, Diagnosis
from explainer._errors import ExplainerError
from explainer.rules.base import RuleBase
from explainer.rules.rule import FRONT_MATTER_RE, Rule

from .search import rule_terms

ROOT = SOURCE_ROOT
SITE_DIR = ROOT / "site"
STYLESHEET = "assets/site.css"  # the site's stylesheet (site/mkdocs.yml lists it), copied into the docs
DEFAULT_WORK = SITE_DIR / "build"
DEFAULT_OUT = DEFAULT_WORK / "html"
EXAMPLE_PACK = ROOT / "fixtures" / "team_pack"
BUILTIN_PACK = "builtin"
# The rule whose fixture produces the diagnosis shown on the home page (else the first with a fixture).
HOME_RULE = "shape.matmul"
CATEGORY_BLURBS = {
    "shape": "Tensors whose sizes do not fit the operation: layers, losses, views, concatenation.",
    "device": "Tensors and modules on different devices, or a device this build does not have.",
    "dtype": "Operations given the wrong element type: integer logits, float indices, double inputs.",
    "memory": "Out-of-memory errors and what holds the memory.",
    "autograd": "Backward passes that cannot run: in-place changes, freed graphs, missing gradients.",
    "data": "Datasets, data loaders, checkpoints and what feeds the model.",
    "distributed": "Several processes training together: DDP, NCCL, collectives.",
    "numerics": "NaN, infinities and values that explode or vanish.",
    "compile": "torch.compile, dynamo, inductor, torch.export, TorchScript and ONNX export: graphs that cannot be captured, compiled or exported.",
    "other": "Installation, serialization and everything else.",
}
# Method pages worth reading next to a rule of each category.
CATEGORY_GUIDES = {
    "numerics": ["nan-first-checks", "gradients", "loss-curves"],
    "autograd": ["gradients"],
    "shape": ["overfit-one-batch"],
    "data": ["overfit-one-batch", "common-mistakes"],
}
CHECKLIST_GUIDE = "checklist"


class SiteError(ExplainerError):
    """The site could not be generated or built."""


@dataclass
class Guide:
    stem: str
    title: str
    order: int
    body: str
    file: Path


# --- escaping: every message, title and name from a rule file is data, never Markdown or jinja ---

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Python-Markdown's backslash escapes (and '|', which its tables extension adds).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|])")


def clean(text: str) -> str:
    """Control characters removed (Python-Markdown uses some as placeholders), tabs and newlines kept."""
    return _CONTROL.sub("", str(text).replace("\r\n", "\n").replace("\r", "\n"))


def fence(text: str, lang: str = "text") -> str:
    """A fenced code block that nothing inside can close: the fence is longer than any backtick run."""
    body = clean(text).rstrip("\n")
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{body}\n{ticks}"


def code_span(text: str) -> str:
    """One line as inline code: the backtick run around it is longer than any inside it."""
    line = " ".join(clean(text).split())
    longest = max((len(run) for run in re.findall(r"`+", line)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{ticks}{pad}{line}{pad}{ticks}"


def md_text(text: str) -> str:
    """Plain text for a Markdown paragraph or heading: no markup, no HTML, on one line."""
    flat = " ".join(clean(text).split())
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(flat, quote=False))


def nav_title(text: str) -> str:
    """A title for the nav: the theme inserts it as raw HTML, and unescapes it inside <title>."""
    flat = " ".join(clean(text).split()).replace("<", "\u2039").replace(">", "\u203a")
    return html.escape(flat, quote=False)


def external_link(url: str) -> str:
    """An http(s) URL as a link; anything else as plain text."""
    if not re.match(r"https?://[^\s<>\"']+$", url):
        return md_text(url)
    escaped = html.escape(url, quote=True)
    return f'<a href="{escaped}">{escaped}</a>'


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "-", unicodedata.normalize("NFKD", name).lower()).strip("-.") or "pack"


# --- sources: guides, fixtures, the home page's live diagnosis ---

def load_guides(folder: Path) -> list[Guide]:
    """runbooks/guides/*.md: front matter with title and order, then the page in Markdown."""
    guides = []
    for path in sorted(folder.glob("*.md")):
        match = FRONT_MATTER_RE.match(path.read_text(encoding="utf-8"))
        data = yaml.safe_load(match.group(1)) if match else None
        if not isinstance(data, dict) or not isinstance(data.get("title"), str):
            raise SiteError(f"{path}: a guide starts with front matter that has a 'title' (and an 'order')")
        order = data.get("order", 100)
        if not isinstance(order, int) or isinstance(order, bool):
            raise SiteError(f"{path}: order must be an integer, not {order!r}")
        guides.append(Guide(path.stem, data["title"], order, match.group(2).strip() + "\n", path))
    return sorted(guides, key=lambda g: (g.order, g.stem))


def run_fixture(relative: str) -> BaseException:
    """Run a fixture script as `python fixtures/...` would, from the repository root; return its error."""
    saved = os.getcwd(), sys.argv[:], sys.path[0]
    os.chdir(ROOT)
    sys.argv, sys.path[0] = [relative], str((ROOT / relative).parent)
    try:
        runpy.run_path(relative, run_name="__main__")
    except BaseException as exc:  # noqa: BLE001 - the fixture's error is what we want
        return exc
    finally:
        os.chdir(saved[0])
        sys.argv, sys.path[0] = saved[1], saved[2]
    raise SiteError(f"{relative} did not raise: it no longer reproduces its error")


def home_diagnosis(rulebase: RuleBase) -> tuple[Rule, Diagnosis]:
    """A real diagnosis: a shipped fixture is run now and its live exception explained."""
    from explainer.diagnose.explain import explain

    candidates = sorted((r for r in rulebase.rules if r.fixture and r.kind == "error" and r.pack == BUILTIN_PACK
                         and (ROOT / r.fixture).is_file()), key=lambda r: (r.id != HOME_RULE, r.id))
    for rule in candidates:
        diagnosis = explain(run_fixture(rule.fixture), rulebase=rulebase)
        if diagnosis.rule == rule.id:
            return rule, diagnosis
    raise SiteError("no built-in rule has a fixture that reproduces its error: nothing to show on the home page")


# --- pages ---

@dataclass
class Page:
    """A generated Markdown page: its path in docs/, nav title and text."""

    path: str
    title: str
    text: str


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(SITE_DIR / "templates")), undefined=StrictUndefined,
                      autoescape=False, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(fence=fence, md=md_text, code_span=code_span, external_link=external_link)
    return env


def rule_doc(rule_id: str) -> str:
    return runbook_path(rule_id).rstrip("/") + ".md"


def guide_doc(stem: str) -> str:
    return guide_path(stem).rstrip("/") + ".md"


def _relative(target: str, page: str) -> str:
    """A Markdown link from docs/page to docs/target (MkDocs resolves and checks it)."""
    return quote(os.path.relpath(target, os.path.dirname(page) or "."))


def _fixture_doc(relative: str) -> str | None:
    """Where a fixture script is published in docs/, if it is one of the repository's fixtures."""
    path = (ROOT / relative).resolve()
    try:
        path.relative_to((ROOT / "fixtures").resolve())
    except ValueError:
        return None
    return relative if path.is_file() and path.suffix == ".py" else None


def message_line(rule: Rule, text: str) -> str:
    """The line of an example message its heading shows: the line where the rule's pattern first matches
    it, the error line people paste into the search box, not the "Traceback (most recent call last):",
    log prefix or code fence above it. Each heading is a search entry with a heavy title boost, so it must
    hold the words of the error itself. The first line where no pattern matches (none should)."""
    starts = [found.start() for index in range(len(rule.pattern_sources))
              if (found := rule.pattern(index).search(text))]
    start = min(starts, default=0)
    line = text[text.rfind("\n", 0, start) + 1:].split("\n", 1)[0]
    return line if line.strip() else text.split("\n", 1)[0]


class SiteGenerator:
    """Every page and asset of the site for one rule base, written into a docs folder."""

    def __init__(self, rulebase: RuleBase, guides: list[Guide]):
        self.rulebase = rulebase
        self.guides = guides
        self.guide_stems = {g.stem for g in guides}
        self.env = _environment()
        self.files: dict[str, Path] = {}  # docs path -> file to publish (fixture scripts)

    def rule_page(self, rule: Rule) -> Page:
        page = rule_doc(rule.id)
        examples = []
        for example in rule.examples:
            local = _fixture_doc(example.source)
            if local:
                self.files[local] = ROOT / local
                link = f"[{md_text(example.source)}]({_relative(local, page)})"
            else:
                link = external_link(example.source)
            text = clean(example.message).strip("\n")
            item = {"message": example.message, "multiline": "\n" in text.strip(), "source": link}
            heading = message_line(rule, text)
            # Messages that read alike share one heading: one search entry, not one per example.
            same = next((e for e in examples if e["heading"] == heading), None)
            if same is not None:
                same["items"].append(item)
            else:
                examples.append({"heading": heading, "items": [item]})
        fixture = None
        if rule.fixture and _fixture_doc(rule.fixture):
            self.files[rule.fixture] = ROOT / rule.fixture
            fixture = {"path": rule.fixture, "link": _relative(rule.fixture, page),
                       "source": (ROOT / rule.fixture).read_text(encoding="utf-8")}
        related = [{"id": other, "title": self.rulebase.by_id[other].title,
                    "link": _relative(rule_doc(other), page)}
                   for other in rule.related if other in self.rulebase.by_id]
        guides = [{"title": g.title, "link": _relative(guide_doc(g.stem), page)}
                  for stem in [*CATEGORY_GUIDES.get(rule.category, []), CHECKLIST_GUIDE]
                  for g in self.guides if g.stem == stem]
        text = self.env.get_template("rule.md.j2").render(
            rule=rule, examples=examples, fixture=fixture, related=related, guides=guides, rule_terms=rule_terms(rule.id),
            category_link=_relative(f"category/{rule.category}/index.md", page),
            pack_link=_relative(f"pack/{_slug(rule.pack)}/index.md", page) if rule.pack != BUILTIN_PACK else None,
        )
        return Page(page, rule.id, text)

    def _rule_list(self, rules: list[Rule], page: str) -> list[dict]:
        return [{"id": r.id, "title": r.title, "kind": r.kind, "pack": r.pack,
                 "link": _relative(rule_doc(r.id), page)} for r in rules]

    def category_page(self, category: str, rules: list[Rule]) -> Page:
        page = f"category/{category}/index.md"
        text = self.env.get_template("category.md.j2").render(
            category=category, blurb=CATEGORY_BLURBS.get(category, ""), rules=self._rule_list(rules, page),
            builtin=BUILTIN_PACK)
        return Page(page, category.capitalize(), text)

    def pack_page(self, pack: str, rules: list[Rule]) -> Page:
        page = f"pack/{_slug(pack)}/index.md"
        text = self.env.get_template("pack.md.j2").render(pack=pack, rules=self._rule_list(rules, page))
        return Page(page, pack, text)

    def rules_index(self, categories: dict[str, list[Rule]], packs: dict[str, list[Rule]]) -> Page:
        page = "rules/index.md"
        text = self.env.get_template("rules_index.md.j2").render(
            categories=[{"name": c, "blurb": CATEGORY_BLURBS.get(c, ""), "count": len(rules),
                         "link": _relative(f"category/{c}/index.md", page)} for c, rules in categories.items()],
            packs=[{"name": p, "count": len(rules), "link": _relative(f"pack/{_slug(p)}/index.md", page)}
                   for p, rules in packs.items()])
        return Page(page, "All rules", text)

    def guide_page(self, guide: Guide) -> Page:
        text = self.env.get_template("guide.md.j2").render(guide=guide)
        return Page(guide_doc(guide.stem), guide.title, text)

    def home_page(self) -> Page:
        import torch

        from explainer.diagnose.render import render_text

        rule, diagnosis = home_diagnosis(self.rulebase)
        page = "index.md"
        text = self.env.get_template("home.md.j2").render(
            rule=rule, diagnosis=diagnosis, diagnosis_text=render_text(diagnosis, colour=False),
            diagnosis_json=json.dumps(json.loads(diagnosis.to_json()), indent=2, ensure_ascii=False),
            torch_version=torch.__version__, rule_link=_relative(rule_doc(rule.id), page),
            fixture_link=_relative(rule.fixture, page),
            guides=[{"title": g.title, "link": _relative(guide_doc(g.stem), page)} for g in self.guides],
            rules_link=_relative("rules/index.md", page), base=runbook_base())
        self.files[rule.fixture] = ROOT / rule.fixture
        return Page(page, "Home", text)

    def write(self, docs: Path) -> list:
        """Write every page and published script into docs; return the MkDocs nav."""
        by_category: dict[str, list[Rule]] = {}
        by_pack: dict[str, list[Rule]] = {}
        for rule in sorted(self.rulebase.rules, key=lambda r: r.id):
            by_category.setdefault(rule.category, []).append(rule)
            if rule.pack != BUILTIN_PACK:
                by_pack.setdefault(rule.pack, []).append(rule)
        categories = {c: by_category[c] for c in CATEGORIES if c in by_category}

        home = self.home_page()
        index = self.rules_index(categories, by_pack)
        rule_pages = {rule.id: self.rule_page(rule) for rule in self.rulebase.rules}
        category_pages = {c: self.category_page(c, rules) for c, rules in categories.items()}
        pack_pages = {p: self.pack_page(p, rules) for p, rules in by_pack.items()}
        guide_pages = [self.guide_page(g) for g in self.guides]
        for page in [home, index, *rule_pages.values(), *category_pages.values(), *pack_pages.values(),
                     *guide_pages]:
            _write(docs / page.path, page.text.encode("utf-8"))
        for relative, source in {**self.files, STYLESHEET: SITE_DIR / STYLESHEET}.items():
            _write(docs / relative, source.read_bytes())

        def entry(page: Page) -> dict:
            return {nav_title(page.title): page.path}

        rules_nav: list = [index.path]
        for category, rules in categories.items():
            builtin = [entry(rule_pages[r.id]) for r in rules if r.pack == BUILTIN_PACK]
            rules_nav.append({nav_title(category.capitalize()): [category_pages[category].path, *builtin]})
        nav: list = [entry(home), {"Methods": [entry(p) for p in guide_pages]}, {"Rules": rules_nav}]
        if by_pack:
            nav.append({"Team rules": [
                {nav_title(pack): [pack_pages[pack].path, *(entry(rule_pages[r.id]) for r in rules)]}
                for pack, rules in by_pack.items()]})
        return nav


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
