"""Round-16 wordings for autograd, numerics, dtype and shape: each corpus message (verbatim from the opened rounds)
or pasted message (verbatim from the thread it cites) is claimed, from its text alone, by the right rule with the
values it holds named; near misses stay unclaimed; the wordings torch 2.13 still raises (float CTC lengths, the
removed `volatile`, a flex_attention block mask of another length, a float16 scale for torch._scaled_mm) are
explained live."""

from __future__ import annotations

import io
import warnings

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised

CORPUS_CASES = [
    # autograd
    ("r16_a.yaml#12", "autograd.volatile_removed", ["volatile was removed", "(Variable.volatile is always False)"]),
    ("r16_a.yaml#57", "autograd.inplace_modified", ["modified by an inplace operation"]),
    ("r16_a.yaml#73", "autograd.non_scalar_backward", ["implicitly created only for scalar outputs"]),
    # dtype
    ("r16_a.yaml#5", "dtype.ctc_lengths_dtype", ["target_lengths must be integral"]),
    ("r16_b.yaml#5", "dtype.scaled_mm_scale", ["refused scale_a", "one-element torch.float32 tensor"]),
    # shape
    ("r16_a.yaml#4", "shape.ctc_lengths",
     ["ctc_loss_gpu", "at least 6 at dimension 1", "got size 64", "do not conflict"]),
    ("r16_a.yaml#41", "shape.scalar_conversion", ["Python scalars"]),
    ("r16_a.yaml#44", "shape.conv_channels", ["[64, 1, 5, 5]", "groups=64", "[1, 1, 84, 128]", "has 1 channels"]),
    ("r16_a.yaml#62", "shape.conv_input_rank",
     ["[64, 3, 7, 7, 7]", "5-dimensional input", "a 4-dimensional one of size [25, 48, 224, 224]"]),
    ("r16_a.yaml#63", "shape.conv_input_rank", ["4-dimensional input", "a 3-dimensional one of size [128, 32, 32]"]),
    ("r16_b.yaml#24", "shape.audio_save_rank", ["got 1D", "wav.unsqueeze(0)"]),
    ("r16_b.yaml#63", "shape.flex_block_mask_length",
     ["block_mask.shape=(1, 1, 20096, 40192)", "Q_LEN=20096 and KV_LEN=40192", "q_len=20000 and kv_len=40000",
      "larger than the sequences"]),
    ("r16_b.yaml#64", "shape.flex_block_mask_length", ["q_len=80000 and kv_len=20", "KV_LEN=512"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values)


PASTED_CASES = [
    ("InferSent/models.py:222: UserWarning: volatile was removed and now has no effect. Use `with torch.no_grad():` "
     "instead.\n  sentences[stidx:stidx + bsize]), volatile=True)",  # facebookresearch/InferSent#87
     "autograd.volatile_removed", ["set `volatile=True`", "`with torch.no_grad():`"]),
    ("`RuntimeError:: input_lengths must be integral`",  # pytorch/pytorch#92606
     "dtype.ctc_lengths_dtype", ["input_lengths must be integral"]),
    ("RuntimeError: Expected tensor to have size at least 12 at dimension 1, but got size 8for argument #2 'targets' "
     "(while checking arguments for ctc_loss_gpu)",  # Holmeyoung/crnn-pytorch#62
     "shape.ctc_lengths", ["asks for 12 labels", "holds only size 8", "ctc_loss_gpu"]),
    ("RuntimeError: Expected tensor to have size at least 209 at dimension 1, but got size 201 for argument #2 "
     "'targets' (while checking arguments for ctc_loss_gpu)",  # sh-lee-prml/HierSpeechpp#57
     "shape.ctc_lengths", ["asks for 209 labels", "holds only size 201"]),
    ("> ValueError: block_mask was created for block_mask.shape=(4, 1, 1500, 1500) but got q_len=500 and "
     "kv_len=1500. As the block mask was created for a larger length than you're using it for",
     "shape.flex_block_mask_length",  # meta-pytorch/attention-gym#122
     ["Q_LEN=1500 and KV_LEN=1500", "q_len=500 and kv_len=1500", "block_mask._adjust(500, 1500)"]),
]


@pytest.mark.parametrize("text, rule, values", PASTED_CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(PASTED_CASES)])
def test_pasted_message_is_explained_with_its_values(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, text=" ".join([diagnosis.summary, *diagnosis.fixes]))


def _scaled_mm_with_row_scale():
    """Right dtypes, a scale of a shape no recipe takes: torch 2.13's same message, a shape problem."""
    import torch

    a = torch.randn(16, 32).to(torch.float8_e4m3fn)
    b = torch.randn(16, 32).to(torch.float8_e4m3fn)
    torch._scaled_mm(a, b.t(), scale_a=torch.ones(16), scale_b=torch.tensor(1.0), out_dtype=torch.float32)


@pytest.mark.parametrize("text, rules", [
    # the lengths' sizes, not their dtype
    ("RuntimeError: input_lengths must be of size batch_size", {"dtype.ctc_lengths_dtype"}),  # espnet/espnet#3543
    # right dtypes, scales of the wrong number of elements (mxfp4 blocks)
    ("RuntimeError: Invalid blockwise scaling configuration. For blockwise scaling, scale_a should have 512 "
     "elements, got 1024, scale_b should have 512 elements, got 1024.", {"dtype.scaled_mm_scale"}),  # pytorch#172627
    # torch 0.3's error after a volatile forward pass is no_grad_fn's, not the removal warning's
    ('> "RuntimeError: there are no graph nodes that require computing gradients"',  # caogang/wgan-gp#4
     {"autograd.volatile_removed"}),
    # a Python unpacking error inside flex_attention is not the block mask's length check
    ('ValueError: too many values to unpack (expected 4)\n  File ".../torch/nn/attention/flex_attention.py", line '
     "1330, in _convert_mask_to_block_mask\n    B, H, Q, KV = mask.shape",  # huggingface/transformers#46802
     {"shape.flex_block_mask_length"}),
])
def test_near_misses_are_not_claimed_by_the_round16_rules(text, rules):
    claimed = [d.rule for d in explain_stream(io.StringIO(text)) if d.rule in rules]
    assert not claimed, (text, claimed)


def test_scales_of_the_right_dtype_but_the_wrong_shape_are_not_a_dtype_problem():
    exc = raised(_scaled_mm_with_row_scale)
    assert "scale_a.dtype()=Float," in str(exc), str(exc)
    claimed = [d.rule for d in explain_stream(io.StringIO(f"{type(exc).__name__}: {exc}"))]
    assert "dtype.scaled_mm_scale" not in claimed, claimed


def test_float_ctc_target_lengths_are_named_live():
    diagnosis = explain_fixture("fixtures/dtype/ctc_float_lengths.py")
    assert_names(diagnosis, "dtype.ctc_lengths_dtype", ["target_lengths of shape (4,)", "must be integral"])
    assert any("target_lengths = target_lengths.long()" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_float_ctc_input_lengths_are_named_live():
    import torch
    import torch.nn.functional as F

    import explainer

    log_probs = torch.randn(30, 2, 6).log_softmax(2)
    targets = torch.randint(1, 6, (2, 5))
    frames = torch.full((2,), 30.0)
    diagnosis = explainer.explain(raised(lambda: F.ctc_loss(log_probs, targets, frames, torch.tensor([5, 4]))))
    assert_names(diagnosis, "dtype.ctc_lengths_dtype", ["frames (input_lengths) of shape (2,)"])


def test_a_volatile_variable_is_named_live():
    diagnosis = explain_fixture("fixtures/autograd/volatile_removed.py")
    assert_names(diagnosis, "autograd.volatile_removed", ["`Variable(x, volatile=True)`", "no effect"])
    assert diagnosis.location is not None and "volatile=True" in diagnosis.location.code, diagnosis.location


def test_reading_volatile_is_named_live():
    import torch

    import explainer

    def read_volatile():
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            return torch.ones(2).volatile

    diagnosis = explainer.explain(raised(read_volatile))
    assert_names(diagnosis, "autograd.volatile_removed", ["reads `.volatile`", "Variable.volatile is always False"])


def test_a_block_mask_built_for_longer_sequences_is_named_live():
    diagnosis = explain_fixture("fixtures/shape/flex_block_mask_length.py")
    assert_names(diagnosis, "shape.flex_block_mask_length",
                 ["Q_LEN=256 and KV_LEN=256", "q_len=128 and kv_len=128", "larger than the sequences"])


def test_a_block_mask_built_for_shorter_sequences_is_named_live():
    import torch
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    import explainer

    block_mask = create_block_mask(lambda b, h, q, kv: q >= kv, B=1, H=1, Q_LEN=128, KV_LEN=128, device="cpu")
    query = torch.randn(1, 1, 256, 16)
    diagnosis = explainer.explain(raised(lambda: flex_attention(query, query, query, block_mask=block_mask)))
    assert "smaller length" in str(diagnosis.error), diagnosis.error
    assert_names(diagnosis, "shape.flex_block_mask_length",
                 ["Q_LEN=128 and KV_LEN=128", "q_len=256 and kv_len=256", "smaller than the sequences"])
    assert not any("_adjust" in fix for fix in diagnosis.fixes), diagnosis.fixes


def test_a_float16_scale_for_scaled_mm_is_named_live():
    diagnosis = explain_fixture("fixtures/dtype/scaled_mm_scale_dtype.py")
    assert_names(diagnosis, "dtype.scaled_mm_scale", ["scale_a Half", "scale_a is Half;", "scale_b Float"])
