"""Round 20 `other` rules (first half): fine-tuning LLMs with transformers, trl and DeepSpeed. Trainer, TrainingArguments
and trl Config keywords that another release renamed or moved, the Trainer refusing a quantized model without
adapters, a library registering an architecture name transformers now ships, and DeepSpeed's CPU optimizer op missing
or built without CUDA. Messages verbatim from the corpus and the threads cited (none can be raised here: transformers,
trl and DeepSpeed are not installed with the CPU test environment)."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message as corpus, explain_paste

CORPUS = [
    ("r20_a.yaml#10", "other.hf_trainer_keyword_mismatch", ["`Trainer.__init__()`", "`processing_class`", "4.46"]),
    ("r20_a.yaml#78", "other.hf_trainer_keyword_mismatch", ["`SFTTrainer.__init__()`", "`max_seq_length`",
                                                            "SFTConfig"]),
    ("r20_a.yaml#79", "other.hf_trainer_keyword_mismatch", ["`SFTConfig.__init__()`", "`max_seq_length`",
                                                            "`max_length`"]),
    ("r20_a.yaml#18", "other.hf_trainer_quantized_model", ["8-bit", "`bitsandbytes>=0.37.0`"]),
    ("r20_a.yaml#4", "other.hf_auto_register_name_taken", ["`aimv2`", "AutoConfig.register"]),
    ("r20_a.yaml#22", "other.deepspeed_cpu_op_not_built", ["`deepspeed.ops.adam.cpu_adam_op`", "`cpu_adam`",
                                                           "DS_BUILD_CPU_ADAM=1"]),
    ("r20_a.yaml#24", "other.deepspeed_op_cuda_incompatible", ["`cpu_adam`", "CPU-only"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


# The same families in other threads' words.
PASTED = [
    # transformers 4.46 removed the old name (https://github.com/yeyupiaoling/Whisper-Finetune/issues/112)
    ("TypeError: Seq2SeqTrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'",
     "other.hf_trainer_keyword_mismatch", ["`Seq2SeqTrainingArguments.__init__()`", "`eval_strategy`"]),
    # trl 0.12+ from inside trl's trainer (https://github.com/huggingface/trl/issues/6168)
    ("TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'",
     "other.hf_trainer_keyword_mismatch", ["`tokenizer`", "`processing_class`"]),
    # https://github.com/unslothai/unsloth/issues/2010
    ("TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'dataset_num_proc'",
     "other.hf_trainer_keyword_mismatch", ["`dataset_num_proc`", "SFTConfig"]),
    # transformers 4.34+ (https://github.com/unslothai/unsloth/issues/241)
    ("ValueError: You cannot perform fine-tuning on purely quantized models. Please attach trainable adapters on top "
     "of the quantized model to correctly perform fine-tuning. Please see: https://huggingface.co/docs/transformers/"
     "peft for more details", "other.hf_trainer_quantized_model", ["purely quantized", "get_peft_model"]),
    # https://github.com/microsoft/unilm/issues/866
    ("ValueError: 'layoutlmv3' is already used by a Transformers config, pick another name.",
     "other.hf_auto_register_name_taken", ["`layoutlmv3`"]),
    # the model mapping's wording (https://github.com/sgl-project/sglang/issues/4607)
    ("ValueError: '<class 'sglang.srt.configs.qwen2_5_vl_config.Qwen2_5_VLConfig'>' is already used by a "
     "Transformers model.", "other.hf_auto_register_name_taken",
     ["`<class 'sglang.srt.configs.qwen2_5_vl_config.Qwen2_5_VLConfig'>`", "model_type"]),
    # https://github.com/deepspeedai/DeepSpeed/issues/4513
    (" [WARNING]  cpu_adam cuda is missing or is incompatible with installed torch, only cpu ops can be compiled!",
     "other.deepspeed_op_cuda_incompatible", ["`cpu_adam`"]),
]


@pytest.mark.parametrize(("text", "rule", "values"), PASTED, ids=[p[1] + str(i) for i, p in enumerate(PASTED)])
def test_pasted_wordings_name_their_values(text, rule, values):
    assert_names(explain_paste(text), rule, values)


# Near misses of other families: Lightning's Trainer keeps its rule; Python < 3.10 names no class, so only the
# generic fallback for argument-binding errors answers (the round-24 reading: `other`).
NEAR_MISSES = [
    # https://github.com/facebookresearch/xformers/issues/818
    ("TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus'", "other.trainer_argument_removed"),
    # https://github.com/Lightning-AI/pytorch-lightning/issues/991
    ("TypeError: __init__() got an unexpected keyword argument 'precision'", "other.call_signature_mismatch"),
]


@pytest.mark.parametrize(("text", "rule"), NEAR_MISSES, ids=[str(r) + str(i) for i, (_, r) in enumerate(NEAR_MISSES)])
def test_near_misses_keep_their_rule(text, rule):
    rules = [d.rule for d in explain_stream(io.StringIO(text))]
    assert "other.hf_trainer_keyword_mismatch" not in rules, rules
    assert rules[:1] == [rule], rules
