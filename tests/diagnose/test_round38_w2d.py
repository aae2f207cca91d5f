"""Round-38 wordings for device and data (second writer): cuDNN's version() None inside an RNN's flatten_parameters,
spectral_norm's metadata key, huggingface_hub's LocalEntryNotFoundError in offline mode, the Lua .t7 reader's unknown
type id and the CUDA asynchronous-error hint pasted alone. Each corpus message (verbatim from the opened rounds) is
claimed by the right rule with its values named, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r38_a.yaml#37", "device.cudnn_version_none", ["NoneType", "version() >= 6000", "229"]),
    ("r38_c.yaml#50", "data.spectral_norm_metadata_key", ["spectral_norm", "weight.version"]),
    ("r38_c.yaml#63", "data.hf_local_entry_not_found", ["HF_HUB_OFFLINE=0"]),
    ("r38_c.yaml#67", "data.lua_t7_unknown_type", ["-402653184", "T7ReaderException"]),
    ("r38_c.yaml#82", "device.cuda_async_hint_only", ["CUDA kernel errors"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # the hint with its error line (LlamaFactory#1213): device.cuda_runtime_error's
    ("RuntimeError: CUDA error: peer mapping resources exhausted\nCUDA kernel errors might be asynchronously reported "
     "at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing "
     "CUDA_LAUNCH_BLOCKING=1.\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
     "device.cuda_async_hint_only"),
    # the same TypeError from another library's None (transformers#12856): not cuDNN's version check
    ("TypeError: '>' not supported between instances of 'NoneType' and 'int'", "device.cudnn_version_none"),
    # load_state_dict's own unexpected keys (anomalib#523)
    ("RuntimeError: Error(s) in loading state_dict for PatchcoreLightning:\n\tUnexpected key(s) in state_dict: "
     "\"normalization_metrics.min\", \"normalization_metrics.max\".", "data.spectral_norm_metadata_key"),
    # a local folder without weights (magic-animate#115)
    ("OSError: Error no file named diffusion_pytorch_model.bin found in directory "
     "/content/drive/MyDrive/sd-ma/MagicAnimate/appearance_encoder.", "data.hf_local_entry_not_found"),
    # huggingface_hub's LocalEntryNotFoundError after a failed connection is a network failure, a control wherever
    # posted since round 53 (r38_c.yaml#61 MoneyPrinterTurbo#156, #62 generative-models#222; voicebox#553 without
    # the class): only the offline-mode wording ('outgoing traffic has been disabled') is the rule's
    ("huggingface_hub.utils._errors.LocalEntryNotFoundError: An error happened while trying to locate the files on the "
     "Hub and we cannot find the appropriate snapshot folder for the specified revision on the local disk. Please check "
     "your internet connection and try again.", "*"),
    ("huggingface_hub.utils._errors.LocalEntryNotFoundError: An error happened while trying to locate the file on the "
     "Hub and we cannot find the requested files in the local cache. Please check your connection and try again or "
     "make sure your Internet connection is on", "*"),
    ("An error happened while trying to locate the files on the Hub and we cannot find the appropriate snapshot folder "
     "for the specified revision on the local disk. Please check your internet connection and try again.", "*"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
