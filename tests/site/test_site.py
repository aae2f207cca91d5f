"""The runbook site: built once per module (pages generated from runbooks/, figures from real training,
`mkdocs build --strict`), then every link the explainer prints must land on a built page."""

from __future__ import annotations

import fcntl
import html
import math
import os
import pickle
import re
import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from explainer.cli.main import build_parser
from explainer._config import guide_path, local_site_dir, runbook_base, runbook_path, runbook_url
from explainer.probes import load_builtin_probes
from explainer.diagnose.render import render_text
from explainer.rules.base import RuleBase, default_rulebase
from explainer.rules.files import builtin_rules_dir
from explainer.rules.rule import load_rule_file
from explainer.site import build
from explainer.site.build import build_site, stale_files
from explainer.site.pages import fence, md_text, nav_title

from conftest import ROOT, raise_fixture

BASE = "https://runbooks.example.test/torch/"
# Everything a message may contain that Markdown, HTML or jinja would act on.
NASTY_MESSAGE = ("RuntimeError: acme odd failure <script>window.__pwned = 1</script> "
                 "<img src=x onerror=\"window.__pwned = 2\"> {{ 7 * 7 }} {% raw %} | a | b |\n"
                 "```` fence ` tick `` ticks\n[link](javascript:alert(1)) *not bold* &amp; \x02raw\x03")
TEAM_RULES = {
    "odd_message.md": f"""---
id: acme.odd_message
category: other
title: "A <b>team</b> rule with {{{{ braces }}}} & `ticks` | pipes"
patterns:
  - 'acme odd failure'
summary:
  - "The acme pipeline failed."
examples:
  - message: {yaml.safe_dump(NASTY_MESSAGE, default_style='"').strip()}
    source: tests/test_site.py
---
## What it means

A team rule, for the site tests: its title and message are full of markup.
""",
    "slow_epochs.md": """---
id: acme.slow_epochs
kind: signal
category: other
title: Epochs take longer and longer
facts: [epoch_seconds]
summary:
  - "An epoch took {{ epoch_seconds }} s."
---
## What it means

A signal rule of a team pack: raised from a measured fact, so it has no message to match.
""",
}


def team_rulebase(folder: Path) -> RuleBase:
    """The real rule base plus a team pack 'acme' with hostile text in it."""
    folder.mkdir(parents=True, exist_ok=True)
    probes = load_builtin_probes()
    team = []
    for name, text in TEAM_RULES.items():
        if not (folder / name).is_file() or (folder / name).read_text(encoding="utf-8") != text:  # (shared: built_site)
            (folder / name).write_text(text, encoding="utf-8")
        team.append(load_rule_file(folder / name, pack="acme", known_probes=probes))
    return RuleBase([*default_rulebase().rules, *team])


_BUILT: dict = {}


