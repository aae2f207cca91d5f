"""Round-47 wordings of accelerators other than NVIDIA's: Huawei Ascend (torch_npu, torchair, HCCL), Intel Gaudi (the
HPU bridge, optimum-habana) and AWS Neuron (torch-neuron, torch-neuronx, the Neuron runtime): their runtime, memory,
dtype and compile messages. Each corpus message (verbatim from the opened round) is claimed, from its text alone, by
the right rule with the values it holds named the way the coverage judge reads them; other wordings of the same
families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r47_a.yaml#1", "distributed.hccl_error", ["107020", "hccl fftsplus timeout", "npuSynchronizeUsedDevices"]),
    ("r47_a.yaml#7", "compile.neuron_trace_batchnorm_training", ["batch_norm", "model.eval()"]),
    ("r47_a.yaml#17", "memory.habana_hpu_oom", ["14493510400", 'trainer.py", line 70', "SYNHELPER"]),
    ("r47_a.yaml#18", "memory.habana_hpu_oom", ["268435456", "256", "PT_DEVMEM"]),
    ("r47_a.yaml#24", "dtype.npu_aclnn_dtype_unsupported", ["UInt64", "ERR01002"]),
    ("r47_a.yaml#26", "dtype.npu_aclnn_dtype_unsupported", ["aclnnInplaceNormal", "161002", "DT_COMPLEX32"]),
    ("r47_a.yaml#44", "device.neuron_runtime_error", ["NeuronCores"]),
    ("r47_a.yaml#45", "device.neuron_runtime_error", ["nrt_load_collectives", "8", "16", "32"]),
    ("r47_a.yaml#61", "other.optimum_habana_version_warning", ["v1.20.0.dev0", "v1.22.0", "v1.21.0.555", "v1.21.2"]),
    ("r47_a.yaml#75", "other.npu_transfer_to_npu_jit_warning", ["transfer_to_npu.py:291", "torch.jit.script"]),
    ("r47_a.yaml#76", "compile.torchair_config_mode_warning",
     ["compiler_config.py:106", "max-autotune", "config.debug.aclgraph.clone_input"]),
    ("r47_a.yaml#80", "memory.neuron_nrt_allocation_failure", ["nrt_tensor_allocate", "4", 'ops.py", line 49']),
    ("r47_a.yaml#81", "device.neuron_runtime_error", ["NRT_RESOURCE", "nrt_load()", "2.21.41.0"]),
    ("r47_a.yaml#86", "other.hpu_set_deterministic_deprecated", ["__init__.py:158", "torch.hpu.setDeterministic"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # the SYNHELPER workspace is a graph's scratch memory: 13.5 GiB, and lazy mode's graphs are cut by mark_step
    assert_names(explain_paste(corpus_message("r47_a.yaml#17")), "memory.habana_hpu_oom", ["13.50 GiB", "mark_step()"])
    # an hccl fftsplus timeout is a rank waiting on another: 107020 is the runtime's task timeout
    assert_names(explain_paste(corpus_message("r47_a.yaml#1")), "distributed.hccl_error",
                 ["ACL_ERROR_RT_TASK_TIMEOUT", "HCCL_EXEC_TIMEOUT"])
    # torch.uint64 has no CANN counterpart: a signed type on the NPU
    assert_names(explain_paste(corpus_message("r47_a.yaml#24")), "dtype.npu_aclnn_dtype_unsupported", ["torch.int64"])
    # complex32 is complex half, which almost no kernel implements
    assert_names(explain_paste(corpus_message("r47_a.yaml#26")), "dtype.npu_aclnn_dtype_unsupported", ["torch.chalf"])
    # NeuronCores are reserved per process (aws-neuron-samples#44: a notebook kernel still held them)
    assert_names(explain_paste(corpus_message("r47_a.yaml#44")), "device.neuron_runtime_error",
                 ["reserved per process"])
    # Trainium's collectives take 1, 2, 8, 16 or a multiple of 32 cores; other counts need inf2
    assert_names(explain_paste(corpus_message("r47_a.yaml#45")), "device.neuron_runtime_error", ["Inferentia2 (inf2)"])
    # status 4 is NRT_RESOURCE, raised while transformers-neuronx moved tensors to the cores
    assert_names(explain_paste(corpus_message("r47_a.yaml#80")), "memory.neuron_nrt_allocation_failure",
                 ["NRT_RESOURCE", "transformers_neuronx", "parallel_to_nc"])
    # an ACL-graph option in max-autotune (GE) mode is ignored
    assert_names(explain_paste(corpus_message("r47_a.yaml#76")), "compile.torchair_config_mode_warning",
                 ['config.mode = "reduce-overhead"'])
    # DeepSpeed's HPU accelerator, picked just after, made the call in releases before its fix
    assert_names(explain_paste(corpus_message("r47_a.yaml#86")), "other.hpu_set_deterministic_deprecated",
                 ["DeepSpeed", "#6897"])


@pytest.mark.parametrize("text, rule, values", [
    # optimum-habana's text generation on one card (huggingface/optimum-habana#289, #1469, as the threads' titles) and
    # a sharded GPT-OSS moved to the cards (huggingface/optimum-habana PR #2214)
    ("return super().__torch_function__(func, types, new_args, kwargs) RuntimeError: [Rank:0] FATAL ERROR :: "
     "MODULE:PT_DEVMEM Allocation failed for size::3288334336 (3136)MB",
     "memory.habana_hpu_oom", ["3288334336", "3136", "PT_DEVMEM"]),
    ("RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::234881024 (224)MB #2",
     "memory.habana_hpu_oom", ["234881024", "224"]),
    ("[rank7]:   File \"/usr/local/lib/python3.12/dist-packages/torch/nn/modules/module.py\", line 1360, in convert\n"
     "[rank7]:     return t.to(\n"
     "[rank7]:            ^^^^^\n"
     "[rank7]: RuntimeError: [Rank:7] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::2123366400 (2025)MB",
     "memory.habana_hpu_oom", ["2123366400", "2025", "rank 7"]),
    # the runtime's collectives of a transformers-neuronx Llama at 16k on an inf2.24xlarge (aws-neuron-samples#96)
    ('RuntimeError: nrt_load_collectives status=4 message="Allocation Failure"',
     "memory.neuron_nrt_allocation_failure", ["nrt_load_collectives", "NRT_RESOURCE"]),
    # the NeuronCores held by another process, as the runtime logs it (huggingface/optimum-neuron#377,
    # aws-neuron/aws-neuron-sdk#1065)
    ("Validating text_encoder model...\n"
     "2023-Dec-13 16:44:18.626441 190864:229706 ERROR   NRT:nrt_allocate_neuron_cores               NeuronCore(s) not "
     "available - Requested:2 Available:0\n"
     "terminate called after throwing an instance of 'c10::Error'\n"
     "  what():  The PyTorch Neuron Runtime could not be initialized. Neuron Driver issues are logged\n"
     "to your system logs. See the Neuron Runtime's troubleshooting guide for help on this\n"
     "topic: https://awsdocs-neuron.readthedocs-hosted.com/en/latest/",
     "device.neuron_runtime_error", ["Requested:2 Available:0", "another process"]),
    ("2024-Dec-11 17:43:58.780308 45075:45075 ERROR   NRT:nrt_allocate_neuron_cores               Virtual Neuron "
     "Core(s) not available - Requested:2 Available:0 Virtual Core size 1",
     "device.neuron_runtime_error", ["nrt_allocate_neuron_cores", "Requested:2 Available:0"]),
    # transfer_to_npu's warning in vLLM-Ascend's workers (vllm-project/vllm-ascend#516, #463)
    ("/usr/local/lib/python3.10/dist-packages/torch_npu/contrib/transfer_to_npu.py:247: RuntimeWarning: torch.jit.script "
     "and torch.jit.script_method will be disabled by transfer_to_npu, which currently does not support them, if you "
     "need to enable them, please do not use transfer_to_npu.\n  warnings.warn(msg, RuntimeWarning)",
     "other.npu_transfer_to_npu_jit_warning", ["transfer_to_npu.py:247", "torch.jit.script_method"]),
    ("/cog15/wxliu11/miniconda3/envs/vllm/lib/python3.10/site-packages/torch_npu/contrib/transfer_to_npu.py:247: "
     "RuntimeWarning: torch.jit.script and torch.jit.script_method will be disabled by transfer_to_npu, which currently "
     "does not support them, if you need to enable them, please do not use transfer_to_npu.\n"
     "  warnings.warn(msg, RuntimeWarning)",
     "other.npu_transfer_to_npu_jit_warning", ["transfer_to_npu.py:247"]),
    # torchair's older release printing the list empty (sgl-project/sglang#8004)
    ("/usr/local/python3.11.13/lib/python3.11/site-packages/torch_npu/dynamo/torchair/configs/compiler_config.py:74: "
     "UserWarning: The following torchair config or properties may not take effect or report error in max-autotune "
     "mode: \n  warnings.warn(\"The following torchair config or properties may not take effect or report \" + \\",
     "compile.torchair_config_mode_warning", ["compiler_config.py:74", "max-autotune"]),
    # optimum-habana main on a newer SynapseAI than it was validated for (huggingface/optimum-habana PR #2214)
    ("[WARNING|misc.py:214] 2026-01-27 06:23:41,067 >> optimum-habana v1.21.0.dev0 has been validated for SynapseAI "
     "v1.22.0 but habana-frameworks v1.23.0.695 was found, this could lead to undefined behavior!",
     "other.optimum_habana_version_warning", ["v1.21.0.dev0", "v1.22.0", "v1.23.0.695"]),
    # the same uint64 tensor in an add, refused by the kernel's own check (Ascend/pytorch#158)
    (">>> A = torch.empty((1,), dtype=torch.uint64, device=\"npu\")\n>>> A = A + 1\nTraceback (most recent call last):\n"
     "  File \"<stdin>\", line 1, in <module>\n"
     "RuntimeError: add_out_npu_nocheck:third_party/op-plugin/op_plugin/ops/opapi/AddKernelNpuOpApi.cpp:52 NPU function "
     "error: call aclnnAdds failed, error code is 161002\n"
     "[ERROR] 2026-08-03-15:41:28 (PID:235311, Device:0, RankID:0) ERR00100 PTA call acl api failed.\n"
     "[PID: 235311] 2026-08-03-15:41:28.117.010 AclNN_Parameter_Error(EZ1001): Tensor self not implemented for "
     "DT_UINT64, should be in dtype support list [DT_FLOAT,DT_INT32,DT_INT64,DT_FLOAT16,DT_INT16,DT_INT8,DT_UINT8,"
     "DT_DOUBLE,DT_BOOL,DT_BFLOAT16,DT_COMPLEX64,DT_COMPLEX128,].",
     "dtype.npu_aclnn_dtype_unsupported", ["aclnnAdds", "DT_UINT64", "161002"]),
    # another rank's line of the same ZeRO-3 hang (hiyouga/LlamaFactory#5347)
    ("EE9999  fftsplus task execute failed, dev_id=5, stream_id=7, task_id=5990, context_id=10, thread_id=0, "
     "err_type=13[hccl fftsplus timeout][FUNC:GetError][FILE:stream.cc][LINE:1512]",
     "distributed.hccl_error", ["device 5", "hccl fftsplus timeout"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # the Gaudi graph compiler failing, not memory (hiyouga/LlamaFactory PR #7275)
    ("[rank2]: RuntimeError: synNodeCreateWithId failed for node: batch_gemm with synStatus 26 [Generic failure]. .",
     "memory.habana_hpu_oom"),
    # another status of the same runtime call: NRT_INVALID, not an allocation (huggingface/optimum-neuron#424, its title)
    ("Task 3 - Optimum Neuron Bug Bash - LLama-2-13B load failure with RuntimeError: nrt_load_collectives status=2",
     "memory.neuron_nrt_allocation_failure"),
    # the runtime out of device memory is the memory rule's, not the runtime rule's (aws-neuron-samples#96)
    ('RuntimeError: nrt_load_collectives status=4 message="Allocation Failure"', "device.neuron_runtime_error"),
    # the Inf1 compiler failing on a subgraph, not batch_norm in training mode (aws-neuron/aws-neuron-sdk#328)
    ("WARNING:Neuron:torch.neuron.trace failed on _NeuronGraph$1110; falling back to native python function call",
     "compile.neuron_trace_batchnorm_training"),
    # torch's own TorchScript deprecation, not transfer_to_npu (pytorch/pytorch#174081)
    ("/usr/local/lib/python3.12/dist-packages/torch/jit/_script.py:362: DeprecationWarning: `torch.jit.script_method` "
     "is deprecated. Please switch to `torch.compile` or `torch.export`.", "other.npu_transfer_to_npu_jit_warning"),
    # torch's CUDA determinism check, not the Gaudi bridge's deprecation (pytorch/ignite PR #2756)
    ("RuntimeError: Deterministic behavior was enabled with either `torch.use_deterministic_algorithms(True)` or "
     "`at::Context::setDeterministicAlgorithms(true)`, but this operation is not deterministic because it uses CuBLAS "
     "and you have CUDA >= 10.2.", "other.hpu_set_deterministic_deprecated"),
    # MPS's own dtype refusal (oobabooga/textgen#5216)
    ("TypeError: BFloat16 is not supported on MPS", "dtype.npu_aclnn_dtype_unsupported"),
    # transfer_to_npu's warning is not torchair's (sgl-project/sglang PR #29853)
    ("/usr/local/python3.11.15/lib/python3.11/site-packages/torch_npu/contrib/transfer_to_npu.py:291: RuntimeWarning: "
     "torch.jit.script and torch.jit.script_method will be disabled by transfer_to_npu, which currently does not support "
     "them, if you need to enable them, please do not use transfer_to_npu.", "compile.torchair_config_mode_warning"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
