"""Leftovers of earlier rounds, written while round 52 was open: a DGL abort when its TensorAdapter is loaded twice, torch
1.8.0's `!completed()` Future assert logged by the thread pool, DeepSpeed's FP8-across-ZeRO unit test, an export's
`+dynamic` log that shows a dynamic dimension pinned (with Dynamo's "Untracked tensor" warnings), and a bare
`KeyError: 'mixtral'`. Each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the
right rule with the values it holds named the way the coverage judge reads them; other wordings of the same families
(from the threads cited) are claimed too, and near misses stay unclaimed.

The other entries of this batch are left unclaimed on purpose; the reasons are in the comments at the end."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r25_b.yaml#21", "numerics.deepspeed_fp8_zero_losses_differ", ['test_fp8.py", line 98', "all_equal"]),
    ("r26_a.yaml#12", "distributed.future_completed_twice_assert",
     ["!completed()", '/pytorch/aten/src/ATen/core/ivalue_inl.h":534', "thread_pool.cpp:112"]),
    ("r26_a.yaml#31", "compile.export_constraints", ["Eq(s0, 4)", "torch/_dynamo/guards.py:1853", "VR[1, 1024]"]),
    ("r26_b.yaml#48", "other.dgl_tensor_adapter_loaded_twice", ["tensordispatch.cc:23", "!available_", "libdgl.so"]),
    ("r35_c.yaml#43", "other.transformers_unknown_model_type", ["mixtral"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def _said(diagnosis) -> str:
    return " ".join([diagnosis.summary, *diagnosis.fixes])


def test_the_reasons_the_corpus_messages_hold_are_read():
    # a second load of the TensorAdapter: the program's own dgl.load_backend call (HMGNN's DataLoader.py)
    diagnosis = explain_paste(corpus_message("r26_b.yaml#48"))
    assert_names(diagnosis, "other.dgl_tensor_adapter_loaded_twice",
                 ["terminate called", "dgl.load_backend('pytorch')", "DGLBACKEND=pytorch"], _said(diagnosis))
    # the assert that hides a failing then() callback in torch 1.8.0, raised from setErrorInternal
    diagnosis = explain_paste(corpus_message("r26_a.yaml#12"))
    assert_names(diagnosis, "distributed.future_completed_twice_assert",
                 ["`setErrorInternal`", "1.8.0", "pytorch#53717", "1.8.1 or later"], _said(diagnosis))
    # the dimension declared dynamic over VR[1, 1024], pinned to 4 by `x + y` at the user's line
    diagnosis = explain_paste(corpus_message("r26_a.yaml#31"))
    assert_names(diagnosis, "compile.export_constraints",
                 ["L['x'].size()[0]", "`return x + y`", "hh.py:11 in forward", "DynamicCache", "register_pytree_node"],
                 _said(diagnosis))
    # the losses of ZeRO stages 0-3 compared with allclose in a worker of DeepSpeed's test harness
    diagnosis = explain_paste(corpus_message("r25_b.yaml#21"))
    assert_names(diagnosis, "numerics.deepspeed_fp8_zero_losses_differ",
                 ["TestFp8ComposabilityAcrossZero", "ZeRO stages 0, 1, 2 and 3", "RemoteTraceback"], _said(diagnosis))
    # a bare KeyError of an architecture transformers added in 4.36
    diagnosis = explain_paste(corpus_message("r35_c.yaml#43"))
    assert_names(diagnosis, "other.transformers_unknown_model_type", ["4.36", "Only the KeyError was pasted"],
                 _said(diagnosis))


@pytest.mark.parametrize("text, rule, values", [
    # the same KeyError under vLLM, in an IPython traceback (vllm-project/vllm#2018)
    ("File ~/anaconda3/envs/vllm/lib/python3.9/site-packages/transformers/models/auto/configuration_auto.py:792, in "
     "_LazyConfigMapping.__getitem__(self, key)\n    790     return self._extra_content[key]\n"
     "    791 if key not in self._mapping:\n--> 792     raise KeyError(key)\n    793 value = self._mapping[key]\n"
     "    794 module_name = model_type_to_module_name(key)\n\nKeyError: 'mixtral'",
     "other.transformers_unknown_model_type", ["mixtral", "4.36"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, _said(diagnosis))


@pytest.mark.parametrize("text, not_rule", [
    # the TensorAdapter not found at `import dgl` (HannesStark/EquiBind#12): a warning, other.dgl_tensoradapter_missing's
    ("/opt/dgl/src/runtime/tensordispatch.cc:43: TensorDispatcher: dlopen failed: libtorch_cuda.so: cannot open shared "
     "object file: No such file or directory", "other.dgl_tensor_adapter_loaded_twice"),
    # another DGL CHECK that aborts the same way, in its shared memory (dmlc/dgl#3908)
    ("terminate called after throwing an instance of 'dmlc::Error'\n  what():  [14:09:39] "
     "/opt/dgl/src/runtime/shared_mem.cc:58: Check failed: munmap(ptr_, size_) != -1: Invalid argument",
     "other.dgl_tensor_adapter_loaded_twice"),
    # another exception a thread-pool task logged: ProcessGroupNCCL's own check on its future (pytorch/pytorch#41596)
    ("[E thread_pool.cpp:112] Exception in thread pool task: Future work of workNCCL can only be marked as completed by "
     "ncclKernelCompletionCallback", "distributed.future_completed_twice_assert"),
    # the produce_guards lines of dimensions nobody declared dynamic (pytorch/pytorch#142161): no constraint, no pin
    ("V1217 11:58:45.109000 63088 torch/fx/experimental/symbolic_shapes.py:4759] [2/0] track_symint L['x'].size()[1] 8 "
     "None\nV1217 11:58:45.110000 63088 torch/fx/experimental/symbolic_shapes.py:4759] [2/0] track_symint "
     "L['x'].size()[2] 7 None", "compile.export_constraints"),
    # a bare KeyError of 'llama', which other registries raise too (OptimalScale/LMFlow#105)
    ("KeyError: 'llama'", "other.transformers_unknown_model_type"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)



@pytest.mark.parametrize("where, values", [
    ("r52_a.yaml#56", ["(expected 5, got 2)", "rendered_depth, rendered_median_depth, rendered_alpha, radii"]),
    ("r10_a.yaml#42", ["(expected 3, got 2)", "rendered_image, radii, depth_image"]),
])
def test_a_renderer_unpacking_another_rasterizer_builds_results_is_named(where, values):
    # the diff-gaussian-rasterization build installed is another project's (the thread: install this repo's submodule)
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, "other.gaussian_rasterizer_return_count", values)
    assert any("git submodule update --init --recursive" in fix for fix in diagnosis.fixes)


@pytest.mark.parametrize("text, values", [
    # https://github.com/graphdeco-inria/gaussian-splatting/issues/473: the stock renderer, a rasterizer build with depth
    ('  File "/Desktop/CodeFolder/gaussian-splatting/gaussian_renderer/__init__.py", line 85, in render\n'
     "    rendered_image, radii = rasterizer(\nValueError: too many values to unpack (expected 2)",
     ["into 2 names (rendered_image, radii)", "returned more"]),
    # https://github.com/aigc3d/LHM/issues/46
    ('  File "/ome/rock/project/LHM/LHM/models/rendering/gs_renderer.py", line 888, in forward_single_view\n'
     "    rendered_image, radii, rendered_depth, rendered_alpha = rasterizer(\n"
     "ValueError: not enough values to unpack (expected 4, got 2)", ["gs_renderer.py:888", "(expected 4, got 2)"]),
])
def test_other_rasterizer_unpacks_are_named(text, values):
    assert_names(explain_paste(text), "other.gaussian_rasterizer_return_count", values)


def test_an_unpack_of_another_call_is_not_the_rasterizers():
    # https://github.com/vadi95/Signature-Verification/issues/6: a function of the program's own
    assert_left_alone("---> 27         aspect_ratio, bounding_rect_area, convex_hull_area, contours_area =             "
                      "get_contour_features(preprocessed_image.copy(), display=False)\n           28 \n"
                      "ValueError: not enough values to unpack (expected 3, got 2)", "other.gaussian_rasterizer_return_count")

# Left unclaimed, and why (r52_a#56 and r10_a#42, a renderer unpacking another rasterizer build's results, were
# explained by the lead's other.gaussian_rasterizer_return_count; r27_b#70, ONNX Runtime's own CUDNN failure, became a
# control, as r41_b#23 and seven others have it):
# - pytest's summary lines that name a test and a bare exception type (r25_b#13 `IndexError: list index out of range` in
#   finetuning-scheduler, r25_b#25 ludwig's audio tests `- RuntimeError`, r25_b#32 neural_prophet's lines cut to
#   `AttributeError: m...`): the error itself is cut or generic, and any project's test run prints the same form.
# - r25_b#33 (jsonargparse asserting that torch's LR schedulers have annotations) and r25_b#37 (torch-xpu-ops'
#   test_segfault "Unexpected success"): a project's own test expectations, no PyTorch failure in the text to explain.
# - r26_a#20: ninja's `FAILED: correlate.cuda.o` with its nvcc command, cut before nvcc's error: the build failed, but
#   nothing says why (the same form as the cut tracebacks test_leftovers_r51.py leaves alone).
# - r27_b#30 (bare .NET SEHException) and r27_b#76 (FineVQ's own "Input contains NaN values!" print): left alone by
#   earlier writers (test_round27_other.py, test_round27_straggle.py) for reasons that still hold.
# - r38_c#11 (a bare GitHub 403 rate limit) and r47_c#77 (a bare certificate failure): test_round38_w2o.py leaves such
#   lines without a torch.hub frame alone; any Python program that downloads prints them.
# - r37_c#83 (`ImportError: DLL load failed: The specified module could not be found.` alone) and r47_c#54 (WinError 32
#   alone): controls print the same lines (r49_b#15 rasterio's DLL; r21_b#60, r47_c#52 a file in use).
# - bare Python errors with nothing of torch in them: r31_a#20 (bytes-like object, not BufferedReader), r35_a#23
#   (negative value to unsigned int), r35_a#25 (KeyError 'edge_attr'), r36_a#25 (int() of NoneType), r39_a#74 (too many
#   values to unpack, also a control's line in r51_a#15), r39_c#30 (len() of unsized object), r49_c#8 (max() of an empty
#   sequence, which r24_a#86 explains only with DeepSpeed's frame).
# - r38_b#36: a knowledge-distillation log whose hint loss is 4.9e13 (finite): a divergence with no rule for finite
#   losses, and the thread (lehduong/Knowledge-Distillation-by-Replacing-Cheap-Conv#7) could not be read to say why.
