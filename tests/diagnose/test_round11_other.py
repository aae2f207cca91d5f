"""Round-11 'other' rules (quantized models moved or cast after loading, nvcc missing from a build's path, Python 2's
wording of a missing torch module, mmcv without CUDA ops, Intel MKL's loader, tiny-cuda-nn built for other GPUs,
DeepSpeed's CPU optimizer without its op), against real wordings as `explainer explain -` reads a paste."""

from __future__ import annotations

import pytest

from explainer.diagnose.explain import explain_text

from conftest import assert_names, explain_paste, said


BNB_8BIT_TO = (
    '  File "/root/tools/spacexl/HunyuanVideo-Training/train_hunyuan_lora.py", line 619, in main\n'
    "    diffusion_model.to(device=device)\n"
    '  File "/root/miniconda3/envs/spacepxl/lib/python3.10/site-packages/diffusers/models/modeling_utils.py", line 1068, '
    "in to\n    raise ValueError(\n"
    "ValueError: `.to` is not supported for `8-bit` bitsandbytes models. Please use the model as it is, since the model "
    "has already been set to the correct devices and casted to the correct `dtype`.")

NINJA_NVCC = (
    "RuntimeError: Error building extension 'enclib_gpu': [1/8] :/usr/local/cuda/bin/nvcc -DTORCH_EXTENSION_NAME="
    "enclib_gpu -c activation_kernel.cu -o activation_kernel.cuda.o\nFAILED: activation_kernel.cuda.o\n"
    "/bin/sh: 1: :/usr/local/cuda/bin/nvcc: not found\nninja: build stopped: subcommand failed.")

CPU_ADAM_DEL = (
    "Exception ignored in: <function DeepSpeedCPUAdam.__del__ at 0x7fe9ffe7dc60>\n"
    "Traceback (most recent call last):\n"
    '  File "/home/workplace/anaconda3/envs/deepseek/lib/python3.11/site-packages/deepspeed/ops/adam/cpu_adam.py", '
    "line 102, in __del__\n"
    "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'")


