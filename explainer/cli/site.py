"""`explainer site build [--out DIR] [--check]` and `explainer site serve [--port N]`: the runbook site."""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

DEFAULT_PORT = 8000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="site_command", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="generate the pages from runbooks/ and build the HTML site",
                           description="Generate the pages from runbooks/ into site/build/ and run "
                                       "`mkdocs build --strict` on them.")
    build.add_argument("--out", type=Path, default=None, help="where the HTML goes (default: site/build/html)")
    build.add_argument("--check", action="store_true",
                       help="only tell whether the generated pages in site/build/ are current (exit 1 if not)")
    serve = sub.add_parser("serve", help="build the site, then serve it on 127.0.0.1",
                           description="Build the site, then serve it on http://127.0.0.1:PORT/ until interrupted.")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default: {DEFAULT_PORT}, the default runbook URL")
    serve.add_argument("--out", type=Path, default=None, help="where the HTML goes (default: site/build/html)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from explainer.site.build import build_site, stale_files
    from explainer.site.pages import DEFAULT_OUT, SiteError

    out = args.out or DEFAULT_OUT
    try:
        if args.site_command == "build" and args.check:
            stale = stale_files(out=out)
            if stale:
                sys.stderr.write("explainer: the generated site is not current; run `explainer site build`:\n")
                sys.stderr.writelines(f"  {name}\n" for name in stale)
                return 1
            print("explainer: the generated site is current")
            return 0
        result = build_site(out)
    except SiteError as exc:
        sys.stderr.write(f"explainer: {exc}\n")
        return 1
    print(f"explainer: built {result.pages} pages into {result.out}")
    for problem in result.skipped:  # a team rule or pack left out: said, as at a crash and in `rules list`
        sys.stderr.write(f"explainer: not on the site: {problem}\n")
    if args.site_command == "serve":
        return serve(result.out, args.port)
    return 0


def serve(folder: Path, port: int) -> int:
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    handler = partial(SimpleHTTPRequestHandler, directory=str(folder))
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        sys.stderr.write(f"explainer: cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}\n")
        return 1
    print(f"explainer: serving http://127.0.0.1:{port}/ (Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
