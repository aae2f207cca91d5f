"""Round 23 `other` rules (second half): vLLM's report that its engine-core process died while starting, a model
library's pipeline / patched attention function / tokenizer method given a keyword of another release, and a
widening of TorchCodec's loader rule (torchaudio 2.8's shorter "TorchCodec is required" wording, the library's name).
Messages verbatim from the corpus and the threads cited."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message as corpus, explain_paste

CORPUS = [
    ("r23_a.yaml#30", "other.vllm_engine_startup_failed", ["`Failed core proc(s): {}`", "`EngineCore failed to start.`"]),
    ("r23_a.yaml#31", "other.vllm_engine_startup_failed", ["{'EngineCore_0': 1}", "exit code"]),
    ("r22_a.yaml#72", "other.library_call_unexpected_keyword", ["`WanPipeline.__call__()`", "'generator'", "diffusers"]),
    ("r23_a.yaml#45", "other.library_call_unexpected_keyword",
     ["`BaseLoaderKJ._patch_modules..attention_sage()`", "'transformer_options'", "ComfyUI"]),
    ("r15_a.yaml#31", "other.library_call_unexpected_keyword", ["`prepare_for_model()`", "'padding'", "sentence-transformers"]),
    ("r23_a.yaml#16", "other.torchcodec_load_failed", ["`load_with_torchcodec`", "TorchCodec"]),
    ("r23_b.yaml#19", "other.torchcodec_load_failed", ["libtorchcodec", "2.9.1+cu130", "FFmpeg", "0.8 or 0.9"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


# The same families in other threads' words.
PASTED = [
    # vLLM 0.6-0.10's API server, the V0 engine process (https://github.com/vllm-project/vllm/issues/11994)
    ("  File \"/usr/local/lib/python3.11/dist-packages/vllm/entrypoints/openai/api_server.py\", line 223, in "
     "build_async_engine_client_from_engine_args\n    raise RuntimeError(\n"
     "RuntimeError: Engine process failed to start. See stack trace for the root cause.",
     "other.vllm_engine_startup_failed", ["engine process failed to start", "MQLLMEngine"]),
    # torchaudio 2.9's longer wording (https://github.com/ROCm/TheRock/issues/1490)
    ("ImportError: TorchCodec is required for save_with_torchcodec. Please install torchcodec to use this function.",
     "other.torchcodec_load_failed", ["`save_with_torchcodec`", "torchaudio 2.9"]),
]


@pytest.mark.parametrize(("message", "rule", "values"), PASTED, ids=[r for _, r, _ in PASTED])
def test_other_wordings_name_their_values(message, rule, values):
    assert_names(explain_paste(message), rule, values)


# Near misses that must stay with their own rules or unexplained (negative controls of the corpus).
LEFT_ALONE = [
    ("r12_b.yaml#34", "other.library_call_unexpected_keyword"),  # huggingface_hub's snapshot_download: a control
    ("modern.yaml#98", "other.library_call_unexpected_keyword"),  # a user's keyword to YOLO(): a control
    ("r17_a.yaml#3", "other.library_call_unexpected_keyword"),  # stable-baselines3's logger: a control
    ("r16_b.yaml#30", "other.library_call_unexpected_keyword"),  # torch's enable_gqa: other.keyword_newer_torch
    ("r4_b.yaml#20", "other.vllm_engine_startup_failed"),  # the engine core's own CUDA error answers
]


@pytest.mark.parametrize(("where", "rule"), LEFT_ALONE, ids=[w for w, _ in LEFT_ALONE])
def test_near_misses_are_not_claimed(where, rule):
    import io

    from explainer.cli.explain import explain_stream

    assert all(d.rule != rule for d in explain_stream(io.StringIO(corpus(where))))