@pytest.mark.parametrize("message, rule, values", [
    # transformers / diffusers refusing to move or cast a quantized model
    (BNB_8BIT_TO, "other.quantized_model_move", ["`.to()`", "`8-bit` bitsandbytes models"]),
    ("ValueError: Calling `to()` is not supported for `4-bit` quantized models with the installed version of "
     "bitsandbytes. The current device is `cuda:0`. If you intended to move the model, please install bitsandbytes "
     ">= 0.43.2.", "other.quantized_model_move", ["`to()`", "`4-bit` quantized models", "0.43.2", "`cuda:0`"]),
    ("ValueError: You cannot cast a GPTQ model in a new `dtype`. Make sure to load the model using `from_pretrained` "
     "using the desired `dtype` by passing the correct `torch_dtype` argument.", "other.quantized_model_move",
     ["GPTQ", "dtype", "torch_dtype="]),
    ("ValueError: Casting a quantized model to a new `dtype` is unsupported. To set the dtype of unquantized layers, "
     "please use the `torch_dtype` argument when loading the model using `from_pretrained` or `from_single_file`",
     "other.quantized_model_move", ["dtype", "torch_dtype="]),
    ("ValueError: You are trying to call `.to('cuda')` on a pipeline that has models quantized with `bitsandbytes`. "
     "Your current `accelerate` installation does not support it. Please upgrade the installation.",
     "other.quantized_model_move", ["`pipe.to('cuda')`", "accelerate"]),
    # nvcc not where the build runs it: a CUDA_HOME holding a path list, a toolkit without a compiler
    ("  /bin/sh: 1: [path-to-my-cuda]/lib64:/bin/nvcc: not found", "other.nvcc_not_found",
     ["`[path-to-my-cuda]/lib64:/bin/nvcc`", "`[path-to-my-cuda]/lib64:`", "CUDA_HOME"]),
    (NINJA_NVCC, "other.nvcc_not_found", ["`:/usr/local/cuda/bin/nvcc`", "`:/usr/local/cuda`"]),
    ("sh: 1: /usr/local/cuda/bin/nvcc: not found", "other.nvcc_not_found",
     ["`/usr/local/cuda/bin/nvcc`", "-runtime"]),
    ("build.sh: 11: build.sh: nvcc: not found", "other.nvcc_not_found", ["`nvcc`", "`build.sh`", "sudo"]),
    ("OSError: The nvcc binary could not be located in your $PATH. Either add it to your path, or set $CUDAHOME",
     "other.nvcc_not_found", ["`$CUDAHOME`"]),
    ("unable to execute \"'/usr/local/cuda'/bin/nvcc\": No such file or directory\n"
     "error: command \"'/usr/local/cuda'/bin/nvcc\" failed with exit status 1", "other.nvcc_not_found",
     ["`'/usr/local/cuda'/bin/nvcc`", "quote characters"]),
    ("error: [Errno 2] No such file or directory: ':/usr/local/cuda/bin/nvcc'", "other.nvcc_not_found",
     ["`:/usr/local/cuda/bin/nvcc`", "`:/usr/local/cuda`"]),
    # Python 2's unquoted wording of a torch module the installed torch lacks
    ("ImportError: No module named torch.utils.cpp_extension", "other.torch_attribute_missing",
     ["`torch.utils.cpp_extension`", "torch 0.4", "Python 2"]),
    # torch imported from its source tree: torch/__init__.py's dir(_C) after the failed `from torch._C import *`
    ("---> 22 import torch\n\n/python/PROJ/torch/1.9.0-py37/exec/lib/torch/__init__.py in <module>()\n    227 \n"
     "--> 229 __all__ += [name for name in dir(_C)\n    230             if name[0] != '_' and\n\n"
     "NameError: name '_C' is not defined", "other.no_module_torch_c", ["`_C`", "source folder"]),
    # mmcv's per-device registry without CUDA kernels
    ("RuntimeError: ms_deform_attn_impl_forward: implementation for device cuda:1 not found.",
     "other.extension_not_compiled_gpu", ["`ms_deform_attn_impl_forward`", "`cuda:1`", "mmcv"]),
    # Intel MKL's loader
    ("Intel MKL FATAL ERROR: Cannot load libmkl_avx2.so or libmkl_def.so.", "other.mkl_fatal_error",
     ["`libmkl_avx2.so`", "`libmkl_def.so`", "conda"]),
    ("Intel MKL FATAL ERROR: Cannot load /home/ma/miniconda3/envs/lmdeploy/lib/python3.10/site-packages/torch/lib/"
     "libtorch_cpu.so.", "other.mkl_fatal_error", ["`/home/ma/miniconda3/envs/lmdeploy/lib/python3.10/site-packages/"
                                                   "torch/lib/libtorch_cpu.so`"]),
    ("INTEL MKL ERROR: /home/u/anaconda3/lib/libmkl_avx512.so.2: undefined symbol: mkl_sparse_optimize_bsr_trsm_i8.",
     "other.mkl_fatal_error", ["`mkl_sparse_optimize_bsr_trsm_i8`", "`/home/u/anaconda3/lib/libmkl_avx512.so.2`"]),
    # tiny-cuda-nn built for another GPU
    ("OSError: Could not find compatible tinycudann extension for compute capability 75.",
     "other.tinycudann_arch_missing", ["compute capability 75", "TCNN_CUDA_ARCHITECTURES=75"]),
    # flash-attn's setup.py refusing an old nvcc, with torch's version printed after it
    ("      RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported "
     "version by running nvcc -V.\n\n      torch.__version__  = 2.3.1+cu121\n\n      [end of output]",
     "other.extension_nvcc_too_old", ["`FlashAttention`", "CUDA 11.6", "2.3.1+cu121", "nvcc -V"]),
    # torch.hub downloads that got no HTTP answer
    ('  File "/opt/conda/lib/python3.10/site-packages/torch/hub.py", line 766, in load_state_dict_from_url\n'
     "    download_url_to_file(url, cached_file, hash_prefix, progress=progress)\n"
     "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>",
     "other.hub_download_network_error", ["`load_state_dict_from_url`", "`[Errno -3] Temporary failure in name "
                                         "resolution`", "DNS", "hub/checkpoints"]),
    ('File "torch/hub.py", line 593, in download_url_to_file File "urllib/request.py", line 1351, in do_open '
     "urllib.error.URLError: <urlopen error [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get "
     "local issuer certificate (_ssl.c:997)>", "other.hub_download_network_error",
     ["`download_url_to_file`", "CERTIFICATE_VERIFY_FAILED", "SSL_CERT_FILE"]),
    # DeepSpeed's CPU optimizer whose op did not build
    (CPU_ADAM_DEL, "other.deepspeed_cpu_op_not_built", ["`DeepSpeedCPUAdam`", "`ds_opt_adam`", "`cpu_adam`"]),
])
def test_diagnoses_name_the_values(message, rule, values):
    diagnosis = explain_paste(message)
    assert_names(diagnosis, rule, values, text=said(diagnosis))


@pytest.mark.parametrize("message, rule", [
    # a shell missing another program is not nvcc's
    ("/bin/sh: 1: gcc: not found", "other.nvcc_not_found"),
    ("sh: 1: nvcc-wrapper-config: not found", "other.nvcc_not_found"),
    # Python 3's bare missing torch, and a quoted name that is not torch's
    ("ModuleNotFoundError: No module named 'torch'", "other.torch_attribute_missing"),
    ("ImportError: No module named torchvision", "other.torch_attribute_missing"),
    # mmcv ops on the CPU are a device question
    ("RuntimeError: nms_impl: implementation for device cpu not found.", "other.extension_not_compiled_gpu"),
    # a download that did not go through torch.hub
    ("urllib.error.URLError: <urlopen error [Errno 111] Connection refused>", "other.hub_download_network_error"),
    # a NameError of some other module's _C
    ("NameError: name '_C' is not defined", "other.no_module_torch_c"),
    # a requirement that is not a build's toolkit check
    ("ValueError: FP8 is only supported on CUDA 11.8 and above", "other.extension_nvcc_too_old"),
    # other objects without an optimizer op
    ("AttributeError: 'FusedAdam' object has no attribute 'ds_opt_adam_x'", "other.deepspeed_cpu_op_not_built"),
])
def test_near_misses_are_not_claimed_by_these_rules(message, rule):
    assert explain_text(message).rule != rule
