"""Round 22 `other` rules (first half): opacus' Poisson-sampling check against gradient accumulation, nerfstudio's
tiny-cuda-nn fallback warning, old TH's randperm of no elements (a shuffled loader over an empty dataset), and wider
wordings of native_segfault (a training loop's progress bar cut by the crash), torchaudio_backend_unavailable (a paste
cut mid-word), uv_no_wheel_for_platform (GitHub's markdown link in the index) and extension_wheel_build_failed (the
commit pip built). Messages verbatim from the corpus and the threads cited; none of these libraries or torch releases
is installed here, so no live fixture."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message as corpus, explain_paste

CORPUS = [
    ("r22_b.yaml#15", "other.opacus_poisson_grad_accumulation", ["Poisson sampling", "`optimizer.step()`",
                                                                 "`p.grad_sample`"]),
    ("r22_b.yaml#39", "other.tcnn_slow_implementation", ["`HashEncoding`", "`tinycudann`"]),
    ("r22_a.yaml#75", "other.th_randperm_not_positive", ["THTensorMath.c:2247", "`torch.randperm(n)`", "empty"]),
    ("r22_a.yaml#49", "other.native_segfault", ["train_Ep_11", "11/56", "Segmentation fault (core dumped)"]),
    ("r22_b.yaml#20", "other.torchaudio_backend_unavailable", ["`soundfile`", "set_audio_backend"]),
    ("r22_a.yaml#32", "other.uv_no_wheel_for_platform", ["`torch==2.0.1`", "from https://pypi.org/simple/:"]),
    ("r22_b.yaml#42", "other.extension_wheel_build_failed", ["`tinycudann`", "c91138bcd4c6877c8d5e60e483c0581aafc70cce",
                                                             "https://github.com/NVlabs/tiny-cuda-nn/"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


# The same families in other threads' words.
PASTED = [
    # opacus 1.x's whole sentence (https://github.com/meta-pytorch/opacus/issues/320)
    ("ValueError: Poisson sampling is not compatible with grad accumulation. You need to call optimizer.step() after every "
     "forward/backward pass or consider using BatchMemoryManager", "other.opacus_poisson_grad_accumulation",
     ["`make_private(..., poisson_sampling=True)`"]),
    # nerfstudio's later wording, one line per module (https://github.com/nerfstudio-project/nerfstudio/issues/3133)
    ("WARNING: Using a slow implementation for the SHEncoding module. \n🏃 🏃 Install tcnn for speedups 🏃 🏃\n"
     "pip install git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch\n",
     "other.tcnn_slow_implementation", ["`SHEncoding`"]),
    # torch 0.3's build at another line (https://github.com/Kathrine94/EAST/issues/1)
    ("RuntimeError: invalid argument 1: must be strictly positive at /opt/conda/conda-bld/pytorch_1512386481460/work/torch/"
     "lib/TH/generic/THTensorMath.c:2184", "other.th_randperm_not_positive", ["THTensorMath.c:2184"]),
    # Pytorch-UNet's bar with its postfix, the shell's line under it (https://github.com/milesial/Pytorch-UNet/issues/193)
    ("Epoch 1/5:  11%|█         | 10/90 [00:01<00:08,  8.95img/s, loss (batch)=0.0278]\nsegmentation fault (core dumped)",
     "other.native_segfault", ["`Epoch 1/5`", "10/90", "tensorboard"]),
]


@pytest.mark.parametrize(("text", "rule", "values"), PASTED, ids=[f"{r}-{i}" for i, (_, r, _) in enumerate(PASTED)])
def test_other_wordings(text, rule, values):
    assert_names(explain_paste(text), rule, values)


NOT_CLAIMED = [
    # Lua Torch's randperm: another framework (https://github.com/chsasank/plantvillage-challenge/issues/2)
    ("/home/rzai/torch/install/bin/luajit: bad argument #1 to '?' (must be strictly positive at "
     "/tmp/luarocks_torch-scm-1-2561/torch7/lib/TH/generic/THTensorMath.c:1467)", "other.th_randperm_not_positive"),
    # another library's slow path (https://github.com/qihao067/CrossFlow/issues/18)
    ("/CrossFlow/libs/model/sigmoid/kernel.py:30: UserWarning: Using slower tdp_torch implementation for a tensor with "
     "shape torch.Size([1024])", "other.tcnn_slow_implementation"),
    # opacus' missing per-sample gradient is another family (https://github.com/meta-pytorch/opacus/issues/469)
    ("ValueError: Per sample gradient is not initialized. Not updated in backward pass?",
     "other.opacus_poisson_grad_accumulation"),
    # Isaac Gym's crash under its own log lines (https://github.com/GuyTevet/CLoSD/issues/3); round 26 claims the bare
    # shell line only when it is the whole paste
    ("Unhandled descriptor set 433\nUnhandled descriptor set -1692386480\nSegmentation fault (core dumped)",
     "other.native_segfault"),
    # pip's resolver message stays a negative control (fixtures/real/README.md, round 14)
    ("ERROR: Could not find a version that satisfies the requirement torch==2.5.1 (from versions: 2.6.0, 2.7.0, 2.7.1, "
     "2.8.0)\nERROR: No matching distribution found for torch==2.5.1", "*"),
]


@pytest.mark.parametrize(("text", "rule"), NOT_CLAIMED, ids=[f"{r}-{i}" for i, (_, r) in enumerate(NOT_CLAIMED)])
def test_near_misses_are_left_to_others(text, rule):
    assert_left_alone(text, rule)
