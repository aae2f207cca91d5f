"""Round-11 'other' rules (quantized models moved or cast after loading, nvcc missing from a build's path, Python 2's
wording of a missing torch module, mmcv without CUDA ops, Intel MKL's loader, tiny-cuda-nn built for other GPUs,
DeepSpeed's CPU optimizer without its op), against real wordings as `explainer explain -` reads a paste."""

from __future__ import annotations

import pytest

from explainer.diagnose.explain import explain_text

from conftest import assert_names, corpus_message, explain_paste, raised, said


def _live(call) -> str:
    """The message a real Python call raises, as a traceback's last line prints it."""
    exc = raised(call)
    return f"{type(exc).__name__}: {exc}"


class FusedAdam:
    """Another optimizer object, without DeepSpeed's CPU op attribute."""


BNB_8BIT_TO = (
    '  File "/root/tools/spacexl/HunyuanVideo-Training/train_hunyuan_lora.py", line 619, in main\n'
    "    diffusion_model.to(device=device)\n"
    '  File "/root/miniconda3/envs/spacepxl/lib/python3.10/site-packages/diffusers/models/modeling_utils.py", line 1068, '
    "in to\n    raise ValueError(\n"
    "ValueError: `.to` is not supported for `8-bit` bitsandbytes models. Please use the model as it is, since the model "
    "has already been set to the correct devices and casted to the correct `dtype`.")

CPU_ADAM_DEL = (
    "Exception ignored in: <function DeepSpeedCPUAdam.__del__ at 0x7fe9ffe7dc60>\n"
    "Traceback (most recent call last):\n"
    '  File "/home/workplace/anaconda3/envs/deepseek/lib/python3.11/site-packages/deepspeed/ops/adam/cpu_adam.py", '
    "line 102, in __del__\n"
    "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'")


