"""Round-46 wordings of compression and quantization libraries (torch.ao quantization: dynamic quantization dtypes,
qschemes, observers, the embedding qconfig, a CPU kernel's dtype assert; bitsandbytes under transformers; auto-gptq's
kernels and transformers' exllama backend; the Marlin kernels' shard sizes in vLLM, SGLang and TGI): each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named the way the coverage judge reads them; other wordings of the same families (from the threads cited) are claimed
too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import (assert_explained, assert_left_alone, assert_names, corpus_message, explain_fixture,
                      explain_paste, rules_of)


CORPUS_CASES = [
    ("r46_a.yaml#5", "other.bnb_cpu_library_loaded", ["libbitsandbytes_cpu.so", "cadam32bit_grad_fp32", "Conv1D"]),
    ("r46_a.yaml#6", "other.bnb_quantization_unavailable", ["load_in_8bit=True", "accelerate", "bitsandbytes"]),
    ("r46_a.yaml#10", "dtype.dynamic_quant_linear_dtype", ["qint8", "float16", "torch.quint8"]),
    ("r46_a.yaml#11", "device.quantized_qscheme_unsupported", ["per_channel_affine"]),
    ("r46_a.yaml#12", "other.observer_qscheme_unsupported",
     ["MinMaxObserver", 'observer.py", line 455', "per_tensor_symmetric"]),
    ("r46_a.yaml#13", "dtype.cpu_kernel_dynamic_casting", ["needs_dynamic_casting", "Loops.h", "310"]),
    ("r46_a.yaml#17", "device.gptq_exllama_modules_offloaded", ["Exllama", "disable_exllama=True"]),
    ("r46_a.yaml#18", "device.gptq_exllama_modules_offloaded", ["cpu", "Exllamav2", "disable_exllama=True"]),
    ("r46_a.yaml#19", "device.gptq_exllama_modules_offloaded", ["Exllamav2", "disable_exllama=True"]),
    ("r46_a.yaml#31", "device.cuda_runtime_error", ["libbitsandbytes_cuda121.so", "8.6", "ops.cu", "116"]),
    ("r46_a.yaml#33", "device.bnb_int8_matmul_old_gpu", ["6.1", "7.5", "libbitsandbytes_cuda121_nocublaslt.so"]),
    ("r46_a.yaml#47", "other.autogptq_extension_not_installed", ["exllama_kernels"]),
    ("r46_a.yaml#49", "other.autogptq_extension_not_installed", ["qlinear_cuda", "qlinear_cuda_old"]),
    ("r46_a.yaml#57", "other.embedding_quantization_qconfig", ["embedding_ops.py:162", "float_qparams_weight_only_qconfig"]),
    ("r46_a.yaml#83", "shape.marlin_shard_divisibility", ["14784", "128", "input_size_per_partition"]),
    ("r46_a.yaml#84", "shape.marlin_shard_divisibility", ["192", "128"]),
    ("r35_c.yaml#18", "other.autogptq_extension_not_installed", []),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # no GPU visible to torch is the usual reason, not missing packages
    assert_names(explain_paste(corpus_message("r46_a.yaml#6")), "other.bnb_quantization_unavailable",
                 ["torch.cuda.is_available()", "4.32"])
    # Marlin's tiles: 14784 is 115 tiles of 128 and 64 left over, a shard of a tensor-parallel split
    assert_names(explain_paste(corpus_message("r46_a.yaml#83")), "shape.marlin_shard_divisibility",
                 ["115 x 128 + 64", "--tensor-parallel-size"])
    # 192 input features hold one group of 128 and half another; 64 divides them
    diagnosis = explain_paste(corpus_message("r46_a.yaml#84"))
    assert_names(diagnosis, "shape.marlin_shard_divisibility", ["1 x 128 + 64", "(64)"],
                 " ".join([diagnosis.summary, *diagnosis.fixes]))
    # per-channel weights packed by the CUDA (cuDNN) kernels: convert on the CPU
    diagnosis = explain_paste(corpus_message("r46_a.yaml#11"))
    assert_names(diagnosis, "device.quantized_qscheme_unsupported", ["cuDNN", "model.cpu()"],
                 " ".join([diagnosis.summary, *diagnosis.fixes]))
    # lollms passed device map cpu: the whole model on the CPU
    assert_names(explain_paste(corpus_message("r46_a.yaml#18")), "device.gptq_exllama_modules_offloaded",
                 ["device map `cpu`"])
    # GPT-2's Conv1D layers, which transformers of mid-2023 could not quantize
    assert_names(explain_paste(corpus_message("r46_a.yaml#5")), "other.bnb_cpu_library_loaded",
                 ["no linear modules", "gpt2", "#24504"])
    # a per-tensor observer given a per-channel scheme; torch 1.13's own symmetric per-channel observers did so
    assert_names(explain_paste(corpus_message("r46_a.yaml#12")), "other.observer_qscheme_unsupported",
                 ["PerChannelMinMaxObserver", "pytorch/pytorch#85862"])
    # a float64 scale from NumPy is the reported trigger
    assert_names(explain_paste(corpus_message("r46_a.yaml#13")), "dtype.cpu_kernel_dynamic_casting",
                 ["float64", "fake_quantize_per_channel_affine"])


@pytest.mark.parametrize("relative, rule, values", [
    ("fixtures/dtype/dynamic_quant_linear_quint8.py", "dtype.dynamic_quant_linear_dtype", ["torch.quint8", "qint8"]),
    ("fixtures/other/observer_qscheme_per_channel.py", "other.observer_qscheme_unsupported",
     ["MinMaxObserver", "torch.per_tensor_symmetric"]),
])
def test_live_errors_are_explained(relative, rule, values):
    assert_names(explain_fixture(relative), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # transformers' 8-bit quantizer (mrwu-mac/ControlMLLM#21, bitsandbytes-foundation/bitsandbytes#1213)
    ("ImportError: Using `bitsandbytes` 8-bit quantization requires Accelerate: `pip install accelerate` and the "
     "latest version of bitsandbytes: `pip install -i https://pypi.org/simple/ bitsandbytes`",
     "other.bnb_quantization_unavailable", ["bitsandbytes 8-bit quantization", "accelerate", "torch.cuda.is_available()"]),
    # from_pretrained's own check, on a Mac (Bavest/fin-llama#1)
    ("  File \"/opt/homebrew/lib/python3.11/site-packages/transformers/modeling_utils.py\", line 2312, in from_pretrained\n"
     "    raise ImportError(\nImportError: Using `load_in_8bit=True` requires Accelerate: `pip install accelerate` and "
     "the latest version of bitsandbytes `pip install -i https://test.pypi.org/simple/ bitsandbytes` or pip install "
     "bitsandbytes`", "other.bnb_quantization_unavailable", ["`load_in_8bit=True`", "a Mac"]),
    # FastChat's GPTQ loading (lm-sys/FastChat#2459), a reward model in TRLX (vicgalle/zero-shot-reward-models#2)
    ("ValueError: Found modules on cpu/disk. Using Exllama backend requires all the modules to be on GPU.You can "
     "deactivate exllama backend by setting `disable_exllama=True` in the quantization config objec",
     "device.gptq_exllama_modules_offloaded", ["Exllama kernels", "`disable_exllama=True`"]),
    ("ValueError: Found modules on cpu/disk. Using Exllama or Exllamav2 backend requires all the modules to be on "
     "GPU.You can deactivate exllama backend by setting `disable_exllama=True` in the quantization config object",
     "device.gptq_exllama_modules_offloaded", ["Exllama or Exllamav2 kernels", 'device_map="auto"']),
    # auto-gptq 0.2's module path (AutoGPTQ/AutoGPTQ#190), a log with the file that logged it (PromtEngineer/localGPT#402)
    ("WARNING:auto_gptq.nn_modules.qlinear_old:CUDA extension not installed.", "other.autogptq_extension_not_installed",
     ["`qlinear_old` of auto_gptq", "autogptq_cuda_256"]),
    ("`2023-08-23 13:49:27,776 - WARNING - qlinear_old.py:16 - CUDA extension not installed.`",
     "other.autogptq_extension_not_installed", ["`qlinear_old`"]),
    # the title of AutoGPTQ/AutoGPTQ#375
    ("auto_gptq.nn_modules.qlinear.qlinear_cuda:CUDA extension not installed.", "other.autogptq_extension_not_installed",
     ["`qlinear_cuda` of auto_gptq"]),
    # bare lines after loading a GPTQ checkpoint (AutoGPTQ/AutoGPTQ#598)
    ("model_name = \"TheBloke/Mistral-7B-Instruct-v0.2-GPTQ\"\nmodel = AutoModelForCausalLM.from_pretrained(model_name,\n"
     "                                             device_map=\"auto\", # automatically figures out how to best use CPU + "
     "GPU for loading model\n                                             trust_remote_code=False, # prevents running "
     "custom model files on your machine\n                                             revision=\"main\") # which "
     "version of model to use in repo\n```\n\nCUDA extension not installed.\nCUDA extension not installed.",
     "other.autogptq_extension_not_installed", ["autogptq_cuda_64"]),
    # vLLM's Marlin check on DeepSeek-Coder-V2-Lite-AWQ on one GPU (vllm-project/vllm#9913), logged by a vLLM worker
    # (vllm-project/llm-compressor#54)
    ("ValueError: Weight input_size_per_partition = 10944 is not divisible by min_thread_k = 128. Consider reducing "
     "tensor_parallel_size or running with --quantization gptq.", "shape.marlin_shard_divisibility",
     ["10944", "85 x 128 + 64"]),
    ("(VllmWorkerProcess pid=14678) ERROR 08-05 23:29:38 multiproc_worker_utils.py:226] Exception in worker "
     "VllmWorkerProcess while processing method load_model: Weight input_size_per_partition = 7392 is not divisible by "
     "min_thread_k = 128., Traceback (most recent call last):", "shape.marlin_shard_divisibility",
     ["7392", "57 x 128 + 96"]),
    # TGI's Marlin repacking, with its frames (huggingface/text-generation-inference#2639)
    ("  File \"/opt/conda/lib/python3.11/site-packages/text_generation_server/layers/marlin/gptq.py\", line 220, in "
     "get_weights_row\n    return repack_gptq_for_marlin(\n  File \"/opt/conda/lib/python3.11/site-packages/"
     "text_generation_server/layers/marlin/gptq.py\", line 321, in repack_gptq_for_marlin\n    raise ValueError(\n"
     "ValueError: Number of input features (192) not divisible by group size (128)", "shape.marlin_shard_divisibility",
     ["TGI", "192"]),
    # a Volta GPU under bitsandbytes 0.38 (bitsandbytes-foundation/bitsandbytes#467)
    ("CUDA SETUP: CUDA runtime path found: /usr/local/cuda-11.8/targets/x86_64-linux/lib/libcudart.so\nCUDA SETUP: "
     "Highest compute capability among GPUs detected: 7.0\nCUDA SETUP: Detected CUDA version 118\n/home/work/.local/lib/"
     "python3.10/site-packages/bitsandbytes/cuda_setup/main.py:149: UserWarning: WARNING: Compute capability < 7.5 "
     "detected! Only slow 8-bit matmul is supported for your GPU!\n  warn(msg)", "device.bnb_int8_matmul_old_gpu",
     ["7.0", "7.5", "not an error"]),
    # the title of pytorch/pytorch#125004 (FX quantization with the model on CUDA)
    ("RuntimeError: Unsupported qscheme: per_channel_affine", "device.quantized_qscheme_unsupported",
     ["per_channel_affine", "convert_fx"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # vLLM's check for the non-Marlin AWQ/GPTQ kernels (QwenLM/Qwen3-VL#831) and Marlin 2:4's own (the title of
    # vllm-project/llm-compressor#54): other shape rules, not the Marlin shard check
    ("ValueError: The input size is not aligned with the quantized weight shape. This can be caused by too large tensor "
     "parallel size.", "shape.marlin_shard_divisibility"),
    ("RuntimeError: prob_m = 59136 is not divisible by thread_m = 512 when performing inference Qwen2-72B with marlin24",
     "shape.marlin_shard_divisibility"),
    # auto-gptq's Marlin layer (AutoGPTQ/AutoGPTQ#584)
    ("ValueError: `infeatures` must be divisible by 128 and `outfeatures` by 256.", "shape.marlin_shard_divisibility"),
    # the kernels' DLL that Windows cannot load: other.dll_load_failed's (PromtEngineer/localGPT#630)
    ("CUDA extension not installed.\nCUDA extension not installed.\nexllama_kernels not installed.\nTraceback (most "
     "recent call last):\n  File \"C:\\Users\\Owner\\Desktop\\Naby_AI\\ai.py\", line 18, in <module>\n    from auto_gptq "
     "import AutoGPTQForCausalLM, BaseQuantizeConfig\n  File \"C:\\Users\\Owner\\AppData\\Local\\Programs\\Python\\"
     "Python310\\lib\\site-packages\\auto_gptq\\nn_modules\\qlinear\\qlinear_exllama.py\", line 14, in <module>\n    "
     "from exllama_kernels import make_q4, q4_matmul\nImportError: DLL load failed while importing exllama_kernels: The "
     "specified module could not be found.", "other.autogptq_extension_not_installed"),
    # the warning alone, with nothing of a GPTQ model around it: too little to be sure whose it is (AutoGPTQ/AutoGPTQ#246)
    ("> WARNING:CUDA extension not installed. ", "other.autogptq_extension_not_installed"),
    # transformers' Trainer without accelerate: other.accelerate_required's (huggingface/transformers#23373)
    ("ImportError: Using the Trainer with PyTorch requires accelerate: Run pip install --upgrade accelerate",
     "other.bnb_quantization_unavailable"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_bitsandbytes_setup_source_in_a_traceback_is_no_warning():
    # bitsandbytes' setup code quoted in a NameError's traceback (opened round 41): not the warning it would log
    assert "device.bnb_int8_matmul_old_gpu" not in rules_of(corpus_message("r41_a.yaml#6"))


def test_a_bare_notice_without_a_gptq_model_is_left_alone():
    # the same two lines with nothing of GPTQ around them (AutoGPTQ/AutoGPTQ#598 without its code)
    assert rules_of("CUDA extension not installed.\nCUDA extension not installed.") == []
