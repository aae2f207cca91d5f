"""Round 32's readings: "no kernel image" printed where no PyTorch is in the process (thrust's uncaught error in a
native program, XLA's stream executor) stays unclaimed while torch's and an extension's wordings are still claimed,
an error raised in the innermost frame of Paddle's own packages is said to be Paddle's, even in oneDNN's words; and
the shared changes its writers asked for: ComfyUI node names with a pack's tag or a bar, the checkpoint file a loader
logs before a state_dict size mismatch, StyleGAN's plugin import after a failed build. Corpus messages verbatim from
the opened rounds."""

from __future__ import annotations

import io

from conftest import claimed_by, corpus_message, explain_paste

from explainer.cli.explain import explain_stream


def test_thrusts_uncaught_error_in_a_native_program_is_not_claimed():
    assert claimed_by(corpus_message("r32_c.yaml#29")) == []


def test_xla_naming_the_runtime_code_before_no_kernel_image_is_not_claimed():
    assert claimed_by(corpus_message("r32_c.yaml#43")) == []


def test_the_same_words_raised_through_python_are_still_claimed():
    # pybind11 turns an extension's thrust::system_error into a RuntimeError with the same words
    raised = "RuntimeError: parallel_for failed: no kernel image is available for execution on the device"
    assert explain_paste(raised).rule == "device.no_kernel_image"
    assert explain_paste("RuntimeError: CUDA error: no kernel image is available for execution on the device") \
        .rule == "device.no_kernel_image"


def test_an_error_raised_in_paddleocrs_frame_is_said_to_be_paddles():
    [diagnosis] = [d for d in explain_stream(io.StringIO(corpus_message("r32_c.yaml#36"))) if d.runbook]
    assert diagnosis.rule is None and diagnosis.runbook.endswith("other.not_pytorch_paddle.html")
    assert "predict_det.py:234" in diagnosis.summary and "`paddleocr`" in diagnosis.summary
    assert "could not execute a primitive" in diagnosis.summary


def test_the_same_onednn_words_under_a_torch_frame_are_still_torchs():
    pasted = ('  File "/home/u/.venv/lib/python3.10/site-packages/torch/nn/modules/conv.py", line 456, in '
              '_conv_forward\n    return F.conv2d(input, weight, bias, self.stride,\nRuntimeError: could not execute '
              'a primitive\n')
    assert explain_paste(pasted).rule == "device.onednn_primitive"


def test_a_comfyui_node_name_with_a_packs_tag_or_a_bar_is_kept_whole():
    assert explain_paste(corpus_message("r32_a.yaml#3")).facts["comfyui_node"] == "[ComfyUI-3D] Animate Anyone Sampler"
    assert explain_paste(corpus_message("r32_a.yaml#71")).facts["comfyui_node"] == "AttentionCouple|cgem156"


def test_the_checkpoint_file_logged_before_a_state_dict_size_mismatch_is_named():
    diagnosis = explain_paste(corpus_message("r32_a.yaml#22"))
    assert diagnosis.rule == "shape.state_dict_size"
    assert "The checkpoint is wd-1-4-anime_e1.ckpt" in diagnosis.summary


def test_a_stylegan_plugin_that_left_no_module_to_import_is_its_failed_build():
    diagnosis = explain_paste(corpus_message("r32_a.yaml#83"))
    assert diagnosis.rule == "other.stylegan_plugin_build_failed"
    assert "`upfirdn2d_plugin`" in diagnosis.summary and "cpp_extension.py:1560" in diagnosis.summary
    warned = explain_paste(corpus_message("r32_a.yaml#82"))
    assert warned.rule == "other.stylegan_plugin_build_failed" and "upfirdn2d_plugin.so" in warned.summary


def test_a_plain_missing_module_is_not_taken_for_a_stylegan_plugin():
    pasted = ('Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    import upfirdn2d_plugin\n'
              "ModuleNotFoundError: No module named 'upfirdn2d_plugin'\n")
    assert explain_paste(pasted).rule == "other.module_not_installed"