@pytest.mark.parametrize("message, rule, values", [
    # transformers / diffusers refusing to move or cast a quantized model
    (BNB_8BIT_TO, "other.quantized_model_move", ["`.to()`", "`8-bit` bitsandbytes models"]),
    # https://github.com/bytedance/Sa2VA/issues/74
    (corpus_message("r14_b.yaml#75"), "other.quantized_model_move", ["`.to()`", "`4-bit` or `8-bit` bitsandbytes models"]),
    ("ValueError: Casting a quantized model to a new `dtype` is unsupported. To set the dtype of unquantized layers, "
     "please use the `torch_dtype` argument when loading the model using `from_pretrained` or `from_single_file`",
     "other.quantized_model_move", ["dtype", "torch_dtype="]),
    ("ValueError: You are trying to call `.to('cuda')` on a pipeline that has models quantized with `bitsandbytes`. "
     "Your current `accelerate` installation does not support it. Please upgrade the installation.",
     "other.quantized_model_move", ["`pipe.to('cuda')`", "accelerate"]),
    # nvcc not where the build runs it: a CUDA_HOME holding a path list, a toolkit without a compiler
    ("  /bin/sh: 1: [path-to-my-cuda]/lib64:/bin/nvcc: not found", "other.nvcc_not_found",
     ["`[path-to-my-cuda]/lib64:/bin/nvcc`", "`[path-to-my-cuda]/lib64:`", "CUDA_HOME"]),
    # https://github.com/zhanghang1989/PyTorch-Encoding/issues/297 (runbooks/other/nvcc_not_found.md's example)
    ("/bin/sh: 1: :/usr/local/cuda/bin/nvcc: not found", "other.nvcc_not_found",
     ["`:/usr/local/cuda/bin/nvcc`", "`:/usr/local/cuda`"]),
    ("sh: 1: /usr/local/cuda/bin/nvcc: not found", "other.nvcc_not_found",
     ["`/usr/local/cuda/bin/nvcc`", "-runtime"]),
    ("build.sh: 11: build.sh: nvcc: not found", "other.nvcc_not_found", ["`nvcc`", "`build.sh`", "sudo"]),
    # excerpt of https://github.com/MVIG-SJTU/AlphaPose/issues/413 (runbooks/other/nvcc_not_found.md's example)
    ("OSError: The nvcc binary could not be located in your $PATH. Either add it to your path, or set $CUDAHOME",
     "other.nvcc_not_found", ["`$CUDAHOME`"]),
    ("unable to execute \"'/usr/local/cuda'/bin/nvcc\": No such file or directory\n"
     "error: command \"'/usr/local/cuda'/bin/nvcc\" failed with exit status 1", "other.nvcc_not_found",
     ["`'/usr/local/cuda'/bin/nvcc`", "quote characters"]),
    # https://github.com/zhaominyiz/RFDA-PyTorch/issues/7
    (corpus_message("r33_a.yaml#8"), "other.nvcc_not_found", ["`/usr/local/cuda/bin/nvcc`"]),
    # Python 2's unquoted wording of a torch module the installed torch lacks
    ("ImportError: No module named torch.utils.cpp_extension", "other.torch_attribute_missing",
     ["`torch.utils.cpp_extension`", "torch 0.4", "Python 2"]),
    # torch imported from its source tree: torch/__init__.py's dir(_C) after the failed `from torch._C import *`
    # https://github.com/ChestnutWYN/ACL2021-Novel-Slot-Detection/issues/2
    (corpus_message("r14_a.yaml#2"), "other.no_module_torch_c", ["`_C`", "source folder"]),
    # mmcv's per-device registry without CUDA kernels
    ("RuntimeError: ms_deform_attn_impl_forward: implementation for device cuda:1 not found.",
     "other.extension_not_compiled_gpu", ["`ms_deform_attn_impl_forward`", "`cuda:1`", "mmcv"]),
    # Intel MKL's loader
    ("Intel MKL FATAL ERROR: Cannot load libmkl_avx2.so or libmkl_def.so.", "other.mkl_fatal_error",
     ["`libmkl_avx2.so`", "`libmkl_def.so`", "conda"]),
    ("Intel MKL FATAL ERROR: Cannot load /home/ma/miniconda3/envs/lmdeploy/lib/python3.10/site-packages/torch/lib/"
     "libtorch_cpu.so.", "other.mkl_fatal_error", ["`/home/ma/miniconda3/envs/lmdeploy/lib/python3.10/site-packages/"
                                                   "torch/lib/libtorch_cpu.so`"]),
    # https://github.com/colmap/colmap/issues/3665
    ("INTEL MKL ERROR: /lib/x86_64-linux-gnu/libmkl_avx512.so: undefined symbol: mkl_sparse_optimize_bsr_trsm_i8.\n"
     "Intel MKL FATAL ERROR: Cannot load libmkl_avx512.so or libmkl_def.so.",
     "other.mkl_fatal_error", ["`mkl_sparse_optimize_bsr_trsm_i8`", "`/lib/x86_64-linux-gnu/libmkl_avx512.so`"]),
    # tiny-cuda-nn built for another GPU
    # excerpt of https://github.com/NVlabs/tiny-cuda-nn/issues/230 (fixtures/real/r34_a.yaml#4)
    ("OSError: Could not find compatible tinycudann extension for compute capability 75.",
     "other.tinycudann_arch_missing", ["compute capability 75", "TCNN_CUDA_ARCHITECTURES=75"]),
    # flash-attn's setup.py refusing an old nvcc, with torch's version printed after it
    # excerpt of https://github.com/zai-org/GLM-4/issues/235 (runbooks/other/extension_nvcc_too_old.md's example)
    ("      RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported "
     "version by running nvcc -V.\n\n      torch.__version__  = 2.3.1+cu121\n\n      [end of output]",
     "other.extension_nvcc_too_old", ["`FlashAttention`", "CUDA 11.6", "2.3.1+cu121", "nvcc -V"]),
    # torch.hub downloads that got no HTTP answer
    # https://github.com/cbh123/charl-e-original/issues/11 (runbooks/other/hub_download_network_error.md's example)
    ("`[2960] Failed to execute script 'txt2img' due to unhandled exception!\n"
     'File "kornia/feature/integrated.py", line 65, in LAFDescriptor File "kornia/feature/hardnet.py", line 66, in '
     '__init__ File "torch/hub.py", line 727, in load_state_dict_from_url File "torch/hub.py", line 593, in '
     'download_url_to_file File "urllib/request.py", line 216, in urlopen File "urllib/request.py", line 519, in open '
     'File "urllib/request.py", line 536, in _open File "urllib/request.py", line 496, in _call_chain File '
     '"urllib/request.py", line 1391, in https_open File "urllib/request.py", line 1351, in do_open '
     "urllib.error.URLError: <urlopen error [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get "
     "local issuer certificate (_ssl.c:997)>", "other.hub_download_network_error",
     ["`load_state_dict_from_url`", "CERTIFICATE_VERIFY_FAILED", "SSL_CERT_FILE"]),
    # DeepSpeed's CPU optimizer whose op did not build
    (CPU_ADAM_DEL, "other.deepspeed_cpu_op_not_built", ["`DeepSpeedCPUAdam`", "`ds_opt_adam`", "`cpu_adam`"]),
])
def test_diagnoses_name_the_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, text=said(diagnosis))


@pytest.mark.parametrize("message, rule", [
    # Python 3's bare missing torch, and a quoted name that is not torch's
    ("ModuleNotFoundError: No module named 'torch'", "other.torch_attribute_missing"),
    # excerpt of https://github.com/pytorch/pytorch/issues/5947 (fixtures/real/r31_a.yaml#71)
    ("ImportError: No module named torchvision", "other.torch_attribute_missing"),
    # mmcv ops on the CPU are a device question
    # (https://github.com/open-mmlab/mmflow/issues/293, runbooks/device/mmcv_op_device_impl.md's example)
    ("RuntimeError: correlation_forward_impl: implementation for device cpu not found.",
     "other.extension_not_compiled_gpu"),
    # a download that did not go through torch.hub
    # (https://github.com/thunlp/OpenAttack/issues/261, runbooks/other/prebuilt_wheel_download_failed.md)
    ("urllib.error.URLError: <urlopen error [Errno 110] Connection timed out>", "other.hub_download_network_error"),
    # a NameError of some other module's _C
    # excerpt of https://github.com/ChestnutWYN/ACL2021-Novel-Slot-Detection/issues/2 (fixtures/real/r14_a.yaml#2)
    ("NameError: name '_C' is not defined", "other.no_module_torch_c"),
    # other objects without an optimizer op
    (_live(lambda: FusedAdam().ds_opt_adam_x), "other.deepspeed_cpu_op_not_built"),
])
def test_near_misses_are_not_claimed_by_these_rules(message, rule):
    assert explain_text(message).rule != rule
