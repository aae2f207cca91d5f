"""Round-43 wordings for other, dtype and shape (multi-agent RL on MAPPO, RLlib and MARLlib; TorchRL, tensordict and
verl; TRL's SFT and GRPO trainers; xtuner's command line on mmengine; torchmetrics and pytorch-ignite metrics; FSDP2,
RKLLM-Toolkit and a C++ extension's link step): each corpus message (verbatim from the opened rounds) is claimed, from
its text alone, by the right rule with the values it holds named the way the coverage judge reads them; other wordings
of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r43_b.yaml#61", "other.mappo_recurrent_policy_check",
     ['train_mpe.py", line 71', "use_recurrent_policy", "use_naive_recurrent_policy"]),
    ("r43_b.yaml#62", "other.rllib_policy_spec_space_missing", ["action_space", "shared_policy", 'rollout_worker.py", line 1486']),
    ("r43_b.yaml#63", "distributed.ray_worker_died", ["RolloutWorker", "policy_map", "actor.py:746"]),
    ("r43_b.yaml#66", "other.extension_build_failed", ["gymtorch", "-ltorch_python", 'cpp_extension.py", line 2105']),
    ("r43_b.yaml#75", "other.tensordict_key_not_found", ["done", "_data", "index"]),
    ("r43_b.yaml#76", "other.tensordict_module_out_keys", ["3", "out_keys", "logits"]),
    ("r43_b.yaml#77", "other.tensordict_key_not_found", ["tool_output_masks"]),
    ("r43_c.yaml#16", "other.trl_sft_no_text_field", ["packing=False", "dataset_text_field", "formatting_func"]),
    ("r43_c.yaml#17", "other.trl_sft_no_text_field", ["packing=False", "SFTTrainer/SFTConfig", "dataset_text_field"]),
    ("r43_c.yaml#22", "other.trl_grpo_generations_divisibility", ["7", "8", 'grpo.py", line 174', "[7]"]),
    ("r43_c.yaml#23", "other.trl_grpo_generations_divisibility", ["1", "[]"]),
    ("r43_c.yaml#48", "other.numpy_ndarray_repr_unavailable", ["ndarray.__repr__"]),
    ("r43_c.yaml#49", "other.openmmlab_already_registered", ["Adafactor", "torch.optim"]),
    ("r43_a.yaml#79", "dtype.torchmetrics_target_not_integer", ['checks.py", line 47', "_basic_input_validation"]),
    ("r43_c.yaml#26", "dtype.fsdp_uniform_dtype", ["torch.bfloat16", "torch.float32"]),
    ("r43_c.yaml#59", "dtype.matmul_mixed", ["F.linear", "self", "mat2"]),
    ("r43_c.yaml#71", "dtype.matmul_mixed", ["float", "c10::BFloat16", "cuda:0"]),
    ("r43_a.yaml#83", "shape.ignite_metric_shape", ["y_pred"]),
    ("r43_a.yaml#84", "shape.ignite_metric_shape", ["torch.Size([5, 1])", "y_pred"]),
    ("r43_b.yaml#13", "shape.tensordict_batch_size", ["[2048]", "[2048, 4]", '_torch_func.py", line 713']),
    ("r43_b.yaml#80", "shape.conv_channels", ['networks.py", line 203', "conv1"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # on-policy's --use_recurrent_policy is a store_false flag: mappo needs it passed
    assert_names(explain_paste(corpus_message("r43_b.yaml#61")), "other.mappo_recurrent_policy_check",
                 ["action='store_false'", "`algo is mappo`"])
    # the AttributeError printed before Ray's creation-task line is a consequence of the worker's failed constructor
    assert_names(explain_paste(corpus_message("r43_b.yaml#63")), "distributed.ray_worker_died",
                 ["is a consequence, not a second bug", "ray::MAPPOTrainer.__init__()"])
    # the ninja build failed at the link step, not at a compiler error
    assert_names(explain_paste(corpus_message("r43_b.yaml#66")), "other.extension_build_failed",
                 ["the link of `gymtorch`", "libtorch_python.so", "torch/lib"])
    # '_data' and 'index' are a replay buffer's wrapper, not the sample (pytorch/rl#1163)
    assert_names(explain_paste(corpus_message("r43_b.yaml#75")), "other.tensordict_key_not_found",
                 ["('next', 'done')", "pytorch/rl#1165"])
    # num_generations=1 is refused although 1 divides any batch: the message misleads (huggingface/trl#3199)
    assert_names(explain_paste(corpus_message("r43_c.yaml#23")), "other.trl_grpo_generations_divisibility",
                 ["misleading", "huggingface/trl#3199"])
    # 7 processes of 1 completion hold no group of 8
    assert_names(explain_paste(corpus_message("r43_c.yaml#22")), "other.trl_grpo_generations_divisibility",
                 ["= 7 completion(s)", "a remainder of 7"])
    # xtuner's CLI swallowed the exceptions; torch 2.5's own Adafactor clashes with mmengine's registration
    assert_names(explain_paste(corpus_message("r43_c.yaml#48")), "other.numpy_ndarray_repr_unavailable",
                 ["xtuner's command line", "`numpy._core.arrayprint`"])
    diagnosis = explain_paste(corpus_message("r43_c.yaml#49"))
    assert_names(diagnosis, "other.openmmlab_already_registered",
                 ["torch 2.5", "open-mmlab/mmengine#1600", "`torch_Adafactor`"], " ".join([diagnosis.summary, *diagnosis.fixes]))
    # FSDP2's parameter group, not FSDP1's flat parameter
    assert_names(explain_paste(corpus_message("r43_c.yaml#26")), "dtype.fsdp_uniform_dtype", ["`fully_shard`"])
    # addmm's self is the bias
    assert_names(explain_paste(corpus_message("r43_c.yaml#59")), "dtype.matmul_mixed", ["`self and mat2`", "the bias"])
    # both ignite shapes equal: no class dimension in y_pred
    assert_names(explain_paste(corpus_message("r43_a.yaml#84")), "shape.ignite_metric_shape", ["ConfusionMatrix"])
    # the paste was cut inside the convolution's own check
    assert_names(explain_paste(corpus_message("r43_b.yaml#80")), "shape.conv_channels",
                 ["The paste ends in the middle of the error message", "'RuntimeError: Given grou'"])


@pytest.mark.parametrize("text, rule, values", [
    # the same assert wrapped over two lines in train_smac.py (marlbenchmark/on-policy#3, #97)
    ("```\nenv is StarCraft2, map is corridor, algo is mappo, exp is mlp, max seed is 1\nseed is 1:\nTraceback (most recent "
     "call last):\n  File \"train/train_smac.py\", line 175, in <module>\n    main(sys.argv[1:])\n  File \"train/train_smac.py"
     "\", line 82, in main\n    \"check recurrent policy!\")\nAssertionError: check recurrent policy!\n```",
     "other.mappo_recurrent_policy_check", ["train_smac.py:82", "--use_recurrent_policy", "`algo is mappo`"]),
    ("Traceback (most recent call last):\n  File \"../train/train_smac.py\", line 260, in <module>\n    main(sys.argv[1:])\n"
     "  File \"../train/train_smac.py\", line 138, in main\n    \"check recurrent policy!\")\nAssertionError: check recurrent "
     "policy!", "other.mappo_recurrent_policy_check", ["train_smac.py:138", "rmappo"]),
    # the observation space's half of RLlib's check (ray-project/ray#58183)
    ("ValueError: `observation_space` not provided in PolicySpec for shared_policy and env does not have an observation "
     "space OR no spaces received from other workers' env(s) OR no `observation_space` specified in config!",
     "other.rllib_policy_spec_space_missing", ["`observation_space`", "`shared_policy`"]),
    # a CUDA library the link step cannot find, quoted on one line (lava-nc/lava-dl#14)
    ("> RuntimeError: Error building extension 'dynamics': [1/1] c++ leaky_integrator.cuda.o -shared -L/home/rescue/"
     "anaconda3/envs/lavaEnv/lib/python3.9/site-packages/torch/lib -lc10 -lc10_cuda -ltorch_cpu -ltorch_cuda -ltorch "
     "-ltorch_python -L/home/rescue/anaconda3/lib64 -lcudart -o dynamics.so FAILED: dynamics.so c++ leaky_integrator.cuda.o "
     "-shared -L/home/rescue/anaconda3/envs/lavaEnv/lib/python3.9/site-packages/torch/lib -lc10 -lc10_cuda -ltorch_cpu "
     "-ltorch_cuda -ltorch -ltorch_python -L/home/rescue/anaconda3/lib64 -lcudart -o dynamics.so /usr/bin/ld: cannot find "
     "-lcudart collect2: error: ld returned 1 exit status ninja: build stopped: subcommand failed.",
     "other.extension_build_failed", ["`dynamics`", "`-lcudart`", "CUDA_HOME"]),
    # trl before 0.9, a ConstantLengthDataset without packing (huggingface/trl#434)
    ("ValueError: You passed `packing=False` to the SFTTrainer, but you didn't pass a `dataset_text_field` or "
     "`formatting_func` argument.", "other.trl_sft_no_text_field", ["`packing=False`", "`ConstantLengthDataset`"]),
    # GRPO's check with one process of one completion and with num_generations=1 (huggingface/trl#2858, PR #3199)
    ("`ValueError: The global train batch size (1 x 1) must be evenly divisible by the number of generations per prompt "
     "(8). Given the current train batch size, the valid values for the number of generations are: [].`",
     "other.trl_grpo_generations_divisibility", ["1 process(es) x per_device_train_batch_size 1", "[]", "must grow"]),
    ("`ValueError: The global train batch size (1 x 4) must be evenly divisible by the number of generations per prompt "
     "(1). Given the current train batch size, the valid values for the number of generations are: [2, 4].`",
     "other.trl_grpo_generations_divisibility", ["num_generations=1", "[2, 4]"]),
    # numpy's repr failure raised directly (zyddnys/manga-image-translator#775)
    ("RuntimeError: Unable to configure default ndarray.__repr__", "other.numpy_ndarray_repr_unavailable",
     ["`_core/` beside `core/`"]),
    # mmengine's own KeyError with torch 2.5 (open-mmlab/mmengine#1609)
    ("KeyError: 'Adafactor is already registered in optimizer at torch.optim'", "other.openmmlab_already_registered",
     ["`torch.optim.Adafactor`", "open-mmlab/mmengine#1600"]),
    # torchmetrics' check without its frame, and the task-specific wording of 0.11+ (Spijkervet/CLMR#16, ML4GLand/EUGENe#46)
    ("ValueError: The `target` has to be an integer tensor.", "dtype.torchmetrics_target_not_integer",
     ["integer tensor", "target.int()"]),
    ("ValueError: Expected argument `target` to be an int or long tensor, but got tensor with dtype torch.float32",
     "dtype.torchmetrics_target_not_integer", ["(torch.float32)"]),
    # FSDP2 under LoRA, the title of modelscope/twinkle#182
    ("FSDP2训练LoRA报错FSDP expects uniform original parameter dtype but got {torch.bfloat16, torch.float32}",
     "dtype.fsdp_uniform_dtype", ["torch.bfloat16 and torch.float32", "LoRA adapters"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # a script's bare assert on its data (PlayVoice/whisper-vits-svc#164): no MAPPO flags
    ("Traceback (most recent call last):\n  File \"D:\\4399TMD\\python\\Project\\so-vits-svc-5.0-bigvgan-mix-v2\\vits_extend"
     "\\stft.py\", line 81, in mel_spectrogram\n    assert(torch.min(y.data) >= -1)\n           ^^^^^^^^^^^^^^^^^^^^^^^\n"
     "AssertionError", "other.mappo_recurrent_policy_check"),
    # rllab's EnvSpec without spaces (rll/rllab#125): not RLlib's PolicySpec
    ("AttributeError: 'EnvSpec' object has no attribute 'action_space'", "other.rllib_policy_spec_space_missing"),
    # a task's own exception re-raised by ray.get (ray-project/ray#43137): other.ray_task_error's
    ("ray.exceptions.RayTaskError(AttributeError): ray::TrainALL.train() (pid=35968, ip=127.0.0.1, actor_id="
     "a40ed1244b3633a795d5b82f01000000, repr=<__main__.TrainALL object at 0x000001E6F5BBE4F0>)", "distributed.ray_worker_died"),
    # a link failure of another project's extension, built with setuptools (matpow2/cuwo#151)
    ("/usr/bin/ld: cannot find -ltgen\ncollect2: ld returned 1 exit status\nerror: command 'g++' failed with exit status 1",
     "other.extension_build_failed"),
    # a plain dict's KeyError (ifzhang/FairMOT#242)
    ("KeyError: 'dense_wh_mask'", "other.tensordict_key_not_found"),
    # SFTTrainer's note on neftune_noise_alpha, in the same CI log (superduper-io/superduper#2082)
    ("You passed a `neftune_noise_alpha` argument to the SFTTrainer, the value you passed will override the one in the "
     "`TrainingArguments`.", "other.trl_sft_no_text_field"),
    # DeepSpeed's batch arithmetic (OpenRLHF/OpenRLHF#346)
    ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size 256 != 2 * 18 * 7", "other.trl_grpo_generations_divisibility"),
    # a misspelt NumPy name (The-OpenROAD-Project/OpenROAD-flow-scripts#1485)
    ("AttributeError: module 'numpy' has no attribute 'adarray'. Did you mean: 'asarray'?",
     "other.numpy_ndarray_repr_unavailable"),
    # the loss's side of the torchmetrics mix-up (Lightning-AI/torchmetrics#1367)
    ("RuntimeError: result type Float can't be cast to the desired output type Long", "dtype.torchmetrics_target_not_integer"),
    # FSDP1's mixed-precision assertion (mosaicml/composer PR #1925)
    ("Expects full precision but got torch.float32", "dtype.fsdp_uniform_dtype"),
    # torchmetrics' own shape rule (open-edge-platform/anomalib#389)
    ("ValueError: Either `preds` and `target` both should have the (same) shape (N, ...), or `target` should be (N, ...) "
     "and `preds` should be (N, C, ...).", "shape.ignite_metric_shape"),
    # stacking plain tensors of unequal sizes (taishan1994/pytorch_triple_extraction#21)
    ("RuntimeError: stack expects each tensor to be equal size, but got [22] at entry 0 and [106] at entry 1",
     "shape.tensordict_batch_size"),
    # the whole convolution groups check, not cut (Gumpest/YOLOv5-Multibackbone-Compression#57): shape.conv_arguments'
    ("RuntimeError: Given groups=1, expected weight to be at least 1 at dimension 0, but got weight of size [0, 32, 1, 1] "
     "instead", "shape.conv_channels"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_a_whole_channel_message_is_not_read_as_cut():
    # (JonasGeiping/data-poisoning#3): the full wording keeps its own summary
    diagnosis = explain_paste("RuntimeError: Given groups=1, weight of size [64, 3, 3, 3], expected input[128, 1, 28, 28] "
                              "to have 3 channels, but got 1 channel instead")
    assert diagnosis.rule == "shape.conv_channels"
    assert "The paste ends in the middle" not in diagnosis.summary
