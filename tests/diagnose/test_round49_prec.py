"""Round-49 wordings of mixed precision in libraries and compilers (Lightning's precision and amp_level options, DeepSpeed
precision, ONNX and TensorRT fp16, torch._scaled_mm, DTensor sharding strategies, xFormers and flash-attention kernels,
cpm_kernels' cuBLASLt, ptxas, 32-bit index math, NaN losses in logs): each corpus message (verbatim from the opened
rounds) is claimed, from its text alone, by the right rule with the values it holds named the way the coverage judge
reads them; other wordings of the same families (from the threads cited) are claimed too, and near misses stay
unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r49_a.yaml#43", "other.lightning_deepspeed_precision", ["bf16-true", "DeepSpeed"]),
    ("r49_a.yaml#44", "compile.fake_impl_missing", ["c10d.allreduce_.default", "inductor"]),
    ("r49_a.yaml#46", "dtype.inplace_abn_param_dtype", ["inplace_abn.cpp:60", "functions.py"]),
    ("r49_a.yaml#54", "compile.ort_model_load", ["tensor(float16)", "/model/decoder/decoder/layers.0/norm1/Cast"]),
    ("r49_a.yaml#55", "distributed.dtensor_op_no_sharding_strategy", ["aten._is_any_true.default"]),
    ("r49_a.yaml#56", "shape.scaled_mm_dims_multiple_of_16", ["32x8", "rank1"]),
    ("r49_a.yaml#58", "other.lightning_amp_level_without_apex", ["O1", "apex"]),
    ("r49_a.yaml#59", "other.lightning_amp_level_without_apex", ["O1", "apex"]),
    ("r49_a.yaml#69", "other.xformers_no_operator", ["memory_efficient_attention_forward", "ckF", "torch.float32"]),
    ("r49_a.yaml#74", "numerics.loss_nan_log", ["train_loss", "val_loss"]),
    ("r49_a.yaml#79", "compile.tensorrt_strongly_typed_precision_flag", ["BuilderFlag::kFP16", "3"]),
    ("r49_c.yaml#18", "device.xformers_fa3_invalid_argument", ["flash_fwd_launch_template.h:188", "invalid argument"]),
    ("r49_c.yaml#23", "other.cpm_kernels_library_not_found", ["cublasLt"]),
    ("r49_c.yaml#24", "other.cpm_kernels_library_not_found", ["cudaLaunchKernel", "cudart64_65.dll", "cublasLt"]),
    ("r49_c.yaml#68", "shape.tensor_too_large_32bit_index", ["32-bit"]),
    ("r49_c.yaml#71", "compile.triton_ptxas_failed", ["ptxas", "4294967295", 'model_manager.py", line 121']),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # Lightning 2.0's DeepSpeed plugin knew no true-half mode; 2.1 added it
    assert_names(explain_paste(corpus_message("r49_a.yaml#43")), "other.lightning_deepspeed_precision", ["2.1", "bf16-mixed"])
    # an in-place collective reached Inductor as the c10d op
    assert_names(explain_paste(corpus_message("r49_a.yaml#44")), "compile.fake_impl_missing", ["functional collectives"])
    # ckF is the ROCm build's Composable Kernel attention
    assert_names(explain_paste(corpus_message("r49_a.yaml#69")), "other.xformers_no_operator", ["ROCm"])
    # nnU-Net's log: the validation loss is nan as well, so the weights are
    assert_names(explain_paste(corpus_message("r49_a.yaml#74")), "numerics.loss_nan_log", ["nnU-Net", "Pseudo dice"])
    # a float16 Cast against a float graph
    assert_names(explain_paste(corpus_message("r49_a.yaml#54")), "compile.ort_model_load", ["convert_float_to_float16"])
    # PhysX's CUDA 6.5 runtime, found first on PATH
    assert_names(explain_paste(corpus_message("r49_c.yaml#24")), "other.cpm_kernels_library_not_found", ["PhysX"])
    # the exit code is -1 on Windows; bf16 on a pre-Ampere GPU is the usual cause
    assert_names(explain_paste(corpus_message("r49_c.yaml#71")), "compile.triton_ptxas_failed", ["-1", "bfloat16"])


@pytest.mark.parametrize("text, rule, values", [
    # the same DeepSpeed refusal in lit-llama's finetuning script (Lightning-AI/lit-llama#216)
    ("ValueError: `precision='bf16-true')` is not supported in DeepSpeed. `precision` must be one of: ('32-true', "
     "'16-mixed', 'bf16-mixed').\n", "other.lightning_deepspeed_precision", ["bf16-true", "'32-true', '16-mixed', 'bf16-mixed'"]),
    # other operators without a DTensor strategy (pytorch/pytorch#145353, #147578; pytorch/torchtitan#3645)
    ("torch._dynamo.exc.InternalTorchDynamoError: NotImplementedError: Operator aten.as_strided.default does not have a "
     "sharding strategy registered.", "distributed.dtensor_op_no_sharding_strategy", ["aten.as_strided.default"]),
    ("`Operator aten.amax.default does not have a sharding strategy registered.`",
     "distributed.dtensor_op_no_sharding_strategy", ["aten.amax.default", "to_local"]),
    ("Operator torchtitan.deterministic_topk.default does not have a sharding strategy registered.",
     "distributed.dtensor_op_no_sharding_strategy", ["torchtitan.deterministic_topk.default", "register_sharding"]),
    # F.pad's replication padding of a huge mask (hustvl/BoxTeacher#11) and a convolution's bare check
    # (sunny2109/DSTNet-plus#4, aask1357/hilcodec#7)
    ("`  File \"/netscratch/rajashekar/SAIL/BoxTeacher_new/BoxTeacher-main/AdelaiDet/adet/utils/comm.py\", line 40, in "
     "aligned_bilinear\n    tensor = F.pad(\n  File \"/opt/conda/lib/python3.8/site-packages/torch/nn/functional.py\", line "
     "4194, in _pad\n    return torch._C._nn.replication_pad2d(input, pad)\nRuntimeError: input tensor must fit into 32-bit "
     "index math", "shape.tensor_too_large_32bit_index", ["replication_pad2d", "comm.py:40", "2**31"]),
    ("File \"DSTNet-plus/basicsr/archs/dstnetplus_deblur_arch.py\", line 238, in forward\n    out = F.conv2d(x, "
     "self.haar_weights, bias=None, stride=2, groups=self.channel_in) / 4.0\nRuntimeError: Expected "
     "canUse32BitIndexMath(input) && canUse32BitIndexMath(output) to be true, but got false.  (Could this error message be "
     "improved?  If so, please report an enhancement request to PyTorch.)", "shape.tensor_too_large_32bit_index",
     ["dstnetplus_deblur_arch.py:238", "canUse32BitIndexMath(input) && canUse32BitIndexMath(output)"]),
    ("[rank0]: RuntimeError: Expected canUse32BitIndexMath(input) && canUse32BitIndexMath(output) to be true, but got "
     "false. ", "shape.tensor_too_large_32bit_index", ["32-bit"]),
    # the same cpm_kernels failure from Kolors' ComfyUI nodes (kijai/ComfyUI-KwaiKolorsWrapper#22) and BMInf (OpenBMB/BMInf#50)
    ("Symbol cudaLaunchKernel not found in C:\\Program Files (x86)\\NVIDIA Corporation\\PhysX\\Common\\cudart64_65.dll\n"
     "!!! Exception during processing!!! Library cublasLt is not initialized", "other.cpm_kernels_library_not_found",
     ["cudart64_65.dll", "cublasLt", "PATH"]),
    ("cpm2.fill_blank('好<span>') #报错 RuntimeError: Library cublasLt is not initialized",
     "other.cpm_kernels_library_not_found", ["cublasLt", "CUDA toolkit"]),
    # Triton's ptxas failure from unsloth's kernels and a ComfyUI node (unslothai/unsloth#1237,
    # kijai/ComfyUI-HunyuanVideoWrapper#48)
    ("  File \"D:\\ProgramData\\anaconda3\\envs\\cuda\\Lib\\site-packages\\triton\\backends\\nvidia\\compiler.py\", line 309, "
     "in make_cubin\n    raise RuntimeError(f'`ptxas` failed with error code {e.returncode}: \\n{log}')\nRuntimeError: "
     "`ptxas` failed with error code 4294967295:", "compile.triton_ptxas_failed", ["4294967295", "triton-windows"]),
    ("HyVideoSampler `ptxas` failed with error code 4294967295. Pls kindly help with thanks",
     "compile.triton_ptxas_failed", ["4294967295"]),
    # xFormers' FA3 kernel on RTX 50-series cards (deepbeepmeep/Wan2GP#658, kijai/ComfyUI-DepthAnythingV2#29)
    ("CUDA error (/__w/xformers/xformers/third_party/flash-attention/hopper/flash_fwd_launch_template.h:180): invalid "
     "argument", "device.xformers_fa3_invalid_argument", ["flash_fwd_launch_template.h:180", "--sdpa"]),
    ("using MLP layer as FFN\nCUDA error (C:/a/xformers/xformers/third_party/flash-attention/hopper\\"
     "flash_fwd_launch_template.h:188): invalid argument", "device.xformers_fa3_invalid_argument",
     ["flash_fwd_launch_template.h:188", "invalid argument"]),
    # TensorRT-RTX's strongly typed builds (NVIDIA/TensorRT-RTX#2)
    ("[06/12/2025-19:58:17] [TRT] [E] IBuilder::buildSerializedNetwork: Error Code 3: API Usage Error (Parameter check "
     "failed, condition: !config.getFlag(BuilderFlag::kFP16). )", "compile.tensorrt_strongly_typed_precision_flag",
     ["BuilderFlag::kFP16", "STRONGLY_TYPED"]),
    # inplace_abn's later wording under fp16 (mapillary/inplace_abn#150)
    ("    _backend.forward(x, mean, var, weight, bias, ctx.eps, ctx.activation, ctx.activation_param)\nRuntimeError: mean "
     "is not compatible with x (wrong size or scalar type) (forward at src/inplace_abn.cpp:52)",
     "dtype.inplace_abn_param_dtype", ["inplace_abn.cpp:52", "mean"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # the same flash-attention launch check on a build without kernels for the GPU (hiyouga/LlamaFactory#10132):
    # device.no_kernel_image's
    ("CUDA error (/build/source/flash-attn/flash_fwd_launch_template.h:191): no kernel image is available for execution on "
     "the device", "device.xformers_fa3_invalid_argument"),
    # DTensor's other failure: a strategy exists, the placements fit none (pytorch/pytorch#164543)
    ("RuntimeError('Sharding propagation failed for Op(op=aten.embedding.default, args_schema=Spec(S(0) on (2048, 256)), "
     "Spec((Shard(dim=0), Replicate()) on (16, 2048)) @ mesh: (2, 4))')", "distributed.dtensor_op_no_sharding_strategy"),
    # Lightning's general precision check, not DeepSpeed's (RVC-Boss/GPT-SoVITS#461)
    ("lightning_fabric.utilities.exceptions.MisconfigurationException: Precision '16-mixed' is invalid. Allowed precision "
     "values: ('64', '32', '16', 'bf16', 64, 32, 16)", "other.lightning_deepspeed_precision"),
    # ptxas's own feature error: compile.triton_ptxas_feature's, not the bare exit code (kijai/ComfyUI-HunyuanVideoWrapper#48)
    ("ptxas C:\\Users\\...\\AppData\\Local\\Temp\\tmpumohz431.ptx, line 387; error   : Feature '.bf16' requires .target "
     "sm_80 or higher", "compile.triton_ptxas_failed"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
