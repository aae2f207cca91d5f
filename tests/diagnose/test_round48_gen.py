"""Round-48 wordings of text generation with transformers and its neighbours: generate()'s warnings and refusals
(right padding in a decoder-only batch, a missing attention mask, unused keyword arguments, a prompt longer than
max_length, a temperature that is not a positive float), a rope_scaling dict newer than the config code, model code
calling a KV-cache method transformers removed, AutoGPTQ's loader finding its CUDA kernels missing, and llama.cpp's
convert.py meeting a checkpoint its own unpickler cannot read. Each corpus message (verbatim from the opened rounds) is
claimed, from its text alone, by the right rule with the values it holds named the way the coverage judge reads them;
other wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r48_a.yaml#1", "other.hf_generate_decoder_only_right_padding", ["padding_side='left'"]),
    ("r48_a.yaml#2", "other.hf_generate_decoder_only_right_padding", ["padding_side='left'"]),
    ("r48_a.yaml#3", "other.hf_generate_decoder_only_right_padding", ["padding_side='left'"]),
    ("r48_a.yaml#4", "other.hf_rope_scaling_validation", ["rope_scaling", "llama3"]),
    ("r48_a.yaml#9", "data.llamacpp_convert_unpickle_class",
     ['convert.py", line 815', "_rebuild_meta_tensor_no_storage", "torch._utils"]),
    ("r48_a.yaml#10", "data.llamacpp_convert_unpickle_class",
     ["ShortStorage", 'convert.py", line 915', "TinyLlama-w4-g128_awq.pt"]),
    ("r48_a.yaml#17", "other.autogptq_extension_not_installed", ["auto_gptq", "BUILD_CUDA_EXT"]),
    ("r35_c.yaml#17", "other.autogptq_extension_not_installed", ["auto_gptq", "BUILD_CUDA_EXT"]),
    ("r48_a.yaml#18", "other.hf_cache_api_removed", ["DynamicCache", "get_max_length", "modeling_internvl_chat.py"]),
    ("r48_a.yaml#19", "other.hf_cache_api_removed", ["DynamicCache", "get_max_length", 'modeling_emu3.py", line 1287']),
    ("r48_a.yaml#20", "other.hf_cache_api_removed", ["DynamicCache", "get_max_length", "PhiPrompt"]),
    ("r48_a.yaml#21", "other.hf_generate_attention_mask_not_set", ["attention_mask", "50256"]),
    ("r48_a.yaml#22", "other.hf_generate_attention_mask_not_set", ["attention_mask", "eos_token_id"]),
    ("r48_a.yaml#23", "other.hf_generate_model_kwargs_unused", ["max_tokens"]),
    ("r48_a.yaml#24", "other.hf_generate_input_longer_than_max_length", ["31", "20", "max_new_tokens"]),
    ("r48_a.yaml#25", "other.hf_generate_input_longer_than_max_length", ["1211", "1000", "max_new_tokens"]),
    ("r48_a.yaml#26", "other.hf_generate_input_longer_than_max_length", ["1836", "1200", "config.max_length"]),
    ("r48_a.yaml#27", "other.hf_generate_temperature_not_positive",
     ['tutorials.py", line 25', "temperature", "0.0", "do_sample=False"]),
    ("r48_a.yaml#28", "other.hf_generate_temperature_not_positive", ["temperature", "2", 'logits_process.py", line 177']),
    ("r48_a.yaml#29", "other.hf_generate_temperature_not_positive", ["temperature", "0.0"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # MiniGPT-4's slider sent an int: the check is isinstance(temperature, float), not only > 0
    assert_names(explain_paste(corpus_message("r48_a.yaml#28")), "other.hf_generate_temperature_not_positive",
                 ["2 is an int, not a float"])
    # 0.0 asks for greedy decoding while sampling is on (the call, or the model's generation_config.json)
    assert_names(explain_paste(corpus_message("r48_a.yaml#27")), "other.hf_generate_temperature_not_positive",
                 ["greedy decoding", "generation_config.json", "tutorials.py:25"])
    # smol-course's call set no length: 20 is GenerationConfig's default max_length
    assert_names(explain_paste(corpus_message("r48_a.yaml#24")), "other.hf_generate_input_longer_than_max_length",
                 ["11 tokens over it", "default `max_length`"])
    # Llama 3.1's rope type, read by a transformers older than 4.43
    assert_names(explain_paste(corpus_message("r48_a.yaml#4")), "other.hf_rope_scaling_validation",
                 ["rope type `llama3`", "4.43"])
    # an AWQ file of packed int16 weights, not a model convert.py reads
    assert_names(explain_paste(corpus_message("r48_a.yaml#10")), "data.llamacpp_convert_unpickle_class",
                 ["int16", "quant_cache"])
    # meta tensors: shapes with no data, so the file holds no weights
    assert_names(explain_paste(corpus_message("r48_a.yaml#9")), "data.llamacpp_convert_unpickle_class",
                 ["meta device", "no weights"])
    # the model's own Emu3 code calls the removed method; get_seq_length is not its replacement
    assert_names(explain_paste(corpus_message("r48_a.yaml#19")), "other.hf_cache_api_removed",
                 ["past_key_values.get_max_length()", "get_max_cache_shape()", "4.49", "not the same thing"])
    # the Windows wheel note and the exllama switch-off, read from the same log
    assert_names(explain_paste(corpus_message("r48_a.yaml#17")), "other.autogptq_extension_not_installed",
                 ["Windows wheels", "disable_exllamav2"])
    # the DeepSpeed overflow lines of RLHF step 3 are loss scaling, not the failure
    assert_names(explain_paste(corpus_message("r48_a.yaml#3")), "other.hf_generate_decoder_only_right_padding",
                 ["not a failure"])


@pytest.mark.parametrize("text, rule, values", [
    # xinference passing FastGPT's temperature 0 through, backticks dropped (labring/FastGPT#2027)
    ("ValueError: temperature (=0) has to be a strictly positive float, otherwise your next token scores will be "
     "invalid.If you're looking for greedy decoding strategies, set `do_sample=False`.",
     "other.hf_generate_temperature_not_positive", ["temperature=0", "do_sample=False"]),
    # the message before transformers 4.33 (lxe/simple-llm-finetuner#14)
    ("ValueError: `temperature` has to be a strictly positive float, but is 0",
     "other.hf_generate_temperature_not_positive", ["temperature=0", "greedy decoding"]),
    # a tokenizer's token_type_ids handed on to a decoder-only model (run-llama/llama_index#13708)
    ("ValueError: The following `model_kwargs` are not used by the model: ['token_type_ids'] (note: typos in the "
     "generate arguments will also show up in this list)",
     "other.hf_generate_model_kwargs_unused", ["['token_type_ids']", "return_token_type_ids=False"]),
    # a typo (huggingface/tokenizers#1596)
    ("ValueError: The following `model_kwargs` are not used by the model: ['num_beans'] (note: typos in the generate "
     "arguments will also show up in this list)[06/Aug/2024 14:34:35]",
     "other.hf_generate_model_kwargs_unused", ["['num_beans']", "num_beams"]),
    # the warning's wording before the ValueError, advice naming max_new_tokens only (zai-org/ChatGLM-6B#83)
    ("Input length of input_ids is 2183, but `max_length` is set to 2048. This can lead to unexpected behavior. You "
     "should consider increasing `max_new_tokens`.",
     "other.hf_generate_input_longer_than_max_length", ["2183", "2048", "135 tokens over it", "max_new_tokens"]),
    # the prompt exactly as long as the limit (lllyasviel/Fooocus#2278)
    ("Input length of input_ids is 75, but `max_length` is set to 75. This can lead to unexpected behavior. You should "
     "consider increasing `max_new_tokens`.",
     "other.hf_generate_input_longer_than_max_length", ["75", "fills it"]),
    # autolabel's wrapper printing the error, wrapped by the console (refuel-ai/autolabel#776)
    ("Error generating from LLM: Input length of input_ids is 1658, but `max_length` is set to 20. This can lead to \n"
     "unexpected behavior. You should consider increasing `max_length` or, better yet, setting `max_new_tokens`.",
     "other.hf_generate_input_longer_than_max_length", ["1658", "default `max_length`"]),
    # bigcode-evaluation-harness, a word broken across lines and the length in bold (bigcode-project/bigcode-evaluation-harness#236)
    ("ValueError: Input length of input_ids is **1024**, but `max_length` is set to 1024. This can lead to unexpected "
     "behavior. You should consider incr\neasing `max_length` or, better yet, setting `max_new_tokens`.ValueError",
     "other.hf_generate_input_longer_than_max_length", ["1024", "fills it"]),
    # the notice naming the eos id used as pad (deepseek-ai/DeepSeek-Coder#112)
    ("The attention mask and the pad token id were not set. As a consequence, you may observe unexpected behavior. "
     "Please pass your input's `attention_mask` to obtain reliable results.\nSetting `pad_token_id` to `eos_token_id`:"
     "32021 for open-end generation.", "other.hf_generate_attention_mask_not_set", ["32021", "attention_mask"]),
    # quotes instead of backticks, and no "the" (X-PLUG/mPLUG-Owl#221)
    ("**'The attention mask and pad token id were not set. As a consequence, you may observe unexpected behavior. "
     "Please pass your input's attention mask to obtain reliable results. Setting 'pad_token_id' to 'eos_token_id':2 "
     "for open-end generation'**", "other.hf_generate_attention_mask_not_set", ["`eos_token_id` (2)"]),
    # a label in Chinese glued before the warning (zai-org/GLM-4#633)
    ("指令微调报错：A decoder-only architecture is being used, but right-padding was detected! For correct generation "
     "results, please set `padding_side='left'` when initializing the tokenizer.",
     "other.hf_generate_decoder_only_right_padding", ["padding_side='left'"]),
    # printed with the attention-mask notice: the right padding answers and names the missing mask (QwenLM/Qwen#63)
    ("user：Who are you?\nThe attention mask and the pad token id were not set. As a consequence, you may observe "
     "unexpected behavior. Please pass your input's `attention_mask` to obtain reliable results.\nSetting `pad_token_id` "
     "to `eos_token_id`:151643 for open-end generation.\nA decoder-only architecture is being used, but right-padding "
     "was detected! For correct generation results, please set `padding_side='left'` when initializing the tokenizer.\n"
     "assistant：A．", "other.hf_generate_decoder_only_right_padding", ["padding_side='left'", "`attention_mask`"]),
    # under torchrun, without the doubled "with" (foundation-model-stack/foundation-model-stack#384)
    ("[rank2]: ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`, got {'factor': "
     "8.0, 'low_freq_factor': 1.0, 'high_freq_factor': 4.0, 'original_max_position_embeddings': 8192, 'rope_type': "
     "'llama3'}", "other.hf_rope_scaling_validation", ["rope type `llama3`", "4.43"]),
    # the dict cut off (meta-llama/llama3#299)
    ("ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`",
     "other.hf_rope_scaling_validation", ["4.43"]),
    # Python's suggestion with it (deepseek-ai/DeepSeek-Coder-V2#81)
    ("AttributeError: 'DynamicCache' object has no attribute 'get_max_length'. Did you mean: 'get_seq_length'?",
     "other.hf_cache_api_removed", ["get_max_cache_shape()", "4.49", "not the same thing"]),
    # the older counter (oreilly-japan/hands-on-llm-ja#5)
    ("'DynamicCache' object has no attribute 'seen_tokens'", "other.hf_cache_api_removed", ["get_seq_length()"]),
    # a whole module pickled (ggml-org/llama.cpp#6071)
    ('Loading model file /mnt/d/Projects/fido-chat/latest-trained/merged.pt\n'
     'Traceback (most recent call last):\n'
     '  File "/home/samariddin/Projects/llama.cpp/convert.py", line 1486, in <module>\n'
     '    main()\n'
     '  File "/home/samariddin/Projects/llama.cpp/convert.py", line 1422, in main\n'
     '    model_plus = load_some_model(args.model)\n'
     '                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
     '  File "/home/samariddin/Projects/llama.cpp/convert.py", line 1289, in load_some_model\n'
     '    models_plus.append(lazy_load_file(path))\n'
     '                       ^^^^^^^^^^^^^^^^^^^^\n'
     '  File "/home/samariddin/Projects/llama.cpp/convert.py", line 904, in lazy_load_file\n'
     '    return lazy_load_torch_file(fp, path)\n'
     '           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
     '  File "/home/samariddin/Projects/llama.cpp/convert.py", line 860, in lazy_load_torch_file\n'
     '    model = unpickler.load()\n'
     '            ^^^^^^^^^^^^^^^^\n'
     '  File "/home/samariddin/Projects/llama.cpp/convert.py", line 849, in find_class\n'
     '    return self.CLASSES[(module, name)]\n'
     '           ~~~~~~~~~~~~^^^^^^^^^^^^^^^^\n'
     "KeyError: ('torch.nn.modules.sparse', 'Embedding')",
     "data.llamacpp_convert_unpickle_class", ["merged.pt", "torch.save(model)", "convert.py:849"]),
    # the loader's notice with the qlinear module's (AutoGPTQ/AutoGPTQ#249)
    ("Exllama kernel is not installed, reset disable_exllama to True. This may because you installed auto_gptq using a "
     "pre-build wheel on Windows, in which exllama_kernels are not compiled. To use exllama_kernels to further speedup "
     "inference, you can re-install auto_gptq from source.\nCUDA kernels for auto_gptq are not installed, this will "
     "result in very slow inference speed. This may because:\n1. You disabled CUDA extensions compilation by setting "
     "BUILD_CUDA_EXT=0 when install auto_gptq from source.\n2. You are using pytorch without CUDA support.\n3. CUDA and "
     "nvcc are not installed in your device.\nCUDA extension not installed.",
     "other.autogptq_extension_not_installed", ["BUILD_CUDA_EXT=0", "auto_gptq"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # GenerationConfig's warning for a temperature set while sampling is off (huggingface/transformers#36896)
    ("/path/to/.venv/lib/python3.12/site-packages/transformers/generation/configuration_utils.py:628: UserWarning: "
     "`do_sample` is set to `False`. However, `temperature` is set to `0.0` -- this flag is only used in sample-based "
     "generation modes. You should set `do_sample=True` or unset `temperature`. This was detected when initializing the "
     "generation config instance, which means the corresponding file may hold incorrect parameterization and should be "
     "fixed.", "other.hf_generate_temperature_not_positive"),
    # HfArgumentParser's leftover command-line arguments (tatsu-lab/stanford_alpaca#250)
    ("ValueError: Some specified arguments are not used by the HfArgumentParser: \n['--save_safetensors']",
     "other.hf_generate_model_kwargs_unused"),
    # generate()'s notice that both limits were set (EQ-bench/EQ-Bench#14)
    ("Both `max_new_tokens` (=60) and `max_length`(=1196) seem to have been set. `max_new_tokens` will take precedence. "
     "Please refer to the documentation for more information.", "other.hf_generate_input_longer_than_max_length"),
    # the pad-id notice alone (refuel-ai/autolabel#959)
    ("Setting `pad_token_id` to `eos_token_id`:128001 for open-end generation.", "other.hf_generate_attention_mask_not_set"),
    # the tokenizer without a pad token at all: data.tokenizer_no_pad_token's (DachengLi1/LongChat#31)
    ("ValueError: Asking to pad but the tokenizer does not have a padding token. Please select a token to use as "
     "`pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via "
     "`tokenizer.add_special_tokens({'pad_token': '[PAD]'})`.", "other.hf_generate_decoder_only_right_padding"),
    # MInference's own cache subclass (microsoft/MInference#207)
    ("AttributeError: 'DynamicCacheWithRepeat' object has no attribute 'key_cache'", "other.hf_cache_api_removed"),
    # the KeyError alone: nothing shows llama.cpp's unpickler (ggml-org/llama.cpp#1048)
    ("KeyError: ('torch', 'ByteStorage')", "data.llamacpp_convert_unpickle_class"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_the_exllama_switch_off_alone_stays_a_control():
    # AutoGPTQ's loader turning exllama off, without the CUDA-kernels notice (r34_c#19, a negative control)
    assert_left_alone(corpus_message("r34_c.yaml#19"), "*")
