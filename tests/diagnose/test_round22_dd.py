"""Round-22 wordings for data and distributed (MONAI's LoadImage without a reader, soundfile's 'Error opening',
torch.save's writer failing to open or write its archive, DDP's grad-strides warning, Horovod's stall warning): each
corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it
holds named; near misses stay unclaimed; the warning this torch can raise is explained live from its fixture."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message, explain_fixture, explain_paste

CORPUS_CASES = [
    # MONAI: only NumpyReader registered (nibabel missing); every reader registered (the file itself)
    ("r22_b.yaml#26", "data.monai_no_suitable_reader",
     ["/Final_Data_real/train/FU WEI SU/raw_data.nii.gz", "LoadImage", "nibabel"]),
    ("r22_b.yaml#27", "data.monai_no_suitable_reader",
     ["005_t2_haste_fs_tra_p2_320.nii.gz", "NibabelReader", "failed on the file itself"]),
    # soundfile / libsndfile
    ("r22_b.yaml#22", "data.audio_load_failed",
     ["'/content/recordings/recordings/russian16.mp3'", "File contains data in an unknown format"]),
    # torch.save: the enforce place, the file DeepSpeed was saving (the last 'Saving' line, not an earlier one)
    ("r22_b.yaml#58", "data.checkpoint_save_failed",
     ["inline_container.cc:471", "bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt", "data/3"]),
    ("r22_b.yaml#59", "data.checkpoint_save_failed", ["inline_container.cc:778", "data.pkl", "file write failed"]),
    # torch 1.3's ScriptModule.save into an unwritable place: the file named by the saving call
    ("r22_b.yaml#61", "data.checkpoint_save_failed",
     ["inline_container.cc:319", "traced_resnet_model.pt", "opening archive"]),
    ("r22_b.yaml#11", "distributed.ddp_grad_strides_warning", ["bucket view strides", "DDP"]),
    ("r22_b.yaml#53", "distributed.horovod_stalled_ops",
     ["60 seconds", "allreduce.conv1.weight", "ready ranks: 5, 1, 4, 7, 2, 3"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


PASTED_CASES = [
    # MONAI 0.8's wording: no class name, the file given as a one-element tuple (Project-MONAI/MONAI#3457)
    ("RuntimeError: can not find a suitable reader for file: ('rawdata/sub-verse752/sub-verse752_dir-ax_ct.nii.gz',).\n"
     "    Please install the reader libraries, see also the installation instructions:\n"
     "    https://docs.monai.io/en/latest/installation.html#installing-the-recommended-dependencies.\n"
     "   The current registered: [<monai.data.image_reader.NumpyReader object at 0x7f703531f160>, "
     "<monai.data.image_reader.PILReader object at 0x7f703531f220>].",
     "data.monai_no_suitable_reader", ["('rawdata/sub-verse752/sub-verse752_dir-ax_ct.nii.gz',)", "nibabel"]),
    # soundfile >= 0.11 and a nameless file object (bastibe/python-soundfile#418); libsndfile's 'System error' (#883)
    ("soundfile.LibsndfileError: Error opening <_io.BytesIO object at 0x0000022B81C21850>: Format not recognised.",
     "data.audio_load_failed", ["<_io.BytesIO object at 0x0000022B81C21850>", "Format not recognised", "`format=`"]),
    ("soundfile.LibsndfileError: Error opening 'zero_shot_prompt.wav': System error.",
     "data.audio_load_failed", ["'zero_shot_prompt.wav'", "System error", "does not exist"]),
    # DDP's warning with both layouts (torch >= 1.9, a 1x1 conv in channels_last; naver/croco#21)
    ("[W reducer.cpp:320] Warning: Grad strides do not match bucket view strides. This may indicate grad was not "
     "created according to the gradient layout contract, or that the param's strides changed since DDP was "
     "constructed.  This is not an error, but may impair performance.\n"
     "grad.sizes() = [256, 256, 1, 1], strides() = [256, 1, 256, 256]\n"
     "bucket_view.sizes() = [256, 256, 1, 1], strides() = [256, 1, 1, 1] (function operator())",
     "distributed.ddp_grad_strides_warning", ["[256, 256, 1, 1]", "[256, 1, 256, 256]", "[256, 1, 1, 1]", "1x1"]),
    # Horovod's 'missing ranks' form, under mpirun's prefixes (horovod/horovod#1012)
    ("[1,0]<stderr>:[2019-04-13 13:58:31.870887: W horovod/common/operations.cc:588] One or more tensors were "
     "submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for "
     "more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that "
     "only subset of ranks is submitting tensors, which will cause deadlock.\n"
     "[1,0]<stderr>:Stalled ops:HorovodBroadcast_dense_1_bias_0 [missing ranks: 1]",
     "distributed.horovod_stalled_ops", ["`HorovodBroadcast_dense_1_bias_0`", "missing ranks: 1", "60 seconds"]),
]


@pytest.mark.parametrize("text, rule, values", PASTED_CASES, ids=[c[1] + str(i) for i, c in enumerate(PASTED_CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


NEAR_MISSES = [
    # the reader side of the archive (torch.jit.load of a missing file): not a save
    ("RuntimeError: [enforce fail at inline_container.cc:130] . PytorchStreamReader failed opening archive.",
     "data.checkpoint_save_failed"),
    # MONAI's wrapper around a transform's error: the cause is the exception above it
    ("RuntimeError: applying transform <monai.transforms.io.dictionary.LoadImaged object at 0x7f0d64a66e80>",
     "data.monai_no_suitable_reader"),
    # DDP's other performance warning
    ("[W reducer.cpp:1303] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find "
     "any unused parameters in the forward pass.", "distributed.ddp_grad_strides_warning"),
    # Horovod's shutdown after the stall: its own rule
    ("RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to "
     "allreduce, allgather or broadcast a tensor after one of the ranks finished execution.",
     "distributed.horovod_stalled_ops"),
]


@pytest.mark.parametrize("text, rule", NEAR_MISSES)
def test_near_misses_are_not_claimed_by_the_round22_rules(text, rule):
    import io

    from explainer.cli.explain import explain_stream

    rules = {d.rule for d in explain_stream(io.StringIO(text))}
    assert rule not in rules, rules


def test_the_grad_strides_warning_is_explained_live():
    # a Linear's weight re-laid out column-major after DDP built its buckets (gloo, one process)
    diagnosis = explain_fixture("fixtures/distributed/ddp_grad_strides.py")
    assert_names(diagnosis, "distributed.ddp_grad_strides_warning", ["[3, 4]", "[1, 3]", "[4, 1]"])
