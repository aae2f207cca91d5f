"""Round-24 wordings for `other` (first half): a NameError raised inside an installed library (its compiled extension
or optional import failed quietly), torch 0.4.0's no_grad decorator and ignite's pre-0.3 event filters, a library's
torch version check, DLPack capsules torch cannot read, torchmetrics' compute-before-update warning, Lightning's
"No precision set" and frozen-dataclass errors, SAM's predictor without an image, TRL's collator/packing check,
coqui-tts' Coqpit fork, a private extension's "DLL load failed", bitsandbytes' CPU library log and transformers'
lazy import over torchvision's missing ops: each corpus message (verbatim from the opened rounds) is claimed, from
its text alone, by the right rule with the values it holds named; the DLPack error is explained live; near misses
(a typo's NameError, ONNX's DLL, accelerate's bf16 check) stay with their own rules or none."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message, explain_fixture, explain_paste

CORPUS_CASES = [
    # a NameError inside an installed library: GroundingDINO's `_C` (IPython's and Python's tracebacks), AutoGPTQ's
    # kernel in a Colab traceback, cellpose's torch device bound only when its torch import worked
    ("r24_a.yaml#123", "other.library_name_not_defined", ["name '_C'", "ms_deform_attn_forward", "`groundingdino`"]),
    ("r24_a.yaml#124", "other.library_name_not_defined", ["name '_C'", "ms_deform_attn.py\", line 53"]),
    ("r24_a.yaml#82", "other.library_name_not_defined", ["autogptq_cuda_256", "qlinear_cuda_old.py", "`auto_gptq`"]),
    ("r24_a.yaml#111", "other.library_name_not_defined", ["torch_CPU", "core.py", "assign_device", "`cellpose`"]),
    # ignite's metrics decorated with @torch.no_grad() on torch 0.4.0; ignite < 0.3's Events called as a filter
    ("r24_a.yaml#22", "other.callable_api_older_release", ["'no_grad'", "metric.py\", line 65", "`ignite`", "0.4.1"]),
    ("r24_a.yaml#23", "other.callable_api_older_release", ["'Events'", "ignite_tester.py\", line 68", "0.3.0"]),
    # DGL's import-time version check
    ("r24_a.yaml#14", "other.library_requires_newer_torch", ["PyTorch >= 1.13.0", "tensor.py\", line 16", "`DGL`"]),
    # kornia's image loader handing torch a DLPack capsule it cannot read
    ("r24_a.yaml#26", "other.dlpack_invalid_capsule", ["from_dlpack", "io.py\", line 41", "`kornia`"]),
    # torchmetrics' warning, printed through its prints.py
    ("r24_a.yaml#87", "other.torchmetrics_compute_before_update", ["MulticlassAccuracy", "prints.py:43"]),
    # Lightning's accelerator connector, and lightning_utilities' apply_to_collection
    ("r24_a.yaml#114", "other.lightning_precision_invalid", ["No precision set", "precision"]),
    ("r24_a.yaml#128", "other.lightning_frozen_dataclass", ["apply_to_collection", "frozen"]),
    # SAM 2's image predictor
    ("r24_a.yaml#68", "other.sam_image_not_set", ["set_image", "sam2_image_predictor.py\", line 281"]),
    # TRL's SFTTrainer
    ("r24_a.yaml#60", "other.trl_collator_packing", ["DataCollatorForCompletionOnlyLM", "SFTTrainer", "packing"]),
    # coqui-tts' import check
    ("r24_a.yaml#104", "other.coqui_tts_coqpit_conflict", ["coqpit", "coqpit-config"]),
    # wenet's private extension on Windows
    ("r24_a.yaml#91", "other.dll_load_failed", ["_wenet", "找不到指定的程序"]),
    # bitsandbytes' "bin <library>" line above its warning, and the CUDA folders it found missing after it
    ("r24_a.yaml#6", "other.bnb_cpu_library_loaded", ["libbitsandbytes_cpu.so", "/usr/local/cuda-12.0/lib64"]),
    # transformers' lazy import wrapping torchvision's missing operator
    ("r24_a.yaml#43", "other.torchvision_ops_missing",
     ["torchvision::nms", "transformers.models.roberta.modeling_roberta"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


CITED_CASES = [
    # Kaolin's range check, torch too new (NVIDIAGameWorks/kaolin#694)
    ("ImportError: Kaolin requires PyTorch >=1.6.0, <=1.13.0, but found version 1.13.1 instead.",
     "other.library_requires_newer_torch", ["`Kaolin`", "PyTorch >= 1.6.0", "1.13.0", "1.13.1"]),
    # SAM's image predictor (facebookresearch/segment-anything#357)
    ("RuntimeError: An image must be set with .set_image(...) before mask prediction.", "other.sam_image_not_set",
     ["`.set_image(...)`"]),
    # torch 0.4.0 with a decorator in the user's own script (chenyuntc/pytorch-book#114)
    ("  File \"main.py\", line 158, in <module>\n    @t.no_grad()\nTypeError: 'no_grad' object is not callable",
     "other.callable_api_older_release", ["torch.no_grad", "main.py\", line 158", "0.4.1"]),
    # torchmetrics' false alarm for a wrapped metric (Lightning-AI/torchmetrics#2264)
    ("/home/adrian/.conda/envs/lit-gpt/lib/python3.10/site-packages/torchmetrics/utilities/prints.py:43: UserWarning: "
     "The ``compute`` method of metric MeanMetric was called before the ``update`` method which may lead to errors, as "
     "metric states have not yet been updated.\n  warnings.warn(*args, **kwargs)  # noqa: B028",
     "other.torchmetrics_compute_before_update", ["MeanMetric", "prints.py:43"]),
]


@pytest.mark.parametrize("message, rule, values", CITED_CASES, ids=[c[1] + str(i) for i, c in enumerate(CITED_CASES)])
def test_cited_wording_is_explained(message, rule, values):
    assert_names(explain_paste(message), rule, values)


def test_live_dlpack_capsule_used_twice_is_explained():
    diagnosis = explain_fixture("fixtures/other/dlpack_capsule_consumed.py")
    assert_names(diagnosis, "other.dlpack_invalid_capsule", ["from_dlpack", "used_dltensor"])


NEAR_MISSES = [
    # a typo in the user's own script stays a control (fixtures/real/README.md): no library frame raised it
    ("r10_b.yaml#63", "other.library_name_not_defined"),
    ("r8_a.yaml#76", "other.library_name_not_defined"),
    # ONNX's own module failing to load: a control, not a package built on torch
    ("r19_a.yaml#26", "other.dll_load_failed"),
    # accelerate's bf16 check keeps its own rule
    ("r7_a.yaml#58", "other.library_requires_newer_torch"),
]


@pytest.mark.parametrize("where, rule", NEAR_MISSES, ids=[c[0] for c in NEAR_MISSES])
def test_near_miss_is_not_claimed(where, rule):
    import io

    from explainer.cli.explain import explain_stream

    rules = [d.rule for d in explain_stream(io.StringIO(corpus_message(where)))]
    assert rule not in rules, rules


def test_precision_option_choice_names_the_value_and_the_choices():
    # StableTuner's trainer.py under `accelerate launch`: fp32 where accelerate's names want 'no'
    assert_names(explain_paste(corpus_message("r24_a.yaml#2")), "other.precision_argument_choice",
                 ["--mixed_precision", "'fp32'", "trainer.py", "'no'"])


def test_pyannote_checkpoint_versions_are_named():
    # whisperX's VAD checkpoint: pyannote.audio and torch versions saved in it against the installed ones
    assert_names(explain_paste(corpus_message("r24_a.yaml#47")), "other.pyannote_trained_with_version",
                 ["pyannote.audio 0.0.1", "3.1.1", "1.10.0+cu102", "2.3.1+cu121"])
