"""How the site's search box reads a pasted error message: the `separator` of mkdocs-material's search
plugin, built here because it is generated from a word list, and the weight of a rule page's messages.

mkdocs-material 9 appends a trailing wildcard to every word of a query (`found* at* least* two*
devices*`), and lunr skips its pipeline, stop-word filter included, for a wildcard term. A pasted
message's short words ("a", "to", "at", "1", "b") therefore become prefixes that match every indexed
word they begin, and lunr adds up one score per distinct word matched: a long message heading of
another rule, full of words that start with "a" or "to", outranks the heading that holds the very
message pasted, and does so more often the more rules the site has. A `"` pair in the paste makes the
words between them required, which finds nothing when they are indexed with punctuation attached.

The separator splits both the pages (when the index is built in the browser) and every query word
(material's query transform tokenizes each word with it before adding the wildcard), so whatever it
matches is neither indexed nor searched for: words are split at ASCII punctuation and whitespace, and a
whole token that is a stop word, the word "torch", a number or a single character is a separator itself.
The words left in a query are the ones that say what failed.

Each example message is a heading of its rule's page, a search entry of its own. The theme then raises
every page's own entry (its title) above sections: a title that shares a few of a pasted message's words
(another rule's title quoting a similar message) outranked the heading that holds the whole message, for
about one pasted line in 14 once the site had 1,700 rules. So a rule page's own entry also carries the
page's message lines as tags (put there by the site's MkDocs hook, mkdocs_hook.py), weighted as a heading
is (`search_fields`): the page whose messages hold all the pasted words then scores as a whole page does,
and the theme's bonus for entries that match every query word goes to it. No page shows these tags (the
site does not use the theme's tags plugin), and the site's stylesheet hides them in search results.
"""

from __future__ import annotations

import re

# lunr's English stop-word list (lunr.stopWordFilter), which the index already drops: queries now drop
# them too instead of turning them into prefixes.
STOP_WORDS = (
    "a able about across after all almost also am among an and any are as at be because been but by can cannot "
    "could dear did do does either else ever every for from get got had has have he her hers him his how however "
    "i if in into is it its just least let like likely may me might most must my neither no nor not of off often "
    "on only or other our own rather said say says she should since so some than that the their them then there "
    "these they this tis to too twas us wants was we were what when where which while who whom why will with "
    "would yet you your"
).split()

# "torch" is in nearly every message and page, so it tells the pages apart by nothing; as a query's prefix
# (torch*) it matched every torch-named library in the titles (torchcodec, torchmdnet, torchvision) and
# ranked those pages first for any message that names torch.
UNINFORMATIVE = ("torch",)

# Whitespace and ASCII punctuation, "_" included (index_select, CUDA_LAUNCH_BLOCKING are searched as their
# words: each prefix then matches a few words, not every identifier it begins), as the inside of a
# JavaScript character class.
_BREAKS = r"""\s!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~"""


def _any_case(word: str) -> str:
    # The separator is applied before lowercasing and the theme compiles it without flags.
    return "".join(f"[{c}{c.upper()}]" for c in word)


def search_separator() -> str:
    """The search plugin's `separator`: a JavaScript regular expression (also valid in Python's re)."""
    dropped = [_any_case(w) for w in sorted((*STOP_WORDS, *UNINFORMATIVE), key=lambda w: (-len(w), w))]
    dropped += [r"\d+", f"[^{_BREAKS}]"]
    return f"[{_BREAKS}]+|(?<![^{_BREAKS}])(?:{'|'.join(dropped)})(?![^{_BREAKS}])"


def search_fields() -> dict:
    """The search plugin's `fields`: the theme's weights for titles (1000) and text (1), a rule page's
    message lines, its tags, weighted as a title (the theme's default, a million, would let the words of
    a page with many long messages outweigh everything else on it), and its id (rule_terms), weighted as two titles:
    enough for an id's page to outrank a title that shares its words, little enough that the category words of ids
    ("device", "shape") do not reorder searches for a pasted message (measured on the sample
    test_pasting_a_rules_message_line_ranks_its_page_in_the_first_three pastes, and on an eighth of the ids)."""
    return {"title": {"boost": 1000}, "text": {"boost": 1}, "tags": {"boost": 1000}, "rule": {"boost": 2000}}


# The id of one word is held 2**ID_WORDS times, each further word halves that (at least once).
ID_WORDS = 5


def rule_terms(rule_id: str) -> str:
    """The text of a rule page's own `rule` search field, so that searching the id the explainer prints
    (`shape.matmul`, searched as `shape* matmul*`) lands on its page first: every word of the query matches the
    field, where another page shares only a word of a title or text. An id that begins another
    (shape.matmul_zero_dim, whose field every word of that query matches too) is told apart by the number of
    times the field holds it: lunr weighs a word by its count in the field (no length normalisation: the theme
    sets b=0), so the id of fewer words, repeated more often (twice as often per word fewer), scores higher for the
    words both hold."""
    words = [word for word in re.split(search_separator(), rule_id) if word]
    return " ".join([rule_id] * 2 ** max(0, ID_WORDS + 1 - len(words)))
