"""Round-37 wordings for data pipelines, part 2 (worker shutdown, decoding, WebDataset-style archives, Subset
indexing): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule
with the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and
near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste, raise_fixture


CORPUS_CASES = [
    ("r37_b.yaml#58", "data.zip_bad_crc", ["B/1/000000/0/c/0/0/0/0/0", "worker process 0", "_zip.py:158"]),
    ("r37_b.yaml#61", "data.pin_memory_thread", ["pin_memory.py:28", "_pin_memory_loop", "expected 2", "got 0"]),
    ("r37_b.yaml#62", "data.worker_shutdown_error", ["dataloader.py:1324", "process.py:160", "_shutdown_workers"]),
    ("r37_b.yaml#63", "data.worker_shutdown_error", ["dataloader.py:942", "process.py:122", "_shutdown_workers"]),
    ("r37_b.yaml#64", "data.worker_shutdown_error", ["Errno 104", "dataloader.py:378", "reductions.py:151"]),
    ("r37_b.yaml#67", "data.audio_load_failed", ["common_voice_tr_17346025.mp3"]),
    ("r37_b.yaml#80", "data.dataloader_exhausted", ["StopIteration", "batches_outstanding"]),
    ("r37_b.yaml#89", "data.webdataset_tar_read_error", ["train-224-30/00000022.tar", "(18, 32)"]),
    ("r37_b.yaml#85", "data.subset_index", ["dataset.py:257", "self.dataset[self.indices[idx]]", "fetch.py:46"]),
    ("r37_b.yaml#86", "data.subset_index", ["sample.py:180", "dataset.py:311", "testset[args.data_id]"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_worker_error_names_the_innermost_frame():
    diagnosis = explain_paste(corpus_message("r37_b.yaml#70"))
    assert diagnosis.rule == "data.worker_error"
    assert "ElementTree.py:587" in " ".join(diagnosis.fixes)


@pytest.mark.parametrize("text, rule, values", [
    # torch 1.13's line numbers (Tri-MipRF#12)
    ("Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f7e6ba823a0>\nTraceback (most recent "
     "call last):\n  File \"/root/miniconda3/lib/python3.8/site-packages/torch/utils/data/dataloader.py\", line 1466, in "
     "__del__\n    self._shutdown_workers()\n  File \"/root/miniconda3/lib/python3.8/site-packages/torch/utils/data/"
     "dataloader.py\", line 1449, in _shutdown_workers\n    if w.is_alive():\n  File \"/root/miniconda3/lib/python3.8/"
     "multiprocessing/process.py\", line 160, in is_alive\n    assert self._parent_pid == os.getpid(), 'can only test a "
     "child process'\nAssertionError: can only test a child process",
     "data.worker_shutdown_error", ["dataloader.py:1466", "dataloader.py:1449", "process.py:160"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_subset_fixture_is_claimed_live():
    from explainer.diagnose.explain import explain

    error = raise_fixture("fixtures/data/subset_index_past_length.py")
    assert isinstance(error, IndexError)
    assert explain(error).rule == "data.subset_index"


@pytest.mark.parametrize("text, not_rule", [
    # the same TypeError from slicing a Subset of a Subset, pasted without its frames (pytorch#59512)
    ("TypeError: list indices must be integers or slices, not list", "data.subset_index"),
    # torch.load's own zip reader (Gen6D#39), not zipfile's CRC check
    ("RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory", "data.zip_bad_crc"),
    # tarfile's error without WebDataset's shard tag (taskonomy#50)
    ("tarfile.ReadError: unexpected end of data", "data.webdataset_tar_read_error"),
    # the pin-memory thread's exit, not a worker shutdown (thaw-slump-segmentation#53)
    ("    raise RuntimeError('Pin memory thread exited unexpectedly')\nRuntimeError: Pin memory thread exited unexpectedly",
     "data.worker_shutdown_error"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
