"""Device and dtype families: real fixtures raised in this process, explained from their live frames."""

from __future__ import annotations

import pytest
import torch

import explainer
from explainer.diagnose.explain import explain_text
from explainer.rules.base import default_rulebase

from conftest import raise_fixture


def diagnose(fixture: str):
    diagnosis = explainer.explain(raise_fixture(fixture))
    assert not diagnosis.internal_errors, diagnosis.internal_errors
    return diagnosis


def culprit(diagnosis, name: str) -> dict:
    found = [c for c in diagnosis.culprits if c["name"] == name]
    assert found, f"no culprit {name!r} in {[c['name'] for c in diagnosis.culprits]}"
    return found[0]


def odd_ones(diagnosis) -> list[str]:
    return [c["name"] for c in diagnosis.culprits if c.get("odd_one_out")]


# --- device -------------------------------------------------------------------------------------

def test_batch_not_moved_names_batch_and_the_line_to_move_it():
    d = diagnose("fixtures/device/input_not_moved.py")
    assert d.rule == "device.mismatch"
    assert culprit(d, "batch")["device"] == "cpu"
    assert culprit(d, "model.fc.weight")["device"] == "meta"
    assert odd_ones(d) == ["batch"]
    assert d.facts["odd_name"] == "batch" and d.facts["ref_device"] == "meta"
    assert d.summary.startswith("batch is on cpu but model.fc.weight is on meta")
    assert d.fixes[0] == "Move `batch` with `batch = batch.to(device)` before `logits = model(batch)` on line 19."


def test_tensor_created_in_forward_without_device():
    d = diagnose("fixtures/device/tensor_created_in_forward.py")
    assert d.rule == "device.mismatch"
    assert odd_ones(d) == ["mask"]
    assert culprit(d, "mask")["device"] == "cpu"
    assert culprit(d, "model.proj.weight")["device"] == "meta"
    assert "created on line 15 without device=" in d.summary
    assert d.fixes[0] == ("Create `mask` on the right device: add `device=x.device` to "
                          "`mask = torch.ones(x.shape[0], 16)` on line 15.")


def test_plain_tensor_attribute_should_be_a_buffer():
    d = diagnose("fixtures/device/plain_tensor_attribute.py")
    assert d.rule == "device.mismatch"
    scale = culprit(d, "model.head.scale")
    assert scale["device"] == "cpu" and scale["role"] == "attribute" and scale["odd_one_out"]
    assert culprit(d, "model.head.fc.weight")["device"] == "meta"
    assert "plain tensor attribute, not a buffer" in d.summary
    assert 'self.register_buffer("scale", <tensor>)' in d.fixes[0]


def test_layers_in_a_python_list_are_not_moved():
    d = diagnose("fixtures/device/module_list.py")
    assert d.rule == "device.mismatch"
    assert set(odd_ones(d)) == {"model.layers[0].weight", "model.layers[0].bias"}
    assert culprit(d, "model.layers[0].weight")["device"] == "cpu"
    assert d.facts["ref_name"] == "model.head.weight" and d.facts["ref_device"] == "meta"
    assert "model.layers is a plain Python container" in d.summary
    assert "Build `model.layers` with `nn.ModuleList([...])`" in d.fixes[0]


def test_lstm_input_on_another_device():
    d = diagnose("fixtures/device/lstm_input_device.py")
    assert d.rule == "device.mismatch"
    assert odd_ones(d) == ["sequence"]
    assert culprit(d, "encoder.weight_ih_l0")["device"] == "meta"
    assert "`sequence = sequence.to(device)`" in d.fixes[0]


def test_no_cuda_build_points_at_the_cuda_call():
    if torch.cuda.is_available():
        pytest.skip("this build has CUDA")
    d = diagnose("fixtures/device/no_cuda_build.py")
    assert d.rule == "device.no_cuda_build"
    assert d.facts["cuda_call"] == ".cuda()" and d.facts["cuda_line"] == 7
    assert "CPU-only build" in d.summary and torch.__version__ in d.summary


