"""Round-29 wordings for data, memory and numerics (containers and clusters, Chinese-language TTS and LLM projects):
each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the
values it holds named; other wordings of the same families (from the threads cited) are claimed too, and near misses
stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r29_a.yaml#14", "data.checkpoint_read_failed", ["fd 33", "Stale file handle", "intrusive_ptr.h:348"]),
    ("r29_a.yaml#15", "data.checkpoint_folder_missing", ["./outputs/test", "_purge_stale_checkpoints", "keep_latest_k"]),
    ("r29_a.yaml#16", "data.checkpoint_save_failed", ["Input/output error", "Errno 5", "self.file_like.close()"]),
    ("r29_a.yaml#17", "data.too_many_workers_warning", ["8 worker processes", "system is 4"]),
    ("r29_b.yaml#10", "data.checkpoint_save_failed", ["data/2229", "inline_container.cc:476", "256653056", "256652948"]),
    ("r29_b.yaml#35", "other.path_argument_type", ["list"]),
    ("r29_b.yaml#59", "data.audio_load_failed", ["soundfile.LibsndfileError", "exc_type(msg)"]),
    ("r29_b.yaml#61", "data.checkpoint_corrupt", ["emb_g.weight", "G_0.pth", "failed finding central directory"]),
    ("r29_b.yaml#63", "data.checkpoint_mmap_not_zip", ["Vocos.pt", "_use_new_zipfile_serialization=True"]),
    ("r29_b.yaml#66", "numerics.loss_nan_log", ["train loss nan", "lr 0.000000e+00"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # a Celery worker's log of the same read failure (an excerpt of https://github.com/pytorch/pytorch/issues/21626,
    # the log line above its traceback)
    ("[2020-02-24 15:27:38,215: ERROR/ForkPoolWorker-76] Task fastai-models[c40b5516-3461-484f-b9cf-c6caf9608f0a] raised "
     "unexpected: RuntimeError('read(): fd 33 failed with Bad address',)", "data.checkpoint_read_failed", ["fd 33", "Bad address"]),
    # the write twin stays torch.save's
    ("RuntimeError: write(): fd 5 failed with No space left on device", "data.checkpoint_save_failed", ["fd 5"]),
    # the position check alone, with the path a Windows build prints (an excerpt of r29_b.yaml#10: its last line)
    (corpus_message("r29_b.yaml#10").splitlines()[-1], "data.checkpoint_save_failed",
     ["unexpected pos 256653056 vs 256652948", "inline_container.cc:337"]),
    # Python's own path errors: None from an unset option, os.stat's wording (RetroExplainer#12), pathlib on 3.12
    ("    a = os.fspath(a)\nTypeError: expected str, bytes or os.PathLike object, not NoneType",
     "other.path_argument_type", ["NoneType", "never set"]),
    ("    st = os.stat(path)\nTypeError: stat: path should be string, bytes, os.PathLike or integer, not NoneType",
     "other.path_argument_type", ["os.stat", "NoneType"]),
    # (the error line of https://github.com/Aider-AI/aider/issues/1890, Python 3.12)
    ("TypeError: argument should be a str or an os.PathLike object where __fspath__ returns a str, not 'NoneType'",
     "other.path_argument_type", ["NoneType"]),
    # a training log whose lr is not 0 names it without the zero reading (CosyVoice#652)
    (corpus_message("r30_c.yaml#14"), "numerics.loss_nan_log", ["lr 0.00055784"]),
])
def test_other_wordings_are_claimed(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_nonzero_lr_is_not_read_as_a_stopped_schedule():
    summary = explain_paste(corpus_message("r30_c.yaml#14")).summary
    assert "learning rate of 0" not in summary


@pytest.mark.parametrize("text", [
    # listing a data folder, not a checkpoint folder (lora-scripts#5)
    corpus_message("r9_a.yaml#84"),
    # a bare FileNotFoundError with no code line (an excerpt of r29_a.yaml#15: its last error line without the rank)
    "FileNotFoundError: [Errno 2] No such file or directory: './outputs/test'",
    # an OSError on closing that is not torch.save's (an excerpt of https://github.com/pymedusa/Medusa/issues/10661:
    # the closing line and its error)
    "    nfo_file.close()\nOSError: [Errno 5] Input/output error",
    # a LibsndfileError with Python's other placeholder, not the re-raise (the title of
    # https://github.com/facebookresearch/svoice/issues/90)
    "soundfile.LibsndfileError: <unprintable LibsndfileError object>",
])
def test_near_misses_stay_unclaimed(text):
    assert "data.checkpoint_folder_missing" not in claimed_by(text)
    assert "data.checkpoint_save_failed" not in claimed_by(text)
    if "LibsndfileError" not in text:
        assert claimed_by(text) == []
