"""Round-48 wordings of LLM loading and inference (accelerate's disk offload, GGUF files in transformers and llama.cpp,
exllama with offloaded modules, bitsandbytes' kernels, text-generation-inference's weights, sampling from inf/nan,
generate() past the model's context) and of notebook users (Colab's upgraded torch, the TorchScript tutorial on an old
torch, ImageFolder with a custom check, rank tags pasted in bold): each corpus message (verbatim from the opened rounds)
is claimed, from its text alone, by the right rule with the values it holds named the way the coverage judge reads
them; other wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed.
llama.cpp's own loading failure, a control, gets no PyTorch diagnosis at all, only the page that says whose it is."""

from __future__ import annotations

import io

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste

from explainer.cli.explain import explain_stream


CORPUS_CASES = [
    ("r48_a.yaml#33", "memory.accelerate_disk_offload", ["offload_folder", 'modeling_utils.py", line 3002', "safetensors"]),
    ("r48_a.yaml#34", "memory.accelerate_disk_offload", ["offload_folder", "safetensors"]),
    ("r48_a.yaml#36", "other.gguf_architecture_not_supported", ["chatglm"]),
    ("r48_a.yaml#46", "other.generation_exceeds_max_positions", ["8192"]),
    ("r48_a.yaml#47", "data.tokenizer_no_pad_token", ["construct_inputs", "pad_token"]),
    ("r48_a.yaml#58", "device.cuda_runtime_error", ["named symbol not found", "ops.cu", "libbitsandbytes_cuda118.dll"]),
    ("r48_a.yaml#60", "device.gptq_exllama_modules_offloaded", ["Exllamav2"]),
    ("r48_a.yaml#61", "data.tgi_weight_missing", ["model.layers.0.self_attn.q_proj.weight", 'weights.py", line 63']),
    ("r48_a.yaml#62", "numerics.nan_probabilities", ["beam_sample", "torch.multinomial", 'utils.py", line 3187']),
    ("r48_a.yaml#63", "numerics.nan_probabilities", ["inf", "nan"]),
    ("r48_c.yaml#12", "shape.conv_channels", ["[64, 11, 3, 3]", "672"]),
    ("r48_c.yaml#22", "data.imagefolder_no_files", ["cat", "fish"]),
    ("r48_c.yaml#27", "data.default_collate_type", ["PIL.Image.Image", "line 240"]),
    ("r48_c.yaml#47", "device.bf16_gpu_capability", ["bf16", "Ampere"]),
    ("r48_c.yaml#58", "compile.jit_script_module_instance_old_torch",
     ["MyDecisionGate()", "<ipython-input-74-1cad44501555>", "torch.jit.script"]),
    ("r48_c.yaml#70", "other.notebook_torch_version_assert", ["<ipython-input-2-53781d9d4dbc>", "1.7"]),
    ("r48_c.yaml#73", "dtype.kernel_scalar_type", ["Half", "Float", "rank0"]),
    ("r48_c.yaml#83", "data.torch_load_map_location_type", ['detection.py", line 61', "restore_location", "map_location"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_llama_cpps_loading_failure_gets_no_pytorch_diagnosis():
    # the control r48_a#54: llama.cpp's loader, the AssertionError of llama-cpp-python and its half-built object's
    # __del__ are one failure, and none of it is PyTorch's
    diagnoses = explain_stream(io.StringIO(corpus_message("r48_a.yaml#54")))
    assert diagnoses and all(d.rule is None for d in diagnoses)
    [page] = [d for d in diagnoses if d.runbook]
    assert page.runbook.endswith("other.not_pytorch_llamacpp_model_load.html")
    assert '46554747 is "GGUF"' in page.summary and "Llama.__del__" in page.summary


@pytest.mark.parametrize("text, fragment", [
    # a GGML v3 file given to llama-cpp-python 0.1.36 (abetlen/llama-cpp-python#446)
    ("error loading model: unknown (magic, version) combination: 67676a74, 00000003; is this really a GGML file?",
     "a GGML file"),
    # privateGPT's LlamaCppEmbeddings on a GGML file of another version (zylon-ai/private-gpt#153)
    ("error loading model: unknown (magic, version) combination: 67676a74, 00000002; is this really a GGML file?",
     "67676a74"),
])
def test_other_llama_cpp_loading_failures_are_llama_cpps(text, fragment):
    diagnoses = explain_stream(io.StringIO(text))
    assert diagnoses and all(d.rule is None for d in diagnoses)
    assert any(d.runbook.endswith("other.not_pytorch_llamacpp_model_load.html") and fragment in d.summary
               for d in diagnoses)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # the GGUF loader's architecture, named as the file declares it; vLLM and SGLang read configs through it
    assert_names(explain_paste(corpus_message("r48_a.yaml#36")), "other.gguf_architecture_not_supported",
                 ["`chatglm`", "vLLM"])
    # transformers asks for a folder only when the checkpoint is not safetensors
    assert_names(explain_paste(corpus_message("r48_a.yaml#33")), "memory.accelerate_disk_offload",
                 ["pip install safetensors"], text=" ".join(explain_paste(corpus_message("r48_a.yaml#33")).fixes))
    # a channels-last batch: the wrapped shape joined again, its last dimension the channels the layer wants
    assert_names(explain_paste(corpus_message("r48_c.yaml#12")), "shape.conv_channels",
                 ["input[1, 672, 672, 11]", "channels-last"])
    # no extension list: the dataset was built with is_valid_file
    assert_names(explain_paste(corpus_message("r48_c.yaml#22")), "data.imagefolder_no_files", ["is_valid_file"])
    # a PIL image needs a transform to a tensor
    assert_names(explain_paste(corpus_message("r48_c.yaml#27")), "data.default_collate_type",
                 ["ToTensor()", "collate.py:240 in collate"])
    # EasyOCR 1.0 kept gpu=True as the device on a machine without CUDA
    assert_names(explain_paste(corpus_message("r48_c.yaml#83")), "data.torch_load_map_location_type",
                 ["EasyOCR", "pull request #24"])
    # the TorchScript tutorial needs torch 1.2
    assert_names(explain_paste(corpus_message("r48_c.yaml#58")), "compile.jit_script_module_instance_old_torch",
                 ["torch 1.2"])
    # beam_sample is transformers' generate(): the model's logits were already non-finite
    assert_names(explain_paste(corpus_message("r48_a.yaml#62")), "numerics.nan_probabilities",
                 ["beam_sample (utils.py:3187)", "`generate()`"])


@pytest.mark.parametrize("text, rule, values", [
    # the full message, in bold and quotes (vicgalle/zero-shot-reward-models#2)
    ("**\"ValueError: Found modules on cpu/disk. Using Exllama or Exllamav2 backend requires all the modules to be on "
     "GPU.You can deactivate exllama backend by setting `disable_exllama=True` in the quantization config object\"**",
     "device.gptq_exllama_modules_offloaded", ["Exllamav2", "disable_exllama=True"]),
    # transformers' later wording of the GGUF check (huggingface/transformers#37736, ggml-org/llama.cpp#13157)
    ("ValueError: GGUF model with architecture deci is not supported yet.", "other.gguf_architecture_not_supported",
     ["deci"]),
    ("\"ValueError: GGUF model with architecture qwen3 is not supported yet.\"", "other.gguf_architecture_not_supported",
     ["qwen3", "GGUF_CONFIG_MAPPING"]),
    # the reminder retyped with a colon and a curly apostrophe (meta-llama/llama#953), and for other contexts
    # (mistralai/mistral-inference#132, JIA-Lab-research/LongLoRA#151, unslothai/unsloth#1016)
    ("This is a friendly reminder: the current text generation call will exceed the model’s predefined maximum "
     "length(4096). Depending on the model, you may observe exceptions, performance degradation, or nothing at all.",
     "other.generation_exceeds_max_positions", ["4096"]),
    ("This is a friendly reminder - the current text generation call will exceed the model's predefined maximum length "
     "(32768). Depending on the model, you may observe exceptions, performance degradation, or nothing at all.",
     "other.generation_exceeds_max_positions", ["32768", "max_new_tokens"]),
    ("This is a friendly reminder - the current text generation call will exceed the model's predefined maximum length "
     "(4096). Depending on the model, you may observe exceptions, performance degradation, or nothing at all.",
     "other.generation_exceeds_max_positions", ["4096"]),
    ("This is a friendly reminder - the current text generation call will exceed the model's predefined maximum length "
     "(8192). Depending on the model, you may observe exceptions, performance degradation, or nothing at all.",
     "other.generation_exceeds_max_positions", ["8192"]),
    # text-generation-inference's other missing tensors (huggingface/text-generation-inference#1020, #2270, #2509, #730)
    ("RuntimeError: weight model.layers.24.mlp.gate_proj.weight does not exist", "data.tgi_weight_missing",
     ["model.layers.24.mlp.gate_proj.weight", "--quantize gptq"]),
    ("RuntimeError: weight lm_head.weight does not exist", "data.tgi_weight_missing",
     ["lm_head.weight", "tie_word_embeddings"]),
    ("RuntimeError: weight model.embed_tokens.weight does not exist", "data.tgi_weight_missing",
     ["model.embed_tokens.weight", "consolidated.safetensors"]),
    ("RuntimeError: weight model.layers.30.mlp.up_proj.weight does not exist", "data.tgi_weight_missing",
     ["model.layers.30.mlp.up_proj.weight"]),
    # bitsandbytes' kernel lookup from another build (lllyasviel/stable-diffusion-webui-forge#1065)
    ("Error named symbol not found at line 90 in file D:\\a\\bitsandbytes\\bitsandbytes\\csrc\\ops.cu",
     "device.cuda_runtime_error", ["named symbol not found", "ops.cu"]),
    # a PIL image batched in the Lightning docs' example (Lightning-AI/pytorch-lightning#13791)
    ("TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class "
     "'PIL.Image.Image'>", "data.default_collate_type", ["PIL.Image.Image", "ToTensor()"]),
    # EasyOCR's same failure cut to its last frame (JaidedAI/EasyOCR#23)
    ("File \"/Users/yakalmar/anaconda3/lib/python3.6/site-packages/torch/serialization.py\", line 814, in "
     "restore_location\n    result = map_location(storage, location)\nTypeError: 'bool' object is not callable",
     "data.torch_load_map_location_type", ["bool", "restore_location"]),
    # a torch.device given to a torch that did not take one (Urinx/alphafold_pytorch#4)
    ("  File \"/scratch/domeemod/anaconda3/envs/pytorch_env/lib/python3.6/site-packages/torch/serialization.py\", line "
     "323, in restore_location\n    result = map_location(storage, location)\nTypeError: 'torch.Device' object is not "
     "callable", "data.torch_load_map_location_type", ["torch.Device", "str(device)"]),
    # the same Colab assert two years on, the cell as a markdown link (zymk9/Yet-Another-Anime-Segmenter#10)
    ("AssertionError                            Traceback (most recent call last)\n"
     "[<ipython-input-3-b2c30b26eecc>](https://localhost:8080/#) in <module>\n"
     "      3 # See https://detectron2.readthedocs.io/tutorials/install.html for instructions if you\n"
     "      4 # want to switch to an older version\n"
     "----> 5 assert torch.__version__.startswith(\"1.7\")\n"
     "      6 get_ipython().system('pip install detectron2 -f https://dl.fbaipublicfiles.com/detectron2/wheels/cu101/"
     "torch1.7/index.html')\n"
     "      7 clear_output()\n\n"
     "AssertionError:", "other.notebook_torch_version_assert", ["1.7", "detectron2"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_explained(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # vLLM's registry refusing a class name: not a GGUF file's architecture (Jiayi-Pan/TinyZero#88)
    ("ValueError: Model architectures ['Qwen2ForCausalLM'] are not supported for now.",
     "other.gguf_architecture_not_supported"),
    # a bool called elsewhere than torch.load's map_location (alibaba/Tora#16)
    ("TypeError: 'bool' object is not callable", "data.torch_load_map_location_type"),
    # inspect's refusal with no torch.jit.script call in the paste (pytorch/pytorch#24150)
    ("TypeError: MyCell_1(\n  (linear): Linear(in_features=4, out_features=4, bias=True)\n) is not a module, class, "
     "method, function, traceback, frame, or code object", "compile.jit_script_module_instance_old_torch"),
    # vLLM's refusal of a prompt longer than the context: an error of its own, not transformers' reminder
    # (QwenLM/Qwen3-Embedding#117)
    ("ValueError: The decoder prompt (length 8201) is longer than the maximum model length of 8192.",
     "other.generation_exceeds_max_positions"),
    # detectron2's own version check in its setup.py, not a notebook's assert (facebookresearch/phosa#5)
    ("File \"/tmp/pip-req-build-h5z6xwbr/setup.py\", line 15, in <module> assert torch_ver >= [1, 5], \"Requires PyTorch "
     ">= 1.5\" AssertionError: Req", "other.notebook_torch_version_assert"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
