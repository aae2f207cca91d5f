"""Round-32 wordings for device, distributed and memory (generative apps, less common hardware: DirectML, Gaudi,
Ascend, Intel XPU, ROCm, TPU, old GPUs): each corpus message (verbatim from the opened rounds) is claimed, from its
text alone, by the right rule with the values it holds named; other wordings of the same families (from the threads
cited) are claimed too, and near misses stay unclaimed. A live fixture raises what this CPU torch can."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste


def said(diagnosis) -> str:
    """What the diagnosis prints: title, summary and fixes."""
    return " ".join([diagnosis.title, diagnosis.summary, *diagnosis.fixes])


CORPUS_CASES = [
    ("r32_a.yaml#8", "device.device_assert", ["device-side assert", "TORCH_USE_CUDA_DSA"]),
    ("r32_a.yaml#14", "memory.cpu_alloc", ["52428800", "alloc_cpu.cpp:72", "DefaultCPUAllocator"]),
    ("r32_a.yaml#27", "memory.cuda_oom", ["24.00 MiB", "6.00 GiB", "0 bytes"]),
    ("r32_a.yaml#63", "distributed.child_failed", ["exitcode: 1", "local_rank: 0", "api.py:826"]),
    ("r32_a.yaml#70", "device.app_requires_cuda", ["torch.cuda.is_available()", "CPU training is not allowed."]),
    ("r32_b.yaml#13", "device.kernel_built_for_other_sm", ["sm80", "sm500", "compute capability 5.0"]),
    ("r32_b.yaml#34", "memory.cuda_error_oom", ["THCStorage.cu", "line=58", "error=2"]),
    ("r32_b.yaml#61", "device.no_kernel_image", ["flux_text_encoder"]),
    ("r32_b.yaml#62", "distributed.launch_deprecated", ["torch.distributed.launch", "launch.py:180", "LOCAL_RANK"]),
    ("r32_c.yaml#6", "device.directml_unbox_tensor", ["DMLTensor.cpp:30", "PrivateUse1", "unbox expects Dml"]),
    ("r32_c.yaml#7", "device.generator_device", ["PRIVATEUSEONE", "torch.Generator()", "torch-directml"]),
    ("r32_c.yaml#10", "device.hip_error", ["invalid device function", "TORCH_USE_HIP_DSA"]),
    ("r32_c.yaml#11", "device.xla_check_failed", ["tensor.cpp:486", "data_ != nullptr", "native_batch_norm_backward"]),
    ("r32_c.yaml#13", "device.habana_synapse_error", ["batch_gemm", "synStatus 26"]),
    ("r32_c.yaml#14", "device.habana_hpugraph_capture", ["HPUGraph.cpp:138", "mark_step", "PT_DEVICE"]),
    ("r32_c.yaml#15", "device.habana_synapse_error", ["graph.cpp:599", "synStatus 26", "all_gather_into_tensor"]),
    ("r32_c.yaml#16", "device.habana_synapse_error", ["constant_bf16", "GLUE_FAILED", "graph.cpp: 599", "synStatus 26"]),
    ("r32_c.yaml#17", "device.habana_synapse_error", ["pad_fwd_i32", "synStatus 26"]),
    ("r32_c.yaml#18", "device.ascend_npu_runtime_error", ["500001", "AclSetCompileopt", "Ascend910B2", "EH9999"]),
    ("r32_c.yaml#20", "device.no_kernel_image", ["GeForce GTX 660 Ti", "3.0", "3.5"]),
    ("r32_c.yaml#51", "device.cpu_fallback_warning", ["aten::normal.Tensor_Tensor", "dml_cpu_fallback.cpp:17",
                                                      "normal.py:70"]),
    ("r32_c.yaml#55", "device.ascend_npu_runtime_error", ["EE9999", "device_error_proc.cc", "LINE:1714", "sdma"]),
    ("r32_c.yaml#56", "distributed.hccl_error", ["hcclCommInitRootInfoConfig", "code is 7", "EJ0001"]),
    ("r32_c.yaml#61", "memory.xpu_out_of_device_memory", ["UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "error: 39"]),
    ("r32_c.yaml#62", "device.xpu_native_api", ["UR_RESULT_ERROR_DEVICE_LOST", "returns: 20"]),
    ("r32_c.yaml#66", "memory.oom_nvml_assert", ["CUDACachingAllocator.cpp:838", "NVML_SUCCESS == r"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("text, rule, values", [
    # torch-directml's assert of another release and build path (tensorflow-directml#404)
    ('RuntimeError: tensor.device().type() == at::DeviceType::PrivateUse1 INTERNAL ASSERT FAILED at '
     '"D:\\a\\_work\\2\\s\\pytorch-directml-plugin\\torch_directml\\csrc\\dml\\DMLTensor.cpp":31, please report a bug '
     "to PyTorch. unbox expects Dml at::Tensor as inputs", "device.directml_unbox_tensor", ["DMLTensor.cpp:31"]),
    # torch.Generator of other device types: CUDA in a CPU-only build (Text2Video-Zero#54), Gaudi (vllm-fork#183),
    # DirectML in lower case (Fooocus#970)
    ("RuntimeError: Device CUDA is not supported for torch.Generator( ) api.", "device.generator_device",
     ["CUDA", "CPU-only build"]),
    ("Device type HPU is not supported for torch.Generator() api.", "device.generator_device", ["HPU"]),
    ("Device type privateuseone is not supported for torch.Generator() api.", "device.generator_device",
     ["privateuseone", "torch-directml"]),
    # xformers' fMHA printf, old (TheLastBen/fast-stable-diffusion#33) and new with the kernel's name
    # (BallonsTranslator#1148)
    ("FATAL: this function is for sm80, but was built for sm750", "device.kernel_built_for_other_sm",
     ["sm80", "sm750", "compute capability 7.5"]),
    ("FATAL: kernel `fmha_cutlassF_f32_aligned_64x64_rf_sm80` is for sm80-sm100, but was built for sm37",
     "device.kernel_built_for_other_sm", ["fmha_cutlassF_f32_aligned_64x64_rf_sm80", "sm80-sm100", "3.7"]),
    # the launcher's warning in torch 2.x's spelling (detr#578) and torch 1.9's (deocclusion#45)
    ("FutureWarning: The module torch.distributed.launch is deprecated\nand will be removed in future. Use torchrun.\n"
     "Note that --use-env is set by default in torchrun.\nIf your script expects `--local-rank` argument to be set, "
     "please\nchange it to read from `os.environ['LOCAL_RANK']` instead. See \n"
     "https://pytorch.org/docs/stable/distributed.html#launch-utility for \nfurther instructions",
     "distributed.launch_deprecated", ["torch.distributed.launch", "--local-rank", "LOCAL_RANK"]),
    ("The module torch.distributed.launch is deprecated and going to be removed in future.Migrate to "
     "torch.distributed.run", "distributed.launch_deprecated", ["torch.distributed.launch", "LOCAL_RANK"]),
    # the so-vits-svc guard with its traceback (SayaSS/vits-finetuning#22)
    ('Traceback (most recent call last):\n  File "D:\\vits-finetuning\\train_ms.py", line 49, in main\n'
     '    assert torch.cuda.is_available(), "CPU training is not allowed."\nAssertionError: CPU training is not allowed.',
     "device.app_requires_cuda", ["torch.cuda.is_available()", "CPU training is not allowed."]),
    # the full HCCL check, still read by its first pattern
    ("createHCCLComm:torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:1508 HCCL function error: "
     "HcclGetRootInfo(&hcclID), error code is 7", "distributed.hccl_error", ["HcclGetRootInfo", "error code is 7"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("text, not_rule", [
    # a third-party extension's own assert stays other.extension_internal_assert's
    ('RuntimeError: k <= 100INTERNAL ASSERT FAILED at "csrc/cuda/knn_cuda.cu":98, please report a bug to PyTorch. '
     "`k` needs to smaller than or equal to 100", "device.directml_unbox_tensor"),
    # nvcc rejecting an architecture at build time: no kernel ran
    ("nvcc fatal : Value 'sm_86' is not defined for option 'gpu-architecture'", "device.kernel_built_for_other_sm"),
    # torch.distributed.run's own remark on --use_env
    ("WARNING:torch.distributed.run:--use_env is deprecated and will be removed in future releases.\n Please read "
     "local_rank from `os.environ('LOCAL_RANK')` instead.", "distributed.launch_deprecated"),
    # a project's AssertionError without its assert line, and an assert on something else
    ("AssertionError: CPU training is not allowed.", "device.app_requires_cuda"),
    ('Traceback (most recent call last):\n  File "t.py", line 3, in <module>\n    assert x > 0, "bad"\n'
     "AssertionError: bad", "device.app_requires_cuda"),
    # the Gaudi graph compiler's log line alone, and CUDA's own capture error
    ("[19:08:34.164951][GC                    ][error][tid:44F8A] Failed to load tpc kernel for node: TPC634, GUID: "
     "constant_bf16. Got error: GLUE_FAILED", "device.habana_synapse_error"),
    ("RuntimeError: CUDA error: operation not permitted when stream is capturing", "device.habana_hpugraph_capture"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_the_launch_warning_is_a_remark_on_the_error_after_it():
    text = ("/usr/lib/python3.10/site-packages/torch/distributed/launch.py:181: FutureWarning: The module "
            "torch.distributed.launch is deprecated\nand will be removed in future. Use torchrun.\nNote that "
            "--use-env is set by default in torchrun.\nIf your script expects `--local-rank` argument to be set, "
            "please\nchange it to read from `os.environ['LOCAL_RANK']` instead. See \n"
            "https://pytorch.org/docs/stable/distributed.html#launch-utility for \nfurther instructions\n\n"
            "  warnings.warn(\n"
            "train.py: error: unrecognized arguments: --local-rank=0\n")
    assert claimed_by(text)[0] == "distributed.launch_local_rank_argument"


def test_live_assert_that_cuda_is_available():
    diagnosis = explain_fixture("fixtures/device/app_requires_cuda.py")
    assert_names(diagnosis, "device.app_requires_cuda", ["torch.cuda.is_available()", "CPU training is not allowed."])