def built_site(tmp_path_factory) -> tuple:
    """The site of the real rule base and the 'acme' pack, built for BASE once per test run (a build takes half a
    minute): these tests read its files, test_site_browser serves it to Chromium. Under xdist the workers share the
    one build: the first to come builds it in the run's folder, under a lock the others wait on."""
    if not _BUILT:
        run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
        if run is None:
            _BUILT["site"] = _build(tmp_path_factory.mktemp("site"))
            return _BUILT["site"]
        root = tmp_path_factory.getbasetemp().parent / f"site-{run}"  # (the workers' folders are in the run's)
        root.mkdir(exist_ok=True)
        with open(root / "build.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            done = root / "result.pickle"
            if done.is_file():
                with pytest.MonkeyPatch.context() as env:
                    env.setenv("EXPLAINER_RUNBOOK_URL", BASE)
                    _BUILT["site"] = pickle.loads(done.read_bytes()), team_rulebase(root / "acme")
            else:
                _BUILT["site"] = _build(root)
                done.write_bytes(pickle.dumps(_BUILT["site"][0]))
    return _BUILT["site"]


def _build(root: Path) -> tuple:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("EXPLAINER_RUNBOOK_URL", BASE)
        rulebase = team_rulebase(root / "acme")
        return build_site(root / "html", work=root / "work", rulebase=rulebase), rulebase


def reuse_figures(monkeypatch, site) -> None:
    """Builds after the shared one copy its figures (the small models are trained and plotted once per test run;
    test_the_loss_curve_figures_come_from_real_runs_in_each_regime checks them)."""
    result, _ = site

    def copy(docs: Path) -> dict:
        shutil.copytree(result.docs / build.FIGURES_DIR, docs / build.FIGURES_DIR, dirs_exist_ok=True)
        return result.curves

    monkeypatch.setattr(build, "write_figures", copy)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with pytest.MonkeyPatch.context() as env:
        env.setenv("EXPLAINER_RUNBOOK_URL", BASE)
        yield built_site(tmp_path_factory)


def page_html(site, path: str) -> str:
    result, _ = site
    file = result.out / path / "index.html"
    assert file.is_file(), f"{path} was not built ({file} missing)"
    return file.read_text(encoding="utf-8")


def code_blocks(page: str) -> list[str]:
    """The text of every <pre> block on a page, as the reader sees it."""
    return [html.unescape(re.sub(r"<[^>]+>", "", block)).rstrip("\n") for block in re.findall(r"<pre[^>]*>(.*?)</pre>", page, re.S)]


def headings(page: str, level: int = 3) -> list[str]:
    return [html.unescape(re.sub(r"<[^>]+>", "", h)).replace("\u00b6", "").strip()
            for h in re.findall(rf"<h{level}[^>]*>(.*?)</h{level}>", page, re.S)]


def shown_messages(page: str) -> list[str]:
    """Messages as a rule page shows them: a heading each (searchable), the full text in a block if long."""
    return headings(page) + code_blocks(page)


def test_every_runbook_link_the_explainer_prints_lands_on_a_built_page(site, monkeypatch):
    result, rulebase = site
    monkeypatch.setenv("EXPLAINER_RUNBOOK_URL", BASE)
    assert len(default_rulebase().rules) >= 1
    for rule in default_rulebase().rules:
        url = runbook_url(rule.id)
        assert url.startswith(BASE), url
        relative = urlparse(url).path[len(urlparse(BASE).path):]
        assert relative == runbook_path(rule.id)
        assert (result.out / relative / "index.html").is_file(), f"{rule.id}: {url} has no page in the built site"
    for guide in sorted((builtin_rules_dir() / "guides").glob("*.md")):
        assert (result.out / guide_path(guide.stem) / "index.html").is_file(), f"guide {guide.stem} was not built"


def test_the_site_url_is_the_configured_runbook_base(site):
    result, _ = site
    config = yaml.safe_load(result.config.read_text(encoding="utf-8"))
    assert config["site_url"] == BASE
    assert f"<loc>{BASE}rules/shape.matmul/</loc>" in (result.out / "sitemap.xml").read_text(encoding="utf-8")


def test_the_default_base_is_the_local_site_and_serve_serves_on_its_own_port(monkeypatch):
    monkeypatch.delenv("EXPLAINER_RUNBOOK_URL", raising=False)
    monkeypatch.chdir(builtin_rules_dir())  # no [tool.explainer] runbook_url above it in a checkout
    assert runbook_base() == local_site_dir().as_uri() + "/"  # opened from the file system, no server
    assert runbook_url("shape.matmul") == runbook_base() + "rules/shape.matmul.html"
    args = build_parser().parse_args(["site", "serve"])
    assert args.port == 8000 and args.site_command == "serve"
    args = build_parser().parse_args(["site", "build", "--out", "x", "--check"])
    assert args.out == Path("x") and args.check


def test_a_rule_page_has_messages_sources_body_reproduction_and_related(site):
    page = page_html(site, "rules/shape.matmul")
    rule = default_rulebase().by_id["shape.matmul"]
    blocks = code_blocks(page)
    for example in rule.examples:
        assert example.message in shown_messages(page), f"example {example.message!r} is not shown verbatim"
    assert 'href="https://github.com/pytorch/pytorch/issues/27597"' in page
    assert 'href="../../fixtures/shape/linear_in_features.py"' in page
    for heading in ("What it means", "Likely causes", "How to confirm", "Fix", "Reproduction", "Related"):
        assert re.search(rf"<h2[^>]*>{heading}", page), f"section {heading} missing"
    assert (ROOT / rule.fixture).read_text(encoding="utf-8").rstrip("\n") in blocks
    for other in rule.related:
        if other in default_rulebase().by_id:
            assert f'href="../{other}/"' in page


def test_the_search_index_holds_each_rule_id_but_not_the_scripts_links_or_whole_messages(site):
    # The new user's review, defect 13: searching the id the explainer prints did not find its page, and the 10.7 MB
    # index took 5-15 s to be ready. (test_site_browser searches the ids in Chromium.)
    import json

    result, _ = site
    index = json.loads((result.out / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert index["config"]["fields"]["rule"] == {"boost": 2000}
    docs = {entry["location"]: entry for entry in index["docs"]}
    assert docs["rules/shape.matmul/"]["rule"].split() == ["shape.matmul"] * 16
    assert docs["rules/shape.matmul_zero_dim/"]["rule"].split() == ["shape.matmul_zero_dim"] * 4
    sections = {location.partition("#")[2].rstrip("0123456789") for location in docs if location.startswith("rules/")}
    assert sections.isdisjoint({"reproduction", "related", "messages-it-matches"}), sections
    messages = [entry for location, entry in docs.items() if location.startswith("rules/") and "#message-" in location]
    assert messages and all(entry["title"] for entry in messages)
    assert sum(1 for entry in messages if entry["text"]) <= len(messages) // 100  # (14 of 6,157 keep it: a known gap)
    rules = sum(1 for location in docs if location.startswith("rules/") and "#" not in location)
    assert (result.out / "search" / "search_index.json").stat().st_size < 4_500 * rules  # 5,600 bytes a rule before


def test_messages_are_shown_as_text_never_as_markup(site):
    page = page_html(site, "rules/acme.odd_message")
    shown = NASTY_MESSAGE.replace("\x02", "").replace("\x03", "")
    assert shown in code_blocks(page)
    assert shown.split("\n")[0] in headings(page)
    outside_code = re.sub(r"<pre.*?</pre>|<code>.*?</code>", "", page, flags=re.S)
    assert "window.__pwned" not in outside_code, "the message escaped its code block"
    assert "<script>window.__pwned" not in page and "<img src=x" not in page
    assert "49" not in "".join(code_blocks(page))
    result, _ = site
    for built in result.out.rglob("*.html"):
        text = built.read_text(encoding="utf-8")
        assert "<b>team</b>" not in text and "</title><" not in text, f"{built}: the rule title became markup"
    assert "A &lt;b&gt;team&lt;/b&gt; rule with {{ braces }}" in page


def test_signal_rules_get_pages_without_an_examples_section(site):
    _, rulebase = site
    signals = [r for r in rulebase.rules if r.kind == "signal"]
    assert any(r.pack == "acme" for r in signals)
    for rule in signals:
        page = page_html(site, f"rules/{rule.id}")
        assert "Messages it matches" not in page
        assert "A training signal" in page


def test_team_rules_appear_grouped_by_pack_and_in_their_category(site):
    pack = page_html(site, "pack/acme")
    assert 'href="../../rules/acme.odd_message/"' in pack and 'href="../../rules/acme.slow_epochs/"' in pack
    category = page_html(site, "category/other")
    assert "acme.odd_message" in category and "team pack acme" in category
    home = page_html(site, "")
    assert "Team rules" in home
    for category in {r.category for r in default_rulebase().rules}:
        assert page_html(site, f"category/{category}")


def test_the_home_page_shows_a_real_diagnosis_made_at_build_time(site, monkeypatch):
    from explainer import explain

    monkeypatch.setenv("EXPLAINER_RUNBOOK_URL", BASE)
    diagnosis = explain(raise_fixture("fixtures/shape/linear_in_features.py"))
    home = page_html(site, "")
    blocks = code_blocks(home)
    # The build runs the fixture from the repository root, as `python fixtures/...` would.
    assert render_text(diagnosis).replace(f"{ROOT}/", "").rstrip("\n") in blocks
    assert "model.encoder.fc" in render_text(diagnosis) and f"{BASE}rules/shape.matmul/" in render_text(diagnosis)
    assert "explainer.install()" in "\n".join(blocks) and "python -m explainer" in "\n".join(blocks)


def test_the_loss_curve_figures_come_from_real_runs_in_each_regime(site):
    result, _ = site
    runs = result.curves
    healthy, over, under = runs["train_healthy"], runs["train_overfitting"], runs["train_underfitting"]
    low, high, nan = runs["train_lr_too_low"], runs["train_lr_too_high"], runs["train_until_nan"]
    assert healthy.val[-1] < 0.3 and abs(healthy.val[-1] - healthy.train[-1]) < 0.1
    assert over.train[-1] < 0.05 and over.val[-1] > 1.5 * min(over.val)
    assert under.val[-1] > 2 * healthy.val[-1] and abs(under.val[-1] - under.train[-1]) < 0.1
    assert low.train[-1] > 0.95 * math.log(4)
    assert sum(b > a for a, b in zip(high.train, high.train[1:])) >= 5, f"lr_too_high is not unstable: {high.train}"
    bad = nan.first_non_finite
    assert bad is not None and max(nan.train[:bad]) > 100 * min(nan.train[:bad])
    page = page_html(site, "guide/loss-curves")
    for name in ("healthy", "overfitting", "underfitting", "unstable", "nan"):
        assert f'src="../../assets/figures/{name}.png"' in page
        png = result.out / "assets/figures" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'src="../../assets/figures/gradient-norms.png"' in page_html(site, "guide/gradients")


def test_the_gradient_nan_and_overfit_signal_pages_show_a_real_run_with_its_verdict(site, tmp_path):
    from explainer.site import figures as _site_curves, runs as _site_runs

    result, _ = site
    for name in ("vanishing_gradients", "exploding_gradients", "nan_located", "overfit_passed", "overfit_failed"):
        figure = f"signal-{name}.png"
        source = (ROOT / "runbooks" / "signals" / f"{name}.md").read_text(encoding="utf-8")
        assert f"](../assets/figures/{figure})" in source, f"runbooks/signals/{name}.md does not show {figure}"
        page = page_html(site, runbook_path(f"signal.{name}"))
        shown = re.findall(rf'<img[^>]*src="([^"]*/{re.escape(figure)})"', page)
        assert shown, f"the page of signal.{name} shows no {figure}"
        png = result.out / runbook_path(f"signal.{name}") / shown[0]
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{figure} was not written by the build"
    # The same real runs again: the TrainingMonitor watching each gives the verdict its figure is for.
    with _site_runs.one_thread():
        verdicts = _site_curves.write_gradient_figures(tmp_path)
    assert verdicts == {"signal-vanishing_gradients.png": "signal.vanishing_gradients",
                        "signal-exploding_gradients.png": "signal.exploding_gradients",
                        "signal-nan_located.png": "signal.nan_located"}
    assert all((tmp_path / figure).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for figure in verdicts)
    # overfit_one_batch gives each of its two verdicts on the run drawn for it.
    with _site_runs.one_thread():
        overfit = _site_curves.write_overfit_figures(tmp_path)
    assert overfit == {"signal-overfit_passed.png": "signal.overfit_passed",
                       "signal-overfit_failed.png": "signal.overfit_failed"}


def test_check_mode_tells_whether_the_generated_pages_are_current(site):
    result, rulebase = site
    with pytest.MonkeyPatch.context() as env:
        reuse_figures(env, site)
        env.setenv("EXPLAINER_RUNBOOK_URL", BASE)
        work = result.config.parent
        assert stale_files(work, result.out, rulebase=rulebase) == []
        page = result.docs / "rules" / "shape.matmul.md"
        page.write_text(page.read_text(encoding="utf-8") + "\nedited by hand\n", encoding="utf-8")
        assert stale_files(work, result.out, rulebase=rulebase) == ["docs/rules/shape.matmul.md"]


@pytest.mark.parametrize("text", ["plain", "a ``` b", "````", "`x` and ``y``", "ends with `"])
def test_fences_are_longer_than_any_backtick_run_inside(text):
    block = fence(text)
    opening = block.split("\n", 1)[0].rstrip("text")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    assert len(opening) > longest and len(opening) >= 3
    assert block.endswith("\n" + opening)


def test_inline_text_and_nav_titles_carry_no_markup():
    assert md_text("a <b> & *c* [d](e) `f` | # {g}") == (
        r"a &lt;b&gt; &amp; \*c\* \[d\]\(e\) \`f\` \| \# \{g\}")
    assert "<" not in nav_title("</title><script>") and ">" not in nav_title("</title><script>")


RUNBOOK_SECTIONS = ("What it means", "Likely causes", "How to confirm", "Fix")
FENCE_RE = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.S | re.M)


def body_sections(path: Path) -> dict[str, str]:
    """A runbook page's `## ` sections (front matter and fenced code set aside): heading -> text."""
    text = path.read_text(encoding="utf-8").split("\n---\n", 1)[1]
    unfenced = FENCE_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)  # same offsets as text
    starts = [(m.start(), m.group(1).strip()) for m in re.finditer(r"^## (.+)$", unfenced, re.M)]
    return {name: text[start:end] for (start, name), (end, _) in zip(starts, [*starts[1:], (len(text), "")])}


def guide_files() -> list[Path]:
    return sorted((builtin_rules_dir() / "guides").glob("*.md"))


def rule_files() -> list[Path]:
    return sorted(p for p in builtin_rules_dir().glob("*/*.md") if p.parent.name != "guides")


@pytest.mark.parametrize("path", guide_files() + rule_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_guide_and_rule_source_has_the_four_runbook_sections(path):
    sections = body_sections(path)
    for name in RUNBOOK_SECTIONS:
        assert name in sections, f"{path}: no '## {name}' section"
        assert len(sections[name].split()) > 4 + name.count(" "), f"{path}: '## {name}' is empty"
    assert re.search(r"^1\. ", sections["Likely causes"], re.M), f"{path}: likely causes are not ranked"


def test_every_built_guide_and_rule_page_shows_the_four_sections(site):
    _, rulebase = site
    pages = [guide_path(p.stem) for p in guide_files()]
    pages += [runbook_path(r.id) for r in rulebase.rules if r.pack == "builtin"]
    for path in pages:
        page = page_html(site, path.rstrip("/"))
        shown = headings(page, 2)
        for name in RUNBOOK_SECTIONS:
            assert name in shown, f"{path}: the built page has no '{name}' heading"


@pytest.mark.parametrize("path", rule_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_rule_fix_shows_before_and_after_code(path):
    fix = body_sections(path)["Fix"]
    blocks = FENCE_RE.findall(fix)
    assert len(blocks) >= 2 or ("Before" in fix and "After" in fix), f"{path}: ## Fix needs before/after code"


def test_the_local_site_shows_exactly_the_rules_rules_list_sees(tmp_path, site, monkeypatch):
    """A user's pack that took the example pack's prefix: the local site (and the repository's) shows the user's
    rules, never the shipped example pack's, and no duplicate prefix is reported for a pack nobody named."""
    from explainer.rules.base import reset_default_rulebase
    from explainer.site.build import generate, site_rulebase

    project = tmp_path / "proj"
    (project / "ci" / "rules").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.explainer]\nrules = ["ci/rules"]\n')
    (project / "ci" / "rules" / "pack.yaml").write_text("prefix: example\n")
    (project / "ci" / "rules" / "stall.md").write_text(
        "---\nid: example.stall\ncategory: data\ntitle: A loader worker stalled\npatterns:\n"
        "  - 'StallError: worker (?P<worker>\\d+) stalled'\nsummary:\n  - \"Worker {{ worker }} stalled.\"\n"
        "examples:\n  - message: 'StallError: worker 3 stalled'\n    source: https://example.org/stall\n---\n"
        + "".join(f"## {name}\n\nText.\n\n" for name in RUNBOOK_SECTIONS))
    monkeypatch.chdir(project)
    reset_default_rulebase()
    try:
        reuse_figures(monkeypatch, site)
        result = generate(tmp_path / "work", tmp_path / "html", local=True)
        listed = {rule.id for rule in default_rulebase().rules}
        assert "example.stall" in listed
        assert {page.stem for page in (result.docs / "rules").glob("*.md")} - {"index"} == listed
        assert result.skipped == []
        published = site_rulebase()
        assert "example.stall" in published.by_id and "example.loader.shard_timeout" not in published.by_id
        assert not published.team_problems, [str(p) for p in published.team_problems]
    finally:
        reset_default_rulebase()


def test_a_default_build_shows_the_example_team_pack(tmp_path, site, monkeypatch):
    """With no rule base given, the site shows the example pack in fixtures/team_pack beside the built-ins."""
    from explainer.site.build import generate

    reuse_figures(monkeypatch, site)
    result = generate(tmp_path / "work", tmp_path / "html")
    for rule_id in ("example.cluster.nccl_ifname", "example.loader.shard_corrupt", "example.loader.shard_timeout"):
        assert (result.docs / "rules" / f"{rule_id}.md").is_file(), f"{rule_id} has no page in a default build"
    assert (result.docs / "rules" / "shape.matmul.md").is_file()
    assert (result.docs / "pack" / "example" / "index.md").is_file()
    nav = yaml.safe_load(result.config.read_text(encoding="utf-8"))["nav"]
    assert any("Team rules" in entry for entry in nav if isinstance(entry, dict))
