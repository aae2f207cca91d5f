"""Round-26 rules for autograd, numerics, dtype and shape: an FFT given float16/bfloat16 (torch's "Unsupported dtype
Half" and the backends' "hipFFT / MKL FFT doesn't support ... of type"), strides that overflow int64 even for an empty
tensor, Tenstorrent's PCC accuracy checks, assert_close's scalar report without its header, an in-place modification
whose "is" a paste broke in two, and torch 0.4's conv channel wording named with its weight[...] and input[...].
Each corpus message (verbatim from the opened rounds) is claimed by the right rule with its values named; the
fixtures are explained live; near misses stay out."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_fixture, explain_paste, rules_of

CORPUS_CASES = [
    ("r26_a.yaml#72", "dtype.fft_unsupported_dtype", ["Half", "torch.fft.rfft2(a, norm='backward')"]),
    ("r26_a.yaml#57", "shape.stride_overflow", ["5294285560538976914", "torch.float32"]),
    ("r25_b.yaml#44", "numerics.pcc_comparison", ["pcc=nan", "test_eltwise_unary_eager[acos]", "pcc=0.99", "acos"]),
    ("r25_b.yaml#27", "numerics.assert_close_mismatch", ["expected nan but got 1.2157570123672485", "1e-05"]),
    ("r26_b.yaml#1", "autograd.inplace_modified", ["[torch.cuda.FloatTensor [128, 4, 2304]]", "AddBackward0", "version 2"]),
    ("r26_b.yaml#9", "shape.conv_channels", ["weight[512, 2048, 1, 1]", "input[16, 64, 75, 75]", "2048", "64"]),
]

CITED_CASES = [
    # diffusers' FreeU filter with a bfloat16 pipeline (huggingface/diffusers#10125)
    ("  File \"/opt/conda/lib/python3.10/site-packages/diffusers/utils/torch_utils.py\", line 107, in fourier_filter\n"
     "    x_freq = fftn(x, dim=(-2, -1))\nRuntimeError: Unsupported dtype BFloat16",
     "dtype.fft_unsupported_dtype", ["BFloat16", "fftn(x, dim=(-2, -1))"]),
    # ROCm's backend check under torch.stft (wenet-e2e/wetts#217)
    ("    return _VF.stft(input, n_fft, hop_length, win_length, window,  # type: ignore[attr-defined]\n"
     "RuntimeError: hipFFT doesn't support transforms of type: Half",
     "dtype.fft_unsupported_dtype", ["hipFFT", "Half"]),
    # tt-xla's model test, a PCC far below the threshold (tenstorrent/tt-xla#2346)
    ("AssertionError: Comparison result 0 failed: PCC comparison failed. Calculated: pcc=0.6801895499229431. "
     "Required: pcc=0.99.", "numerics.pcc_comparison", ["pcc=0.6801895499229431", "result 0", "far below"]),
    # a training check naming the tensor (tenstorrent/tt-xla#5024)
    ("[base_model.model.model.layers.0.self_attn.q_proj.lora_B.default.weight] PCC comparison failed. "
     "Calculated: pcc=0.9824324089075691. Required: pcc=0.99.",
     "numerics.pcc_comparison", ["base_model.model.model.layers.0.self_attn.q_proj.lora_B.default.weight",
                                 "pcc=0.9824324089075691", "just below"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("message, rule, values", CITED_CASES, ids=[c[1] + str(i) for i, c in enumerate(CITED_CASES)])
def test_cited_wording_is_explained(message, rule, values):
    assert_names(explain_paste(message), rule, values)


def test_live_fft_of_float16_names_the_call_and_the_dtype():
    assert_names(explain_fixture("fixtures/dtype/fft_half_unsupported.py"), "dtype.fft_unsupported_dtype",
                 ["Half", "torch.fft.rfft2(a, norm='backward')", "never on the CPU"])


def test_live_stride_overflow_names_the_sizes():
    assert_names(explain_fixture("fixtures/shape/stride_overflow.py"), "shape.stride_overflow",
                 ["[0, 16, 5294285560538976914]", "torch.float32"])


@pytest.mark.parametrize("message, rule", [
    # the storage's byte count, not the strides (huggingface/accelerate#2868): numerics.size_overflow
    ("RuntimeError: Storage size calculation overflowed with sizes=[1, 4623015400198258675]", "shape.stride_overflow"),
    # the passing line of the same comparison (tenstorrent/tt-xla#2214)
    ("PCC comparison: 0.9994425773620605 >= 0.97", "numerics.pcc_comparison"),
    # cuFFT's compute-capability check (vladmandic/sdnext#2499): device.cufft_half_capability
    ("Exception: cuFFT doesn't support signals of half type with compute capability less than SM_53, but the device "
     "containing input half tensor only has SM_52", "dtype.fft_unsupported_dtype"),
])
def test_near_misses_stay_out(message, rule):
    assert_left_alone(message, rule)


# --- scikit-learn's check of a metric's input: the model's outputs went non-finite (numerics, README reading) ------

def test_sklearns_nonfinite_input_names_the_metric_and_the_diverged_loss():
    # https://github.com/xiwenc1/TimeMIL/issues/8: the loss line glued to the traceback ("bag loss: nanTraceback")
    # (the thread's code block from its traceback on, verbatim)
    text = (" Testing bag [195/196] bag loss: nanTraceback (most recent call last):\n"
            '  File "/home/USER/repos/TimeMIL/./main.py", line 516, in <module>\n    main()\n'
            '  File "/home/USER/repos/TimeMIL/./main.py", line 422, in main\n'
            "    test_loss_bag, results = test(testloader, milnet, criterion, args)\n"
            "                             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
            '  File "/home/USER/repos/TimeMIL/./main.py", line 177, in test\n    roc_auc_ovo_marco = roc_auc_score(\n'
            "                        ^^^^^^^^^^^^^^\n"
            '  File "/home/USER/anaconda3/envs/pytorch2.6/lib/python3.11/site-packages/sklearn/metrics/_ranking.py", '
            "line 551, in roc_auc_score\n    y_score = check_array(y_score, ensure_2d=False)\n"
            "              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
            '  File "/home/USER/anaconda3/envs/pytorch2.6/lib/python3.11/site-packages/sklearn/utils/validation.py", '
            "line 921, in check_array\n    _assert_all_finite(\n"
            '  File "/home/USER/anaconda3/envs/pytorch2.6/lib/python3.11/site-packages/sklearn/utils/validation.py", '
            "line 161, in _assert_all_finite\n    raise ValueError(msg_err)\nValueError: Input contains NaN.")
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "numerics.sklearn_nonfinite_input"
    assert "`roc_auc_score` (sklearn/metrics/_ranking.py)" in diagnosis.summary
    assert "`Testing bag [195/196] bag loss: nan`" in diagnosis.summary
    # the older wording, quoted alone (r26_b#58): the dtype it names
    old = explain_paste("ValueError: Input contains NaN, infinity or a value too large for dtype('float64').")
    assert old.rule == "numerics.sklearn_nonfinite_input"
    assert "contains NaN, infinity or a value too large for dtype('float64')" in old.summary
    # NumPy's own NaN-to-integer conversion is another error
    assert "numerics.sklearn_nonfinite_input" not in rules_of("ValueError: cannot convert float NaN to integer")
