"""Round-37 second wave (writer w2c): entries of rounds 32-35 whose right rule answered without naming the frame the
message shows (the frame that calls backward, load_state_dict or a BatchNorm layer, the in-place call on the failing
line, the call that hands images to the model, the library frame a loader ran in, an extension's undefined symbol):
each corpus message (verbatim from the opened rounds) is claimed by the right rule with those places named; a live
traceback of torch's own in-place cast error names its in-place call too."""

from __future__ import annotations

import traceback

import pytest
import torch

from conftest import assert_names, corpus_message, explain_paste, said


CORPUS_CASES = [
    ("r32_a.yaml#13", "dtype.kernel_scalar_type", ["Half", "Float", "encode_prompt"]),
    ("r32_b.yaml#10", "autograd.inplace_modified", ["training.py:39", "loss.backward()"]),
    ("r33_a.yaml#23", "dtype.result_cast", ["loss.py:211", "gj.clamp_(0, gain[3] - 1)"]),
    ("r33_a.yaml#39", "shape.vit_image_size", ["960x384", "FSC_test_cross(zero-shot).py:318"]),
    ("r33_a.yaml#46", "shape.batchnorm_batch_one", ["ASPP.py:60", "256 channels"]),
    ("r33_a.yaml#68", "shape.index_out_of_bounds", ["tal.py:113", "get_box_metrics"]),
    ("r33_b.yaml#25", "shape.dim_out_of_range", ["packing.py:31", "model.py:205", "pack_padded_sequence"]),
    ("r33_b.yaml#46", "data.state_dict_keys", ["CrfTagger", "model.py:332", "model.load_state_dict(model_state)"]),
    ("r33_b.yaml#57", "other.module_not_installed",
     ["_ZN2at19NonVariableTypeMode10is_enabledEv", "_warp_ctc.cpython-37m-x86_64-linux-gnu.so"]),
    ("r33_c.yaml#25", "other.name_not_defined", ["FileNotFoundError", "_DataLoaderIter.__del__", "Python 2"]),
    ("r35_b.yaml#33", "data.worker_killed", ["shm", "trainer.py:553", "pytorch_lightning"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_frames(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values, said(diagnosis))


def test_live_inplace_clamp_on_a_long_tensor_names_the_call():
    gj = torch.zeros(3, dtype=torch.long)
    gain = torch.ones(4)
    try:
        gj.clamp_(0, gain[3] - 1)
    except RuntimeError:
        text = traceback.format_exc()
    else:  # pragma: no cover - a torch that casts silently
        pytest.skip("this torch release casts the bound")
    diagnosis = explain_paste(text)
    assert_names(diagnosis, "dtype.result_cast", ["gj.clamp_(0, gain[3] - 1)", "test_round37_w2c.py:"], said(diagnosis))


def test_a_batch_norm_paste_without_frames_keeps_its_old_diagnosis():
    # nv-tlabs/GSCNN#28: the error line under torch's raise, no frame of the user's code
    text = ("raise ValueError('Expected more than 1 value per channel when training, got input size {}'.format(size))\n"
            "ValueError: Expected more than 1 value per channel when training, got input size "
            "torch.Size([1, 256, 1, 1])")
    diagnosis = explain_paste(text)
    assert_names(diagnosis, "shape.batchnorm_batch_one", ["[1, 256, 1, 1]"])
    assert "The BatchNorm is called at" not in " ".join(diagnosis.fixes)
