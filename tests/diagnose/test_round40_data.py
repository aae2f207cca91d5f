"""Round-40 wordings for data (speech and audio programs, robotics and reinforcement learning, the code people learn
PyTorch from): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right
rule with the values it holds named; other wordings of the same families (from the threads cited) are claimed too,
and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r40_a.yaml#74", "data.worker_killed", ["/tmp/tmpHt7_3h.wav", "RIFF header"]),
    ("r40_c.yaml#21", "data.worker_killed", ["Trace/BPT trap: 5", "6156"]),
    ("r40_c.yaml#36", "data.imagefolder_no_files", ["ILSVRC2012/train"]),
    ("r40_b.yaml#13", "data.dataset_example_key_missing", ["image", "t['obs']['image']"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # other signals a worker dies of, as torch prints them (rowanz/r2c#18, pytorch#4507)
    ("RuntimeError: DataLoader worker (pid 6645) is killed by signal: Illegal instruction.", "data.worker_killed",
     ["6645", "Illegal instruction"]),
    ("RuntimeError: DataLoader worker (pid 23616) is killed by signal: Terminated.", "data.worker_killed",
     ["23616", "Terminated"]),
    # torchvision's own wording of an empty root (pytorch/examples#236)
    ("RuntimeError: Found 0 images in subfolders of: ./data", "data.imagefolder_no_files", ["./data"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # sox refusing a file with no DataLoader worker in sight (pysox#113)
    ("sox FAIL formats: can't open input `test.wav': WAVE: RIFF header not found", "data.worker_killed"),
    # a robot's motor name missing from an observation dict, not a dataset feature (lerobot PR #1248); LeRobot's bare
    # feature keys are left alone too: a policy's config shapes (r35_c#39, `other`) raise the same wording
    ("KeyError: 'shoulder_pan.pos'\nFATAL: exception not rethrown\nAborted (core dumped)",
     "data.dataset_example_key_missing"),
    ("KeyError: 'observation.images.top'", "data.dataset_example_key_missing"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
