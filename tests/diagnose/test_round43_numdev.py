"""Round-43 wordings for numerics and device (training logs that show nan or an exploding gradient norm without
raising: DPO trainers, ms-swift's GRPO, Optuna's failed trials, DeepSpeed's loss scaler, tensorboardX; torch.distributions
checks cut by the paste; fused optimizers off CUDA; bitsandbytes' paged optimizers): each corpus message (verbatim from
the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named the way the
coverage judge reads them; other wordings of the same families (from the threads cited) are claimed too, and near
misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r43_a.yaml#53", "numerics.tune_trial_nan", ["Trial 8", "nan"]),
    ("r43_a.yaml#68", "numerics.loss_nan_log", ["nan", "--lr=100000"]),
    ("r43_b.yaml#6", "numerics.sampling_parameter", ["log_std", 'runner.py", line 101']),
    ("r43_b.yaml#9", "numerics.distribution_invalid", ["(40, 921600)", 'torch_action_dist.py", line 239']),
    ("r43_b.yaml#10", "numerics.distribution_invalid", ['actor_critic.py", line 121', "loc"]),
    ("r43_b.yaml#51", "numerics.tensorboard_nonfinite", ["NaN", "Running_Training_Average_Rewards"]),
    ("r43_b.yaml#57", "numerics.amp_overflow_skip", ["4294967296", "2147483648", "loss_scaler.py:183"]),
    ("r43_c.yaml#27", "numerics.preference_log_nan", ["logits/chosen", "logits/rejected", "nan"]),
    ("r43_c.yaml#28", "numerics.preference_log_nan", ["loss/train", "grad_norm", "nan", "160768"]),
    ("r43_c.yaml#44", "numerics.grad_norm_log", ["2.3579876335958694e+17", "rollout_logprobs"]),
    ("r43_b.yaml#1", "device.mismatch", ["cuda:0", "cpu", "wrapper_CUDA_gather", 'categorical.py", line 127']),
    ("r43_b.yaml#28", "device.no_kernel_image", ["HYDRA_FULL_ERROR=1"]),
    ("r43_c.yaml#60", "device.fp16_requires_gpu", ["--fp16", "--fp16_full_eval", "CUDA"]),
    ("r43_c.yaml#62", "device.invalid_ordinal", ["invalid device ordinal", "pythonInterface.c"]),
    ("r43_c.yaml#78", "device.mps_fused_optimizer_dtype", ["float", "half"]),
    ("r43_c.yaml#80", "device.fused_optimizer_device", ["fused=True"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # a learning rate of 100000 on the command line is the cause, not a bad batch
    assert_names(explain_paste(corpus_message("r43_a.yaml#68")), "numerics.loss_nan_log", ["that learning rate is the cause"])
    # the user's printout shows the learned log_std is nan: a diverged update, not a negative std
    assert_names(explain_paste(corpus_message("r43_b.yaml#6")), "numerics.sampling_parameter", ["std is nan, not negative"])
    # loc of a Normal may be any real number: the cut message still means nan
    assert_names(explain_paste(corpus_message("r43_b.yaml#10")), "numerics.distribution_invalid",
                 ["the check fails only when it holds nan", "mean*0. + self.std"])
    # a running average of an empty list of episode rewards, not a diverged model
    assert_names(explain_paste(corpus_message("r43_b.yaml#51")), "numerics.tensorboard_nonfinite", ["np.mean([])"])
    # 2^32 is where DeepSpeed's scaler starts: calibration
    assert_names(explain_paste(corpus_message("r43_b.yaml#57")), "numerics.amp_overflow_skip",
                 ["calibrating", "4294967296 is 2^32"])
    # TRL's logits metric is a mean over an empty selection; the loss and log-probabilities are finite
    assert_names(explain_paste(corpus_message("r43_c.yaml#27")), "numerics.preference_log_nan",
                 ["`logits[loss_mask].mean()`", "huggingface/trl#3382"])
    # the first step's gradient was computed on the weights as loaded; every GRPO group had the same reward
    assert_names(explain_paste(corpus_message("r43_c.yaml#44")), "numerics.grad_norm_log",
                 ["the learning rate (1e-08) did not cause it", "frac_reward_zero_std 1.0"])
    # bitsandbytes 0.39's prefetch of the paged optimizers' managed memory
    diagnosis = explain_paste(corpus_message("r43_c.yaml#62"))
    assert_names(diagnosis, "device.invalid_ordinal", ["cprefetch", "concurrent managed access"])
    assert any("paged_adamw_32bit" in fix for fix in diagnosis.fixes)
    # torchtune's optimizer.fused=False
    diagnosis = explain_paste(corpus_message("r43_c.yaml#78"))
    assert any("optimizer.fused=False" in fix for fix in diagnosis.fixes)


@pytest.mark.parametrize("text, rule, values", [
    # Optuna's own logger (optuna/optuna#3779)
    ("[W 2022-07-11 14:25:17,841] Trial 2 failed, because the objective function returned nan.",
     "numerics.tune_trial_nan", ["Trial 2 failed", "nan"]),
    # the same torch.distributions check in issue titles, cut after the constraint (lupinjia/LeggedGym-Ex#12,
    # Alescontrela/AMP_for_hardware#1)
    ("ValueError: Expected parameter loc (Tensor of shape (4096, 12)) of distribution Normal(loc: torch.Size([4096, 12]), "
     "scale: torch.Size([4096, 12])) to satisfy the constraint Real(), but found invalid v",
     "numerics.distribution_invalid", ["Real()", "4096, 12", "holds nan"]),
    ("ValueError: Expected parameter loc (Tensor of shape (32880, 12)) of distribution Normal(loc: torch.Size([32880, 12]), "
     "scale: torch.Size([32880, 12])) to satisfy the constraint Real(), but found invali",
     "numerics.distribution_invalid", ["Real()", "32880, 12"]),
    # V-Max's logger prints the metric that was nan just after tensorboardX's warning (valeoai/V-Max#18)
    ("[04/06 23:20] - ep_rew_mean: 0.01750972680747509\n[04/06 23:20] - NaN or Inf found in input tensor.\n"
     "[04/06 23:20] - log_divergence: nan\n[04/06 23:20] - offroad: 0.0038910505827516317",
     "numerics.tensorboard_nonfinite", ["`log_divergence` = nan"]),
    # one DeepSpeed line high in the range, as an issue title (zai-org/CogVideo#233, where training recovered)
    ("[loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 67108864, "
     "reducing to 33554432", "numerics.amp_overflow_skip", ["67108864", "33554432", "loss_scaler.py:183", "calibrating"]),
    # the same user's earlier lines of the DPO reference trainer (eric-mitchell/direct-preference-optimization#42)
    ("★---> train stats after 160544 examples: {'rewards_train/chosen': 'nan', 'rewards_train/rejected': 'nan', "
     "'rewards_train/accuracies': '0', 'rewards_train/margins': 'nan', 'l  's0ogps_train/rejected': 'nan', "
     "'logps_train/chosen': 'nan', 'loss/train': 'nan', 'examples_per_second': '5.3297', 'grad_norm': 'nan', "
     "'counters/examples': 160544, 'counters/upog     2dates': 5017}",
     "numerics.preference_log_nan", ["loss/train", "160544", "5017 updates", "reference_dtype"]),
    # the flag the Trainer's check names, in another project (yangjianxin1/CLIP-Chinese#4)
    ("FP16 Mixed precision training with AMP or APEX (`--fp16`) and FP16 half precision evaluation (`--fp16_full_eval`) "
     "can only be used on CUDA devices.", "device.fp16_requires_gpu", ["`--fp16_full_eval`"]),
    # bitsandbytes' paged optimizers on Windows (jllllll/bitsandbytes-windows-webui#7) and WSL2
    # (bitsandbytes-foundation/bitsandbytes#425, its title)
    ("`Error invalid device ordinal at line 359 in file D:\\a\\bitsandbytes-windows-webui\\bitsandbytes-windows-webui\\"
     "csrc\\pythonInterface.c`", "device.invalid_ordinal", ["pythonInterface.c", "cprefetch"]),
    ("Error invalid device ordinal at line 359 in file /mnt/c/Users/qwopq/Downloads/qlora/bitsandbytes/csrc/"
     "pythonInterface.c #3", "device.invalid_ordinal", ["line 359", "pythonInterface.c"]),
    # torch 2.1-2.3's list of devices with fused kernels, on a Mac (jbarnes850/deepseek-r1-finetune#1)
    ("File \"/opt/homebrew/lib/python3.11/site-packages/torch/optim/adamw.py\", line 68, in __init__\n"
     "    raise RuntimeError(\"`fused=True` requires all the params to be floating point Tensors of \"\n"
     "RuntimeError: `fused=True` requires all the params to be floating point Tensors of supported devices: "
     "['cuda', 'xpu', 'privateuseone'].", "device.fused_optimizer_device", ["['cuda', 'xpu', 'privateuseone']"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


def test_a_complex_parameter_in_a_fused_optimizer_is_named():
    text = ("RuntimeError: `fused=True` requires all the params to be floating point Tensors of supported devices: "
            "['mps', 'cuda', 'xpu', 'hpu', 'cpu', 'mtia', 'privateuseone'] but torch.complex64 and cpu")
    assert_names(explain_paste(text), "device.fused_optimizer_device", ["torch.complex64 on cpu", "complex parameters"])


@pytest.mark.parametrize("text, not_rule", [
    # an objective that returned None (it failed before returning a value) is not a nan (optuna/optuna#2320)
    ("`[W 2021-02-05 19:14:13,487] Trial 0 failed, because the value None could not be cast to float.`",
     "numerics.tune_trial_nan"),
    # a GRPO run's first steps with a gradient norm in the millions: a control of the corpus
    (corpus_message("r4_b.yaml#52"), "numerics.grad_norm_log"),
    # apex's single line high in the range stays loss scaling at work (kenziyuliu/MS-G3D#9)
    ("Gradient overflow. Skipping step, loss scaler 0 reducing loss scale to 131072.0", "numerics.amp_overflow_skip"),
    # a TRL ORPO line where the loss, the log-probabilities and the gradient norm are nan: grad_norm_log's, not a
    # logits metric over an empty selection (huggingface/trl#1473)
    ("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 5.0000000000000004e-08, 'rewards/chosen': nan, "
     "'rewards/rejected': nan, 'rewards/accuracies': 0.0, 'rewards/margins': nan, 'logps/rejected': nan, "
     "'logps/chosen': nan, 'logits/rejected': nan, 'logits/chosen': nan, 'nll_loss': nan, 'log_odds_ratio': nan, "
     "'log_odds_chosen': nan, 'epoch': 0.0}", "numerics.preference_log_nan"),
    # Hydra's hint alone, as an issue title (torch-points3d/torch-points3d#692)
    ("Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.", "device.no_kernel_image"),
    # bitsandbytes' same check with another CUDA error is device.cuda_runtime_error's (tloen/alpaca-lora#320)
    ("Error invalid device function at line 508 in file /home/surfingtech/alpaca-lora-main/bitsandbytes-main/csrc/ops.cu",
     "device.invalid_ordinal"),
    # TensorRT-LLM's CFG kernel ends its own sentence with a full stop (cpp/tensorrt_llm/kernels/cfgKernels.h, as
    # anand-nv/TensorRT-LLM@20f9dd13 holds it)
    ("Unsupported data type for CFG. Only float and half are supported.", "device.mps_fused_optimizer_dtype"),
    # the capturable check of the same optimizers
    ("AssertionError: If capturable=True, params and state_steps must be on supported devices: "
     "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla'].", "device.fused_optimizer_device"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_a_plain_negative_std_is_not_read_as_a_nan_printout():
    # the error alone, as mujocolab/mjlab#291's title: no printout names a std parameter
    diagnosis = explain_paste("RuntimeError: normal expects all elements of std >= 0.0")
    assert diagnosis.rule == "numerics.sampling_parameter"
    assert "printout" not in diagnosis.summary

