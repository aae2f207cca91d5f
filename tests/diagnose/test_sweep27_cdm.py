"""Sweep 27 (compile, device, memory): AOTInductor's runner aborting after a CUDA error ("create_func_(...) API call
failed at .../model_container_runner.cpp, line 49") is named with the runner's call and place by
device.cuda_runtime_error; the same CUDA error without the runner's abort keeps its plain reading."""

from __future__ import annotations

from conftest import assert_names, corpus_message, explain_paste

AOTI_ABORT = (
    "  Error: CUDA error: invalid argument\n"
    "  terminate called after throwing an instance of 'std::runtime_error'\n"
    "    what():  create_func_( &container_handle_, num_models, device_str.c_str(), cubin_dir.empty() ? nullptr : "
    "cubin_dir.c_str()) API call failed at ../torch/csrc/inductor/aoti_runner/model_container_runner.cpp, line 49")


def test_corpus_aoti_runner_abort_names_the_call_and_its_place():
    # r25_b#30 (pytorch/torchchat#709): the compiled model could not be loaded by the C++ runner
    assert_names(explain_paste(corpus_message("r25_b.yaml#30")), "device.cuda_runtime_error",
                 ["invalid argument", "create_func_", "model_container_runner.cpp, line 49", "loaded on this device"])


def test_cited_aoti_runner_abort_is_read_from_its_what_line():
    assert_names(explain_paste(AOTI_ABORT), "device.cuda_runtime_error",
                 ["cudaErrorInvalidValue", "create_func_", "model_container_runner.cpp, line 49"])


def test_plain_cuda_error_does_not_mention_the_runner():
    # the same reason without the runner's abort (FZU-N/URWKV#12): no AOTInductor clause
    diagnosis = explain_paste("RuntimeError: CUDA error: invalid argument")
    assert diagnosis.rule == "device.cuda_runtime_error"
    assert "AOTInductor" not in diagnosis.summary
