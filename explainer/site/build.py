"""Building the runbook site: the figures of real training runs, `mkdocs build --strict`, the local
file:// copy a diagnosis links to, and the check that the generated sources are current."""

from __future__ import annotations

import filecmp
import importlib.util
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from explainer._config import SERVE_URL, configured_runbook_base, local_site_dir
from explainer.rules.base import RuleBase, build_rulebase
from explainer.rules.files import GUIDES_DIR, builtin_rules_dir

from .pages import DEFAULT_OUT, DEFAULT_WORK, EXAMPLE_PACK, SITE_DIR, SiteError, SiteGenerator, load_guides
from .search import search_fields, search_separator

HOOK = Path(__file__).with_name("mkdocs_hook.py")

# --- figures: curves of real training runs ---

FIGURES = {
    # file name -> (title, the runs it shows)
    "healthy.png": ("Healthy", ["train_healthy"]),
    "overfitting.png": ("Overfitting", ["train_overfitting"]),
    "underfitting.png": ("Underfitting, or a learning rate too low", ["train_underfitting", "train_lr_too_low"]),
    "unstable.png": ("Unstable: learning rate too high", ["train_lr_too_high"]),
    "nan.png": ("Loss becomes NaN", ["train_until_nan"]),
}
FIGURES_DIR = "assets/figures"


def write_figures(docs: Path) -> dict:
    """Train each small model into its regime now, plot what happened, and return the runs."""
    from torch import nn

    from . import figures, runs

    folder = docs / FIGURES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    with runs.one_thread():
        trained = {name: getattr(runs, name)() for _, names in FIGURES.values() for name in names}
        norms = {
            "sigmoid, default init": runs.layer_gradient_norms(nn.Sigmoid),
            "ReLU, default init": runs.layer_gradient_norms(nn.ReLU),
            "ReLU, Kaiming init": runs.layer_gradient_norms(nn.ReLU, kaiming=True),
        }
        figures.write_signal_figures(folder)  # one real run per curve verdict, for the signal rules' pages
        figures.write_gradient_figures(folder)  # and per gradient / NaN verdict, with the monitor's verdict
        figures.write_overfit_figures(folder)  # and the overfit-one-batch check's two verdicts
    for file_name, (title, names) in FIGURES.items():
        figures.plot_curves([trained[n] for n in names], folder / file_name, title,
                            reference=trained["train_healthy"] if file_name == "underfitting.png" else None)
    figures.plot_gradient_norms(norms, folder / "gradient-norms.png")
    return trained


# --- the build ---

@dataclass
class BuildResult:
    docs: Path
    config: Path
    out: Path
    pages: int
    curves: dict  # training function name -> the Curve it measured
    skipped: list[str]  # team rules and packs the site leaves out, and why (as `explainer rules check` says)


def site_rulebase(*, example: bool = True) -> RuleBase:
    """What the site shows: the rules in force here, as `explainer rules list` sees them (the built-in rules and
    every discovered team pack); with example (the repository's own site, so that readers see a complete pack),
    also the example pack in fixtures/team_pack, unless a discovered pack already has its prefix.

    Read through the folder indexes, as a crash reads the rules: the background build a crash starts finds the
    index that crash wrote, where validating every rule file again costs about 10 s of CPU."""
    from explainer.rules.base import LazyProbes
    from explainer.rules.packs import discover_packs

    probes = LazyProbes()  # the built-in probes are imported before a pack's, as in default_rulebase
    shipped = [(EXAMPLE_PACK, "the example pack in fixtures/team_pack")] if example and EXAMPLE_PACK.is_dir() else None
    packs, problems = discover_packs(fallback=shipped, before_probes=probes.load_all)
    return build_rulebase([("builtin", builtin_rules_dir())], probes, packs=packs, pack_problems=problems,
                          cached=True)