def test_cuda_checkpoint_fix_adds_map_location():
    d = diagnose("fixtures/device/cuda_checkpoint_on_cpu.py")
    assert d.rule == "device.map_location"
    assert d.facts["load_fixed"] == 'torch.load(gpu_checkpoint, map_location="cpu")'
    assert 'torch.load(gpu_checkpoint, map_location="cpu")' in d.fixes[0]


def test_numpy_on_a_non_cpu_tensor_names_it():
    d = diagnose("fixtures/device/numpy_on_meta.py")
    assert d.rule == "device.numpy_cuda"
    assert culprit(d, "predictions")["device"] == "meta"
    assert d.fixes[0].startswith("`predictions.detach().cpu().numpy()`")


@pytest.mark.parametrize("fixture, named", [
    ("fixtures/device/sdpa_flash_only_value_dim.py", "warnings printed just before"),
    ("fixtures/device/sdpa_efficient_only_on_cpu.py", "No viable backend for scaled_dot_product_attention"),
])
def test_attention_restricted_to_unusable_kernels_is_explained(fixture, named):
    d = diagnose(fixture)
    assert d.rule == "device.sdpa_no_kernel"
    assert named in d.summary and any("SDPBackend.MATH" in fix for fix in d.fixes)


def _assert_inside(labels, logits, message):
    # Only CUDA raises a device-side assert; the probe reads the live frames the way it would there.
    raise RuntimeError(message)


def test_device_assert_compares_cpu_labels_with_the_class_count():
    message = default_rulebase().by_id["device.device_assert"].examples[0].message.split(": ", 1)[1]
    labels = torch.tensor([0, 3, 10, 2])
    logits = torch.randn(4, 10)
    try:
        _assert_inside(labels, logits, message)
    except RuntimeError as exc:
        d = explainer.explain(exc)
    assert d.rule == "device.device_assert"
    assert (d.facts["labels_min"], d.facts["labels_max"], d.facts["num_classes"]) == (0, 10, 10)
    assert d.facts["classes_from"] == "logits.shape[1]"
    assert "that index out of range" in d.summary and "CUDA_LAUNCH_BLOCKING=1" in d.summary
    assert d.fixes[0].startswith("labels reaches 10: build the output layer (or Embedding) for 11 classes")


@pytest.mark.parametrize("rule_id", ["device.device_assert", "device.illegal_memory_access"])
def test_asynchronous_cuda_errors_mention_cuda_launch_blocking(rule_id):
    example = default_rulebase().by_id[rule_id].examples[0].message
    d = explain_text(example)
    assert d.rule == rule_id
    assert "CUDA_LAUNCH_BLOCKING=1" in d.summary


def test_invalid_ordinal_text_summary():
    d = explain_text("RuntimeError: CUDA error (10): invalid device ordinal")
    assert d.rule == "device.invalid_ordinal" and "CUDA_VISIBLE_DEVICES" in d.summary


# --- dtype --------------------------------------------------------------------------------------

def test_float_class_labels_from_numpy():
    d = diagnose("fixtures/dtype/cross_entropy_float_target.py")
    assert d.rule == "dtype.target_long"
    labels = culprit(d, "labels")
    assert labels["dtype"] == "float32" and labels["role"] == "target"
    assert d.facts["loss"] == "F.cross_entropy" and d.facts["wanted_dtype"] == "int64"
    assert "comes from a NumPy array" in d.summary
    assert d.fixes[0].startswith("`labels = torch.from_numpy(label_array).long()` on line 11")


def test_integer_labels_for_bce():
    d = diagnose("fixtures/dtype/bce_long_target.py")
    assert d.rule == "dtype.target_float"
    assert culprit(d, "labels")["dtype"] == "int64"
    assert d.facts["input_name"] == "probabilities" and d.facts["wanted_dtype"] == "float32"
    assert "labels = labels.float()" in d.fixes[0]


