"""The MkDocs hook of the generated site (its mkdocs.yml lists this file): a rule page's message lines,
listed in its front matter as `search: messages:`, become the tags of the page's own search entry, so
that a pasted message ranks the page that shows it (search.py says why), and its `search: rule:` (its id) the
entry's `rule` field, so that the id the explainer prints finds the page. The theme's search plugin
would give front-matter tags to every section of a page, which doubled the index and its query time.

MkDocs loads this file by path, so it imports nothing from the explainer."""

from __future__ import annotations

import html
import json
import os

from mkdocs.plugins import event_priority

_messages: dict[str, list[str]] = {}  # page URL -> its message lines
_rules: dict[str, str] = {}  # page URL -> its `rule` search field (its id, search.py's rule_terms)


def on_page_context(context, page, config, nav):
    search = page.meta.get("search") or {}
    messages = search.get("messages")
    if messages:
        # As HTML, as the index holds titles: the theme inserts a matched tag into the results as markup.
        _messages[page.url] = [html.escape(str(message), quote=False) for message in messages]
    if search.get("rule"):
        _rules[page.url] = str(search["rule"])
    return context


@event_priority(-50)  # after the search plugin writes its index (0), before the offline plugin inlines it (-100)
def on_post_build(config):
    path = os.path.join(config.site_dir, "search", "search_index.json")
    if not (_messages or _rules) or not os.path.isfile(path):
        return
    with open(path, encoding="utf-8") as file:
        index = json.load(file)
    for entry in index["docs"]:
        messages = _messages.get(entry["location"])
        if messages:
            entry["tags"] = messages
        page, _, anchor = entry["location"].partition("#")
        if entry["location"] in _rules:
            entry["rule"] = _rules[entry["location"]]
        elif page in _rules and anchor.startswith("message-"):
            # A message's heading is its searched line (the entry's title); the whole message under it and its
            # source are shown, not searched: a third of the index, and of the time it takes to be ready.
            entry["text"] = ""
    with open(path, "w", encoding="utf-8") as file:
        json.dump(index, file, separators=(",", ":"))