def generate(work: Path, out: Path, *, rulebase: RuleBase | None = None, local: bool = False) -> BuildResult:
    """Write work/docs (every page, script and figure) and work/mkdocs.yml; return where they are.

    local: the copy opened from the file system (file:// links, no server): no directory URLs and the
    search index inlined (mkdocs-material's offline plugin), no site_url."""
    if not (SITE_DIR / "mkdocs.yml").is_file():
        raise SiteError(f"no site sources at {SITE_DIR}: the site is built from a source checkout")
    missing = [name for name in ("mkdocs", "material", "matplotlib") if importlib.util.find_spec(name) is None]
    if missing:
        raise SiteError(f"{', '.join(missing)} missing: pip install -e '.[site]'")
    rulebase = rulebase or site_rulebase(example=not local)
    docs = work / "docs"
    if docs.exists():
        _empty(docs)
    docs.mkdir(parents=True, exist_ok=True)
    generator = SiteGenerator(rulebase, load_guides(builtin_rules_dir() / GUIDES_DIR))
    nav = generator.write(docs)
    runs = write_figures(docs)
    config = work / "mkdocs.yml"
    # The search plugin with the separator that keeps a pasted message's stop words, numbers and
    # punctuation out of the query, and the weight of rule pages' messages (search.py says why); the
    # rest of site/mkdocs.yml is inherited.
    search = {"search": {"separator": search_separator(), "fields": search_fields()}}
    settings = {
        "INHERIT": os.path.relpath(SITE_DIR / "mkdocs.yml", work),
        "docs_dir": "docs",
        "site_dir": os.path.relpath(out.resolve(), work.resolve()),
        "site_url": configured_runbook_base() or SERVE_URL,
        "nav": nav,
        "plugins": [search],
        "hooks": [os.path.relpath(HOOK, work)],
    }
    if local:
        settings.update(site_url=None, use_directory_urls=False, plugins=[search, "offline"])
    header = "# Generated by `explainer site build` from runbooks/: do not edit.\n"
    config.write_text(header + yaml.safe_dump(settings, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return BuildResult(docs, config, out, sum(1 for _ in docs.rglob("*.md")), runs,
                       [str(problem) for problem in rulebase.team_problems])


def _empty(folder: Path) -> None:
    for path in sorted(folder.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()


def run_mkdocs(config: Path) -> None:
    """`mkdocs build --strict`: any warning (a broken link, a missing file) fails the build."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--clean", "-f", str(config)],
                          capture_output=True, text=True, env=env, cwd=config.parent)
    if done.returncode != 0:
        raise SiteError(f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}")


def build_site(out: Path = DEFAULT_OUT, *, work: Path = DEFAULT_WORK, rulebase: RuleBase | None = None,
               local: bool = False) -> BuildResult:
    """Generate the pages into work, then build the HTML site into out."""
    result = generate(work, out, rulebase=rulebase, local=local)
    run_mkdocs(result.config)
    return result


def build_local_site(*, wait: bool = True, page: Path | None = None) -> Path | None:
    """Build the file:// copy into the user cache folder once (again when it lacks page); return its folder
    (None: another process is building it and wait is False). Built aside and moved into place, so a
    half-built site never shows."""
    import shutil

    html = local_site_dir()
    html.parent.mkdir(parents=True, exist_ok=True)
    with open(html.parent / "build.lock", "a") as lock:
        if not _lock(lock, wait):
            return None
        if (page or html / "index.html").is_file():
            return html
        scratch = Path(tempfile.mkdtemp(prefix="build-", dir=html.parent))
        try:
            build_site(scratch / "html", work=scratch / "work", local=True)
            if html.exists():
                shutil.rmtree(html)
            os.replace(scratch / "html", html)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return html


def _lock(handle, wait: bool) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; two builds at once only cost time
        return True
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def stale_files(work: Path = DEFAULT_WORK, out: Path = DEFAULT_OUT, *, rulebase: RuleBase | None = None) -> list[str]:
    """What differs between the generated sources in work and a fresh generation (empty: current)."""
    with tempfile.TemporaryDirectory(prefix="explainer-site-") as fresh_dir:
        fresh = Path(fresh_dir)
        # The same relative layout, so the generated config's relative paths compare equal.
        generate(fresh, fresh / os.path.relpath(out.resolve(), work.resolve()), rulebase=rulebase)
        config = Path(fresh_dir) / "mkdocs.yml"
        old_config = work / "mkdocs.yml"
        differences = []
        fresh_settings = yaml.safe_load(config.read_text(encoding="utf-8"))
        old_settings = yaml.safe_load(old_config.read_text(encoding="utf-8")) if old_config.is_file() else None
        # INHERIT and the hooks are relative to where the config lives: compare the files they name.
        for settings, folder in ((fresh_settings, fresh), (old_settings, work)):
            if settings:
                settings.pop("INHERIT", None)
                settings["hooks"] = [(folder / hook).resolve() for hook in settings.get("hooks", [])]
        if fresh_settings != old_settings:
            differences.append("mkdocs.yml")
        differences += _tree_differences(fresh / "docs", work / "docs")
        return differences


def _tree_differences(fresh: Path, current: Path) -> list[str]:
    def files(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} if root.is_dir() else set()

    new, old = files(fresh), files(current)
    changed = [f"docs/{name}" for name in sorted(new & old)
               if not filecmp.cmp(fresh / name, current / name, shallow=False)]
    return ([f"docs/{name} (missing)" for name in sorted(new - old)] + changed
            + [f"docs/{name} (no longer generated)" for name in sorted(old - new)])


if __name__ == "__main__":
    # `python -m explainer.site.build [SCRIPT_FOLDER]`: the background build a diagnosis starts when the local
    # site is missing; the folder of the script `python -m explainer` ran, whose project's packs it shows too.
    from explainer._config import set_script_folder

    set_script_folder(sys.argv[1] if len(sys.argv) > 1 else None)
    try:
        print(f"built {build_local_site(wait=False) or 'nothing: another process is building the site'}")
    except SiteError as exc:
        sys.exit(f"explainer: {exc}")
