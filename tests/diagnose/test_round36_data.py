"""Round-36 wordings for data (medical slides, time series, checkpoints of released models, video and remote-sensing
datasets, Triton's model loads): each corpus message (verbatim from the opened rounds) is claimed, from its text
alone, by the right rule with the values it holds named; other wordings of the same families (from the threads cited)
are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r36_a.yaml#6", "data.openslide_read_failed", ["OpenSlideError", "Corrupt JPEG data", "read_region"]),
    ("r36_a.yaml#36", "data.ptf_unknown_category", ["'0'", "add_nan=True"]),
    ("r36_a.yaml#66", "data.checkpoint_path_is_directory", ["work_dir/MedSAM/medsam_vit_b.pth", "build_sam.py:143"]),
    ("r36_a.yaml#85", "data.darts_series_dimensions_mismatch", ["dimensions"]),
    ("r36_b.yaml#40", "data.checkpoint_corrupt", ["resnet50", "model_repository_manager.cc:1152"]),
    ("r36_b.yaml#41", "data.unpickle_class_missing", ["BERT_FC", "models", "model.py(36)"]),
    ("r36_c.yaml#7", "data.state_dict_errors_cut", ["Model", "get_recognizer", "line 173"]),
    ("r36_c.yaml#15", "data.worker_error", ["worker process 0", "10 retries", "pyav", "division by zero"]),
    ("r36_c.yaml#16", "data.video_fetch_failed", ["video_reader::probe_video_from_memory", "10 retries"]),
    ("r36_c.yaml#17", "data.video_fetch_failed",
     ["decoder.py: 88", "av.container.input.InputContainer", "close"]),
    ("r36_c.yaml#23", "data.decord_video_stream_not_found", ["video_reader.cc:90", "-1381258232", "wanted index: -1"]),
    ("r36_c.yaml#80", "data.image_file_unreadable", ["UnidentifiedImageError", "worker process 0"]),
    ("r36_c.yaml#81", "data.torchgeo_sampler_patch_too_large", ["randrange()", "utils.py:49", "batch.py:115"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # OpenJPEG's and libtiff's failures through the same call (clinical-grade-computational-pathology#8, NCRF#9)
    ("    raise OpenSlideError(err)\nopenslide.lowlevel.OpenSlideError: OpenJPEG error: Error decoding tile. Component "
     "1 contains only 131072 blocks while component 0 has 262144 blocks", "data.openslide_read_failed",
     ["OpenJPEG error"]),
    # pytorch-forecasting#830: a string category
    ("KeyError: \"Unknown category 'Y' encountered. Set `add_nan=True` to allow unknown categories\"",
     "data.ptf_unknown_category", ["'Y'", "add_nan=True"]),
    # torch.load itself opening the folder (LOCATE#6), a folder given for the file (fastMRI#83)
    ("  File \"/home/linyi/anaconda3/envs/afford/lib/python3.8/site-packages/torch/serialization.py\", line 251, in "
     "__init__\n    super(_open_file, self).__init__(open(name, mode))\nIsADirectoryError: [Errno 21] Is a directory: "
     "'/home/linyi/Code/LOCATE/best_seen.pth'", "data.checkpoint_path_is_directory",
     ["/home/linyi/Code/LOCATE/best_seen.pth"]),
    ("    return _open_file(name_or_buffer, mode)\n  File \"/home/anaconda3/lib/python3.8/site-packages/torch/"
     "serialization.py\", line 210, in __init__\n    super(_open_file, self).__init__(open(name, mode))\n"
     "IsADirectoryError: [Errno 21] Is a directory: '/home/fastMRI-master/experiments/lightning_logs/version_12/"
     "checkpoints/'", "data.checkpoint_path_is_directory",
     ["/home/fastMRI-master/experiments/lightning_logs/version_12/checkpoints/"]),
    # darts#2037
    ("ValueError: The dimensions of the series in the training set and the validation set do not match.",
     "data.darts_series_dimensions_mismatch", ["val_series"]),
    # decord's newer builds (decord#221: the decoder-not-found code; mmaction2#893)
    ("decord._ffi.base.DECORDError: [10:17:57] /github/workspace/src/video/video_reader.cc:151: Check failed: st_nb "
     ">= 0 (-1128613112 vs. 0) ERROR cannot find video stream with wanted index: -1",
     "data.decord_video_stream_not_found", ["video_reader.cc:151", "-1128613112", "AVERROR_DECODER_NOT_FOUND"]),
    ("decord._ffi.base.DECORDError: [11:37:01] /github/workspace/src/video/video_reader.cc:151: Check failed: st_nb "
     ">= 0 (-1381258232 vs. 0) ERROR cannot find video stream with wanted index: -1",
     "data.decord_video_stream_not_found", ["AVERROR_STREAM_NOT_FOUND"]),
    # a PySlowFast descendant's give-up line alone (FROSTER#10)
    ("Failed to fetch video after 100 retries.", "data.video_fetch_failed", ["100 retries"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_checkpoint_folder_fixture_is_claimed():
    assert_names(explain_fixture("fixtures/data/checkpoint_path_is_directory.py"), "data.checkpoint_path_is_directory",
                 ["checkpoints/best.pth"])


@pytest.mark.parametrize("text, not_rule", [
    # decord's threaded decoder stopping, not a missing stream (decord#321)
    ("decord._ffi.base.DECORDError: [14:25:42] /github/workspace/src/video/ffmpeg/threaded_decoder.cc:104: Check "
     "failed: run_.load()", "data.decord_video_stream_not_found"),
    # Python's open() of a TensorFlow-style checkpoint folder, no weights file, no torch.load (text_summurization#15)
    ("IsADirectoryError: [Errno 21] Is a directory: '/home/vinay/Desktop/Multimodal/Dataset/mms_data/en/test/topic1/"
     "documents/saved_model/checkpoint'", "data.checkpoint_path_is_directory"),
    # openslide-python's argument check, not a decoding failure (openslide#561)
    ("region = slide.read_region((0, 0), level, slide.level_dimensions[level])\n*** ValueError: Argument is not "
     "writable", "data.openslide_read_failed"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
