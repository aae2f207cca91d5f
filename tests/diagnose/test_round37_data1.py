"""Round-37 wordings for data, part 1 (HDF5/LMDB in workers, samplers, datapipes, shared memory, timeouts, decoders):
each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the
values it holds named; other wordings of the same families (from the threads cited, or raised live by torch) are
claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r37_b.yaml#2", "data.h5py_not_picklable", ["h5py", "base.py:366", "__getnewargs__"]),
    ("r37_b.yaml#3", "data.h5py_not_picklable", ["h5py"]),
    ("r37_b.yaml#4", "data.h5py_worker_read_failed", ["h5py", "generate_dataset.py:34", "_worker_loop"]),
    ("r37_b.yaml#8", "data.datapipe_queue_no_request", ["_IterateQueueDataPipes", "QueueWrapper"]),
    ("r37_b.yaml#9", "data.distributed_sampler_size_changed",
     ["distributed.py:107", "len(indices) == self.total_size", "scratch.py:16"]),
    ("r37_b.yaml#12", "data.worker_error", ["numpy.dtype[uint8]", "worker process 0"]),
    ("r37_b.yaml#16", "data.streaming_shm_exists", ["/000002_locals", "Errno 17"]),
    ("r37_b.yaml#19", "data.iterable_dataset_len_warning", ["IterableDataset", "__len__"]),
    ("r37_b.yaml#21", "data.lmdb_env_not_picklable", ["'Environment'", "reduction.py:60", "spawn.py:126"]),
    ("r37_b.yaml#28", "data.single_process_timeout",
     ["self._timeout == 0", "_SingleProcessDataLoaderIter", "dataloader.py:664", "dataloader_problem.py:6"]),
    ("r37_b.yaml#38", "data.open_lm_not_enough_shards", ["shards"]),
    ("r37_b.yaml#42", "data.image_file_unreadable", ["worker process 3", "PngImagePlugin.py:122", "train.py:44"]),
    ("r37_b.yaml#49", "data.dali_nvjpeg_error",
     ["NVJPEG_STATUS_INVALID_PARAMETER", "n04515003/n03928589_1742.JPEG", "ImageDecoderRandomCrop",
      "nvjpeg_decoder_decoupled_api.h:840"]),
    ("r37_b.yaml#50", "data.dali_nvjpeg_error", ["nvjpeg_decoder.h:349", 'NVJPEG error "4"']),
    ("r37_b.yaml#53", "data.png_decode_abort", ["iCCP", "munmap_chunk()"]),
    ("r37_b.yaml#55", "data.datapipe_sharding_twice", ["ShardingFilterIterDataPipe"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # h5py 2.x's base.py under Windows' spawn pickler (ranjaykrishna/SST#8)
    ('  File "D:\\Anaconda3\\lib\\multiprocessing\\popen_spawn_win32.py", line 89, in __init__\n'
     "    reduction.dump(process_obj, to_child)\n"
     '  File "D:\\Anaconda3\\lib\\multiprocessing\\reduction.py", line 60, in dump\n'
     "    ForkingPickler(file, protocol).dump(obj)\n"
     '  File "D:\\Anaconda3\\lib\\site-packages\\h5py\\_hl\\base.py", line 308, in __getnewargs__\n'
     '    raise TypeError("h5py objects cannot be pickled")\n'
     "TypeError: h5py objects cannot be pickled", "data.h5py_not_picklable", ["base.py:308", "popen_spawn_win32"]),
    # Lightning's warning logged through Python's warnings (wfondrie/depthcharge#60)
    ("WARNING: UserWarning: Your `IterableDataset` has `__len__` defined. In combination with multi-process data "
     "loading (when num_workers > 1), `__len__` could be inaccurate if each worker is not configured independently "
     "to avoid having duplicate data.", "data.iterable_dataset_len_warning", ["IterableDataset", "__len__"]),
    # the worker's line pasted alone (hongfz16/DS-Net#6): numba's own rule
    ("TypeError: expected dtype object, got 'numpy.dtype[uint8]'", "data.numba_numpy_dtype", ["numpy.dtype[uint8]"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_distributed_sampler_size_check_raised_live():
    d = explain_fixture("fixtures/data/distributed_sampler_size_changed.py")
    assert_names(d, "data.distributed_sampler_size_changed", ["35", "total_size", "10"])


def test_single_process_timeout_raised_live():
    d = explain_fixture("fixtures/data/single_process_timeout.py")
    assert_names(d, "data.single_process_timeout", ["_SingleProcessDataLoaderIter", "timeout == 0"])


@pytest.mark.parametrize("text, not_rule", [
    # a lock, not an LMDB handle (the other category's generic pickling rule)
    ("TypeError: cannot pickle '_thread.RLock' object", "data.lmdb_env_not_picklable"),
    # streaming's own check of two datasets on one local directory (mosaicml/streaming#306)
    ("ValueError: Reused local directory: ['/nvmedisk/Datasets/llmfoundry/c4/train_small'] vs "
     "['/nvmedisk/Datasets/llmfoundry/c4/train_small']. Provide a different one.", "data.streaming_shm_exists"),
    # a glibc abort in another image library, with no libpng warning before it (lovell/sharp#1346)
    ("// munmap_chunk(): invalid pointer\n// [1]    22078 abort (core dumped)  node sharp.js", "data.png_decode_abort"),
    # the workers' own timeout, not a timeout without workers
    ("RuntimeError: DataLoader timed out after 1 seconds", "data.single_process_timeout"),
    # a dataset without any length, not the Lightning warning (iKernels/transformers-lightning#87)
    ("    dataset_len = len(trainer.datamodule.train_dataset)\n> TypeError: object of type "
     "‘TransformersIterableDataset’ has no len()", "data.iterable_dataset_len_warning"),
    # a worker's KeyError: nothing of numba
    ("KeyError: Caught KeyError in DataLoader worker process 0.", "data.numba_numpy_dtype"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
