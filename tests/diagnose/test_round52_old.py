"""Round-52 wordings of torch 1.x deprecations and legacy idioms (integer division with `/` in torch 1.5, uint8 masks
in indexing and masked_scatter_, `-` and `~` on masks in an older wording, `x.data.resize_` refused by torch 1.1-1.12),
spconv's warning for a GPU architecture its wheel was not built for, ProtTrans's embedder that hid a CPU failure behind
a ZeroDivisionError, and a device mismatch pasted from JupyterLab with its file links' brackets kept: each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named the way the coverage judge reads them; other wordings of the same families (from the threads cited) are claimed
too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest
import torch

from conftest import (assert_explained, assert_left_alone, assert_names, corpus_message, explain_fixture, explain_paste,
                      raised)


CORPUS_CASES = [
    ("r52_b.yaml#35", "dtype.integer_division", ["BinaryOps.cpp:81"]),
    ("r52_b.yaml#36", "dtype.integer_division", ["BinaryOps.cpp:81"]),
    ("r52_b.yaml#38", "dtype.bool_arithmetic", ["bitwise_not()"]),
    ("r52_b.yaml#39", "dtype.bool_arithmetic", ["operator.invert", '__init__.py", line 183']),
    ("r52_b.yaml#40", "autograd.metadata_change_on_data", ["set_sizes_contiguous", ".data"]),
    ("r52_b.yaml#41", "autograd.metadata_change_on_data", ["set_sizes_contiguous", 'dataset.py", line 144']),
    ("r52_b.yaml#42", "autograd.metadata_change_on_data", ["set_sizes_contiguous", 'test_net.py", line 276']),
    ("r52_b.yaml#43", "dtype.uint8_index_deprecated", ["torch.uint8", "torch.bool", "IndexingUtils.h:20"]),
    ("r52_b.yaml#44", "dtype.uint8_index_deprecated", ["torch.uint8", "torch.bool"]),
    ("r52_b.yaml#45", "dtype.uint8_index_deprecated", ["torch.uint8", "torch.bool", "expandTensors"]),
    ("r52_b.yaml#58", "dtype.mask_not_bool", ["masked_scatter_", "torch.uint8", "torch.bool"]),
    ("r52_a.yaml#34", "device.spconv_arch_not_prebuilt", ["implicit_gemm", "(8, 9)"]),
    ("r52_c.yaml#37", "device.mismatch", ["cuda:0", "cuda:7", "step_functions.py:380"]),
    ("r52_c.yaml#83", "device.prottrans_embedding_cpu", ['prott5_embedder.py", line 140', "cpu"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # torch 1.5 warned, 1.6 refused, 1.7 divides truly (pytorch/pytorch#34570)
    assert_names(explain_paste(corpus_message("r52_b.yaml#35")), "dtype.integer_division",
                 ["deprecation warning of torch 1.5", "torch 1.6 refuses", "true_divide", "floor_divide"])
    # the code line of the paste names the tensor that was resized through .data
    assert_names(explain_paste(corpus_message("r52_b.yaml#41")), "autograd.metadata_change_on_data",
                 ["`v.data.resize_(...)`", "torch 1.1", "1.13 allows it again"])
    # spconv's list is that of a CUDA 11.1-11.7 wheel; sm_89 needs CUDA 11.8 to be compiled at run time
    assert_names(explain_paste(corpus_message("r52_a.yaml#34")), "device.spconv_arch_not_prebuilt",
                 ["features torch.Size([290557, 96])", "needs CUDA 11.8 or later", "CUDA 11.1 to 11.7"])
    # the ZeroDivisionError is the end of it: a half-precision model on the CPU, the RuntimeError hidden
    assert_names(explain_paste(corpus_message("r52_c.yaml#83")), "device.prottrans_embedding_cpu",
                 ["id1 (L=1)", "Rostlab/prot_t5_xl_half_uniref50-enc", "half precision", "Total number of embeddings: 0"])
    # the older wording names bitwise_not() as the way out
    assert_names(explain_paste(corpus_message("r52_b.yaml#38")), "dtype.bool_arithmetic",
                 ["the `bitwise_not()` the message names"])


def test_a_frame_whose_markdown_link_lost_its_address_is_read():
    # JupyterLab's "File [path:380](url), in f" pasted with its brackets only (inseq-team/inseq#230)
    diagnosis = explain_paste(corpus_message("r52_c.yaml#37"))
    assert diagnosis.location is not None
    assert diagnosis.location.file.endswith("inseq/attr/step_functions.py"), diagnosis.location
    assert (diagnosis.location.line, diagnosis.location.function) == (380, "contrast_prob_diff_fn")


def test_the_uint8_index_fixture_is_claimed():
    diagnosis = explain_fixture("fixtures/dtype/uint8_index_deprecated.py")
    assert diagnosis.rule == "dtype.uint8_index_deprecated", diagnosis.rule


@pytest.mark.parametrize("text, rule, values", [
    # glog's prefix and the C++ function (nicola-decao/BNAF#4)
    ("[W IndexingUtils.h:20] Warning: indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
     "instead. (function expandTensors)", "dtype.uint8_index_deprecated", ["IndexingUtils.h:20", "expandTensors"]),
    # the warning wrapped by the text box (pytorch/pytorch#29365)
    ("/home/mahmood/pytorch/aten/src/ATen/native/IndexingUtils.h:20: \nUserWarning: indexing with dtype torch.uint8 is "
     "now deprecated, please \nuse a dtype torch.bool instead.\n  \" please use a dtype torch.bool instead.\");",
     "dtype.uint8_index_deprecated", ["torch.uint8", "torch.bool"]),
    # a later release's "Triggered internally at" place, with the user's line under it (zzzxxxttt/pytorch_simple_CornerNet#10)
    ("C:\\Users\\panpa\\ai\\pytorch_simple_CornerNet\\utils\\losses.py:45: UserWarning: indexing with dtype torch.uint8 is "
     "now deprecated, please use a dtype torch.bool instead. (Triggered internally at  C:\\cb\\pytorch_1000000000000\\work"
     "\\aten\\src\\ATen/native/IndexingUtils.h:28.)\n  embd0 = embd0[mask].sum()",
     "dtype.uint8_index_deprecated", ["torch.uint8"]),
    # torch 1.1's wording of the metadata refusal, in faster-rcnn's demo (jwyang/faster-rcnn.pytorch#543)
    ("Traceback (most recent call last):\n  File \"demo.py\", line 281, in <module>\n    im_data.data.resize_(im_data_pt"
     ".size()).copy_(im_data_pt)\nRuntimeError: set_sizes_contiguous is not allowed on Tensor created from .data or "
     ".detach()", "autograd.metadata_change_on_data", ["`im_data.data.resize_(...)`"]),
    # the setter of sizes and strides (rystylee/pytorch-cppn-gan#12)
    ("RuntimeError: set_sizes_and_strides is not allowed on a Tensor created from .data or .detach().\nIf your intent is "
     "to change the metadata of a Tensor (such as sizes / strides / storage / storage_offset)\nwithout autograd tracking "
     "the change, remove the .data / .detach() call and wrap the change in a `with torch.no_grad():` block.\nFor "
     "example, change:\n    x.data.set_(y)\nto:\n    with torch.no_grad():", "autograd.metadata_change_on_data",
     ["`set_sizes_and_strides`"]),
    # spconv's warning alone, on an RTX 4090 (robot-learning-freiburg/PADLoC#2)
    ("[WARNING]your gpu arch (8, 9) isn't compiled in prebuilt, may cause invalid device function. available: {(7, 0), "
     "(6, 1), (8, 0), (6, 0), (7, 5), (8, 6), (5, 2)}", "device.spconv_arch_not_prebuilt",
     ["(8, 9)", "sm_89 needs CUDA 11.8"]),
    # a wheel built without (8, 6) (traveller59/spconv#724)
    ("[WARNING]your gpu arch (8, 6) isn't compiled in prebuilt, may cause invalid device function. available: {(6, 1), "
     "(3, 7), (7, 0), (5, 0), (6, 0), (7, 5), (5, 2)}", "device.spconv_arch_not_prebuilt", ["(8, 6)", "(3, 7)"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # torch 1.8-1.13's warning on `//` rounding toward zero: floor division chosen (pytorch/pytorch#89875)
    ("__main__:1: UserWarning: __floordiv__ is deprecated, and its behavior will change in a future version of pytorch. "
     "It currently rounds toward 0 (like the 'trunc' function NOT 'floor'). This results in incorrect rounding for "
     "negative values. To keep the current behavior, use torch.div(a, b, rounding_mode='trunc'), or for actual floor "
     "division, use torch.div(a, b, rounding_mode='floor').", "dtype.integer_division"),
    # the uint8 deprecation of an 'out' tensor, no index or mask (Duankaiwen/CPNDet#10)
    ("/opt/conda/conda-bld/pytorch_1565272279342/work/aten/src/ATen/native/cuda/LegacyDefinitions.cpp:114: UserWarning: "
     "torch.gt received 'out' parameter with dtype torch.uint8, this behavior is now deprecated,please use 'out' "
     "parameter with dtype torch.bool instead.", "dtype.uint8_index_deprecated"),
    # masked_fill_'s deprecation stays dtype.mask_not_bool's (kimiyoung/transformer-xl#115)
    ("/pytorch/aten/src/ATen/native/cuda/LegacyDefinitions.cpp:19: UserWarning: masked_fill_ received a mask with dtype "
     "torch.uint8, this behavior is now deprecated,please use a mask with dtype torch.bool instead.",
     "dtype.uint8_index_deprecated"),
    # cumm's CUDA check with no architecture warning (traveller59/spconv#482): device.extension_cuda_error_code's
    ("- [Exception|implicit_gemm]feat=torch.Size([16000, 4]),w=torch.Size([16, 3, 3, 3, 4]),pair=torch.Size([27, 16000]),"
     "act=16000,issubm=True,istrain=True\n\n- RuntimeError: /io/build/temp.linux-x86_64-3.9/spconv/build/src/cumm/gemm/"
     "main/GemmMainUnitTest/GemmMainUnitTest_stream_synchronize.cc(11)", "device.spconv_arch_not_prebuilt"),
    # a bare ZeroDivisionError, no embedding script (khuangaf/CONCRETE#4)
    ("ZeroDivisionError: float division by zero", "device.prottrans_embedding_cpu"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_a_resize_of_a_tensor_that_requires_grad_is_not_a_metadata_change():
    # resize_ with no .data on a tensor that requires grad: refused even under no_grad, by another check
    def resize():
        with torch.no_grad():
            torch.zeros(3, requires_grad=True).resize_(5)
    exc = raised(resize)
    assert_left_alone(f"RuntimeError: {exc}", "autograd.metadata_change_on_data")
    assert explain_paste(f"RuntimeError: {exc}").rule == "autograd.leaf_inplace"
