"""Round-30 wordings for other, data and compile (application code of 2024-2026: torch.load's weights-only mode, the
device-generic AMP API, SDPA kernels, uv resolution, GluonTS and LeRobot datasets, MONAI readers, Dynamo's builtins
and dynamic-shape guards): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by
the right rule with the values it holds named; other wordings of the same families (from the threads cited) are
claimed too, and near misses stay unclaimed. Live fixtures raise the errors this CPU torch can."""

from __future__ import annotations

import traceback

import pytest
import torch

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste, raised


CORPUS_CASES = [
    ("r30_a.yaml#12", "data.weights_only_pickle_module", ["pickle_module", "weights_only=True"]),
    ("r30_b.yaml#6", "other.tuple_output_not_tensor", ["`@`", "tuple", "Tensor"]),
    ("r30_b.yaml#17", "other.torch_op_not_registered", ["fbgemm::jagged_2d_to_dense", "libcudart.so.12"]),
    ("r30_b.yaml#18", "data.dataset_example_key_missing", ["observation.images.rgb.left_wrist", "meta/stats.json"]),
    ("r30_b.yaml#34", "data.gluonts_field_ndim", ["`target`", "ndim observed: 2", "expected ndim: 1", "univariate"]),
    ("r30_b.yaml#47", "data.monai_no_suitable_reader", ["301_S_6592.nii.gz", "NumpyReader", "PILReader"]),
    ("r30_c.yaml#1", "compile.shape_env_symbol_without_source", ["`s52`", "L['position_ids']._base.size()[0]", "view"]),
    ("r30_c.yaml#9", "other.amp_device_api_deprecated",
     ["`torch.cuda.amp.autocast(args...)`", "model.py:31", "torch.amp.autocast('cuda', args...)"]),
    ("r30_c.yaml#26", "other.sdpa_flash_not_compiled", ["attention_processor.py:1279", "sdp_utils.cpp:455"]),
    ("r30_c.yaml#27", "other.sdpa_flash_not_compiled", ["sdp_utils.cpp:555"]),
    ("r30_c.yaml#50", "other.uv_no_wheel_for_platform", ["torch==1.12.0+cu113", "cp311", "cp310", "CPython 3.11"]),
    ("r30_c.yaml#57", "other.argument_type", ["tile()", "'dims'", "tuple of ints", "(n,)"]),
    ("r30_c.yaml#73", "compile.graph_break", ["`repr`", "['Config']"]),
    ("r30_c.yaml#74", "compile.graph_break", ["`cmath.isinf`", "functions.py:2607"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # torch 2.4+'s other deprecated AMP entry points (Time-Series-Library#740) and a library's call (PyPOTS#520)
    ("``torch.cuda.amp.GradScaler(args...)`` is deprecated. Please use ``torch.amp.GradScaler(\"cuda\", args...)`` "
     "instead.", "other.amp_device_api_deprecated", ["torch.cuda.amp.GradScaler(args...)", "torch.amp.GradScaler(\"cuda\", args...)"]),
    ("pypots/nn/modules/reformer/local_attention.py:31: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. "
     "Please use `torch.amp.autocast('cuda', args...)` instead", "other.amp_device_api_deprecated",
     ["local_attention.py:31"]),
    # the SDPA warning from ComfyUI (ComfyUI_examples#31), with the calling line
    ("C:\\Program Files\\ComfyUI\\ComfyUI\\comfy\\ldm\\modules\\attention.py:407: UserWarning: 1Torch was not compiled "
     "with flash attention. (Triggered internally at ..\\aten\\src\\ATen\\native\\transformers\\cuda\\sdp_utils.cpp:455.)\n"
     "  out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0, is_causal=False)",
     "other.sdpa_flash_not_compiled", ["attention.py:407", "sdp_utils.cpp:455", "Windows"]),
    # GluonTS's reverse case: a univariate series given to a multivariate model (gluonts#713)
    ('GluonTSDataError: Input for field "target" does not have the requireddimension (field: target, ndim observed: 1, '
     "expected ndim: 2)", "data.gluonts_field_ndim", ["multivariate", "ndim observed: 1", "target_dim"]),
    # torch 2.1-2.5's wording of the skipped builtin keeps its rule (pytorch#133185)
    ("/opt/conda/envs/monodle/lib/python3.11/site-packages/torch/_dynamo/variables/functions.py:663: UserWarning: Graph "
     "break due to unsupported builtin sys.audit. This function is either a Python builtin (e.g. _warnings.warn) or a "
     "third-party C/C++ Python extension (perhaps created with pybind). If it is a Python builtin, please file an issue "
     "on GitHub so the PyTorch team can add support for it and see the next case for a workaround.",
     "compile.graph_break", ["`sys.audit`", "functions.py:663"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


_X = torch.zeros(2, 3)


@pytest.mark.parametrize("call, rule, values", [
    # torch's own argument parser keeps the position (this torch); a float size
    (lambda: torch.tile(_X, 2), "other.argument_type", ["(position 2)", "(n,)"]),
    (lambda: _X.permute(1.0), "other.argument_type", ["`//`"]),
    # a list beside a tensor, and the tensor on the left
    (lambda: [1.0, 2.0] - _X, "other.tuple_output_not_tensor", ["a list and a Tensor", "never stacked"]),
    (lambda: _X @ (1, 2), "other.tuple_output_not_tensor", ["tuple"]),
], ids=["tile", "permute", "list-minus-tensor", "tensor-matmul-tuple"])
def test_live_wordings_pasted(call, rule, values):
    # raised here by the real calls, and pasted as Python prints them
    exc = raised(call)
    assert_names(explain_paste("".join(traceback.format_exception(type(exc), exc, exc.__traceback__))), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # the weights-only unpickler ran and refused an object: weights_only_load's (seamless_communication#159)
    ("UnpicklingError: Weights only load failed. Re-running `torch.load` with `weights_only` set to `False` will likely "
     "succeed, but it can result in arbitrary code execution.Do it only if you get the file from a trusted source. "
     "WeightsUnpickler error: Unsupported class argparse.Namespace", "data.weights_only_pickle_module"),
    # a tuple beside a plain number, a dict beside a tensor: not a model's outputs (InternImage#299, InstantStyle#37)
    ("TypeError: unsupported operand type(s) for -: 'tuple' and 'int'", "other.tuple_output_not_tensor"),
    ("unsupported operand type(s) for *: 'dict' and 'Tensor'", "other.tuple_output_not_tensor"),
    # a KeyError on a results dict that is not a dataset's metadata (tianshou's test result, r30_b.yaml#40)
    (corpus_message("r30_b.yaml#40"), "data.dataset_example_key_missing"),
    # another AMP message (the CPU autocast dtype warning) is not a deprecation
    ("UserWarning: In CPU autocast, but the target dtype is not supported. Disabling autocast.",
     "other.amp_device_api_deprecated"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_live_weights_only_with_a_pickle_module():
    diagnosis = explain_fixture("fixtures/data/weights_only_pickle_module.py")
    assert_names(diagnosis, "data.weights_only_pickle_module", ["pickle_module", "TORCH_FORCE_WEIGHTS_ONLY_LOAD"])


def test_live_deprecated_cuda_autocast_decorator():
    diagnosis = explain_fixture("fixtures/other/amp_cuda_autocast_deprecated.py")
    assert_names(diagnosis, "other.amp_device_api_deprecated",
                 ["`torch.cuda.amp.autocast(args...)`", "torch.amp.autocast('cuda', args...)"])