def test_integer_labels_for_bce_with_logits_is_a_result_cast():
    d = diagnose("fixtures/dtype/bce_logits_long_target.py")
    assert d.rule == "dtype.result_cast"
    assert d.facts["loss"] == "F.binary_cross_entropy_with_logits" and d.facts["target_name"] == "labels"
    assert "labels = labels.float()" in d.fixes[0]


def test_inplace_update_of_an_integer_tensor():
    d = diagnose("fixtures/dtype/inplace_int_accumulator.py")
    assert d.rule == "dtype.result_cast"
    assert d.facts["out_name"] == "counts" and d.facts["out_dtype"] == "int64"
    assert d.summary.startswith("`counts += weights * 0.5` writes a Float result into counts, which is int64")


def test_numpy_double_into_a_float_model():
    d = diagnose("fixtures/dtype/linear_double_numpy.py")
    assert d.rule == "dtype.matmul_mixed"
    assert odd_ones(d) == ["x"]
    assert culprit(d, "x")["dtype"] == "float64"
    assert culprit(d, "model.0.weight")["dtype"] == "float32"
    assert d.facts["module"] == "model.0"
    assert "`x` comes from a NumPy array: `x = torch.from_numpy(features)` on line 9" in d.summary
    assert d.fixes[0].startswith("`x = torch.from_numpy(features).float()` on line 9")


def test_integer_input_into_linear():
    d = diagnose("fixtures/dtype/linear_long_input.py")
    assert d.rule == "dtype.matmul_mixed"
    assert d.facts["odd_name"] == "x" and d.facts["odd_dtype"] == "int64" and d.facts["ref_dtype"] == "float32"
    assert "pass `dtype=torch.float32` when creating `x` on line 7" in d.fixes[0]


def test_mixed_dtype_matmul_without_a_module():
    d = diagnose("fixtures/dtype/matmul_mixed.py")
    assert d.rule == "dtype.matmul_mixed"
    assert d.facts["odd_name"] == "projection" and d.facts["ref_name"] == "activations"
    assert d.fixes[0] == "`projection = projection.float()` before `out = activations @ projection` on line 7."


def test_double_images_into_conv():
    d = diagnose("fixtures/dtype/conv_double_input.py")
    assert d.rule == "dtype.conv_input_type"
    assert odd_ones(d) == ["batch"] and culprit(d, "conv.weight")["dtype"] == "float32"
    assert d.fixes[0].startswith("`batch = torch.from_numpy(images).float()` on line 9")


def test_float_token_ids_into_embedding():
    d = diagnose("fixtures/dtype/embedding_float_indices.py")
    assert d.rule == "dtype.embedding_indices"
    assert d.facts["module"] == "embedding" and d.facts["num_embeddings"] == 100
    assert culprit(d, "token_ids")["dtype"] == "float32"
    assert "token_ids = token_ids.long()" in d.fixes[0]


def test_half_on_cpu_and_integer_logits():
    half = diagnose("fixtures/dtype/half_on_cpu.py")
    assert half.rule == "dtype.not_implemented" and half.facts["kernel"] == "cdist"
    assert half.fixes and half.fixes[0].startswith("On the CPU, run in float32")
    integer = diagnose("fixtures/dtype/integer_logits_loss.py")
    assert integer.rule == "dtype.not_implemented" and integer.facts["dtype"] == "Long"
    assert integer.fixes[0].startswith("Pass floating-point data")


def test_double_sequence_into_gru():
    d = diagnose("fixtures/dtype/rnn_double_input.py")
    assert d.rule == "dtype.rnn_input"
    assert odd_ones(d) == ["sequence"]
    assert d.fixes[0].startswith("`sequence = torch.from_numpy(series).float()` on line 9")
