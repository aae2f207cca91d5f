"""Round-29 wordings for other, compile, dtype and shape (install and caches, ONNX export, bfloat16, conv and broadcast
sizes; and older rounds' Windows code-page errors): each corpus message (verbatim from the opened rounds) is claimed,
from its text alone, by the right rule with the values it holds named; other wordings of the same families (from the
threads cited) are claimed too, and near misses stay unclaimed. A live fixture raises the empty-input convolution."""

from __future__ import annotations

import traceback

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste, raised


CORPUS_CASES = [
    ("r29_a.yaml#11", "other.cache_dir_permission_denied", ["`/.cache`", "Errno 13", "home folder is `/`"]),
    ("r29_a.yaml#12", "other.cache_dir_permission_denied", ["`/home/manuelli/.torch/models`", "Errno 13", "TORCH_HOME"]),
    ("r29_a.yaml#13", "other.cache_dir_permission_denied", ["`/app/aphrodite-engine/.triton`", "TRITON_CACHE_DIR"]),
    ("r29_b.yaml#13", "shape.conv_kernel_size", ["input size per channel: (0)", "Kernel size: (1)", "empty"]),
    ("r29_b.yaml#21", "other.call_signature_mismatch", ["`scaled_dot_product_attention()`", "`training`",
                                                        "`EvaluateChatHook`", "xtuner.engine.hooks.evaluate_chat_hook"]),
    ("r29_b.yaml#32", "other.pypi_placeholder_package", ["`torch-0.1.2.post1.tar.gz`", "32-bit Python"]),
    ("r29_b.yaml#48", "shape.broadcast", ["tensor a (11)", "tensor b (10)", "dimension 0"]),
    ("r29_b.yaml#57", "compile.onnx_unordered_map_key", ["invalid unordered_map<K, T> key", "torch.onnx.export"]),
    ("r29_b.yaml#58", "compile.onnx_dynamic_axes_conversion", ["`dynamic_axes`", "`dynamic_shapes`", "dynamo=True"]),
    ("r29_b.yaml#84", "dtype.not_implemented", ["`_amp_foreach_non_finite_check_and_unscale_cuda`", "BFloat16",
                                                "GradScaler"]),
    ("r29_b.yaml#90", "other.chatglm_special_token_missing", ["130001", "[gMASK]", "`mask_position = seq.index(mask_token)`"]),
    ("r29_b.yaml#91", "other.chatglm_special_token_missing", ["150001", "130001"]),
    ("r28_a.yaml#28", "other.windows_codepage_decode", ["'gbk'", "0x92", "position 16034"]),
    ("r28_a.yaml#29", "other.windows_codepage_decode", ["'gbk'", "0x80", "position 68"]),
    ("r21_b.yaml#18", "other.windows_codepage_decode", ["'gbk'", "0x89", "position 189"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # Triton's cache on Windows (FramePack#221), a Hugging Face hub file (DeepKE#537)
    ("PermissionError: [WinError 5] Access is denied: 'C:\\\\Users\\\\user\\\\.triton'",
     "other.cache_dir_permission_denied", ["WinError 5", "TRITON_CACHE_DIR"]),
    ("PermissionError: [Errno 13] Permission denied: 'C:\\\\Users\\\\lenovo/.cache\\\\huggingface\\\\hub\\\\models--bert-base-"
     "chinese\\\\refs\\\\main'", "other.cache_dir_permission_denied", ["`~/.cache`", "Hugging Face"]),
    # a hook of mmdet under mmengine's runner (mmrotate#875)
    ("TypeError: add_datasample() got an unexpected keyword argument 'pred_score_thr' in "
     "<mmdet.engine.hooks.visualization_hook.DetVisualizationHook object at 0x000001F34568C9D0>",
     "other.call_signature_mismatch", ["`DetVisualizationHook`", "`pred_score_thr`"]),
    # the bf16 scaler kernel in a plain traceback (trl#4901)
    ("NotImplementedError: \"_amp_foreach_non_finite_check_and_unscale_cuda\" not implemented for 'BFloat16'",
     "dtype.not_implemented", ["GradScaler", "needs no scaler"]),
    # the <sop> lookup in get_masks (ChatGLM-6B#872), and the [MASK] id (ChatGLM-Efficient-Tuning#96)
    ("    context_lengths = [seq.tolist().index(self.config.bos_token_id) for seq in input_ids]\n"
     "ValueError: 130004 is not in list", "other.chatglm_special_token_missing", ["<sop>", "150004"]),
    ("ValueError: 130000 is not in list", "other.chatglm_special_token_missing", ["[MASK]"]),
    # the Western code page on Windows (toppra#172)
    ("UnicodeDecodeError: 'charmap' codec can't decode byte 0x9d in position 1649: character maps to <undefined>",
     "other.windows_codepage_decode", ["0x9d", "position 1649", "cp1252"]),
    # the treespec cause above the conversion error (compile/onnx_dynamic_axes_conversion's example, verbatim with its
    # elision; source: https://github.com/open-edge-platform/geti/pull/5319)
    ("ValueError: treespec.unflatten(leaves): `leaves` has length 2 but the spec refers to a pytree that holds 1 items "
     "(TreeSpec(list, None, [*])).\n...\n"
     "RuntimeError: # Failed to convert 'dynamic_axes' to 'dynamic_shapes'. Please provide 'dynamic_shapes' directly. "
     "Refer to the documentation for 'torch.export.export' for more information on dynamic shapes.",
     "compile.onnx_dynamic_axes_conversion", ["`dynamic_axes`"]),
    # the VGT backbone's checkpointed blocks (AdvancedLiterateMachinery#191)
    ("vis_x = checkpoint.checkpoint(blk, vis_x, rel_pos_bias, training_window_size)\n...\n"
     "RuntimeError: invalid unordered_map<K, T> key", "compile.onnx_unordered_map_key", ["checkpoint"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a tool's own folder under a missing home, not a cache of torch's (aider#2865)
    ("PermissionError: [Errno 13] Permission denied: '/.aider'", "other.cache_dir_permission_denied"),
    ("PermissionError: [Errno 13] Permission denied: '/tmp/tritonbench/commands.log'", "other.cache_dir_permission_denied"),
    # the 'utf-8' codec's errors: the file is not UTF-8 text at all
    ("UnicodeDecodeError: 'utf-8' codec can't decode byte 0x80 in position 64: invalid start byte",
     "other.windows_codepage_decode"),
    # GLM-4's tokenizer ids (GLM-4#438), and another list.index miss (raised here by list.index itself)
    ("ValueError: 151337 is not in list", "other.chatglm_special_token_missing"),
    ("".join(traceback.format_exception_only(raised(lambda: [130001, 130004].index(1300010)))),
     "other.chatglm_special_token_missing"),
    # libstdc++'s map error alone, without ONNX frames (pytorch#88286's last line)
    ("RuntimeError: _Map_base::at", "compile.onnx_unordered_map_key"),
    # the exporter's warning about dynamic_axes is not the failure
    ("UserWarning: # 'dynamic_axes' is not recommended when dynamo=True, and may lead to 'torch._dynamo.exc.UserError: "
     "Constraints violated.' Supply the 'dynamic_shapes' argument instead if export is unsuccessful.",
     "compile.onnx_dynamic_axes_conversion"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_live_empty_input_reaching_a_conv():
    diagnosis = explain_fixture("fixtures/shape/conv_empty_input.py")
    assert_names(diagnosis, "shape.conv_kernel_size", ["(0)", "empty"])
