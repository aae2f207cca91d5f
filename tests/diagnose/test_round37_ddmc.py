"""Round-37 wordings for device, memory, distributed and compile (numerical PyTorch, data pipelines, performance
tooling, custom operators and user kernels): each corpus message (verbatim from the opened rounds) is claimed, from its
text alone, by the right rule with the values it holds named; other wordings of the same families (from the threads
cited, or raised live by torch) are claimed too, and near misses, other programs' messages among them, stay
unclaimed."""

from __future__ import annotations

import pytest

from conftest import (assert_explained, assert_left_alone, assert_names, corpus_message, explain_fixture,
                      explain_paste)


CORPUS_CASES = [
    ("r37_a.yaml#21", "device.backend_not_available",
     ["aten::_sparse_coo_tensor_with_dims_and_tensors", "SparsePrivateUse1"]),
    ("r37_c.yaml#55", "device.backend_not_available", ["fbgemm::pack_segments", "AutogradMeta"]),
    ("r37_c.yaml#58", "device.backend_not_available", ["aten::_weight_norm_interface", "Meta"]),
    ("r37_a.yaml#39", "device.cusolver_error",
     ["CUSOLVER_STATUS_EXECUTION_FAILED", "cusolverDnDgetrf", 'imgwarp.py", line 363', "get_perspective_transform"]),
    ("r37_a.yaml#77", "memory.sizes_and_strides_alloc", ["SizesAndStrides"]),
    ("r37_a.yaml#78", "memory.tcmalloc_large_alloc_failed", ["140349731364864", "std::bad_alloc"]),
    ("r37_b.yaml#10", "distributed.distributed_sampler_rank", ["rank 0", "[0, -1]"]),
    ("r37_b.yaml#76", "distributed.process_group_not_initialized",
     ["DistributedSampler", "dist.get_world_size()", 'distributed.py", line 30']),
    ("r37_c.yaml#1", "compile.fake_impl_composite_implicit", ["torch_ipex::mm_qkv_out.xpu", "CompositeImplicitAutograd"]),
    ("r37_c.yaml#29", "device.cuda_graph_capture_rng_state",
     ["CUDAGeneratorImpl::current_seed", "cudaStreamCaptureStatusActive"]),
    ("r37_c.yaml#30", "device.cuda_graph_capture_rng_state",
     ["CUDAGeneratorImpl::current_seed", "cudaStreamCaptureStatusActive"]),
    ("r37_c.yaml#38", "memory.cuda_oom", ["686.41 MiB", "54.14 GiB", "79.35 GiB", "27.19 MiB", "device 5"]),
    ("r37_c.yaml#47", "compile.inductor_no_valid_triton_configs", ["sm_110a", "NoTritonConfigsError", "ptxas-blackwell"]),
    ("r37_c.yaml#62", "device.cuda_graph_optimizer_not_capturable", ["AdamW", "capturable"]),
    ("r37_c.yaml#66", "device.cuda_runtime_error", ["too many resources", "cudaErrorLaunchOutOfResources"]),
    ("r37_c.yaml#78", "compile.graph_break", ["wrap_triton", "triton.py"]),
    ("r37_c.yaml#79", "compile.user_triton_mutation_analysis",
     ["identify_mutated_tensors", 'triton_kernel_wrap.py", line 131', "JITFunction"]),
    ("r37_c.yaml#82", "compile.cudagraph_output_overwritten", ['cudagraph_overwrite_issue.py", line 5', "foo"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    """Named as the coverage judge reads a value (a frame's place as file:line, a size by its numbers in order), in
    what the diagnosis says and prints."""
    assert_explained(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the capture-time RNG check as the title quotes it (pytorch#83148)
    ("Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture", "device.cuda_graph_capture_rng_state",
     ["CUDAGeneratorImpl::current_seed"]),
    # the optimizer's capture check cut before its second line (pytorch-lightning#18501)
    ("RuntimeError: Attempting CUDA graph capture of step() for an instance of AdamW",
     "device.cuda_graph_optimizer_not_capturable", ["AdamW", "capturable=True"]),
    # the same wrong rank with a real world size (pytorch-lightning#19961)
    ("ValueError: Invalid rank 4, rank should be in the interval [0, 3]", "distributed.distributed_sampler_rank",
     ["rank 4", "num_replicas=4"]),
    # the dispatcher's sparse wording on the GPU (bindog/pytorch-model-parallel#3) still read as before
    ("RuntimeError: Could not run 'aten::nonzero' with arguments from the 'SparseCUDA' backend. 'aten::nonzero' is only "
     "available for these backends: [CPU, CUDA, Autograd, Profiler, Tracer].", "device.backend_not_available",
     ["aten::nonzero", "SparseCUDA"]),
    # Triton's ptxas on its own (the rule's example wording, sm_121a)
    ("riton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\nptxas fatal   : "
     "Value 'sm_121a' is not defined for option 'gpu-name'", "compile.triton_ptxas_arch", ["sm_121a"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_fake_impl_for_a_composite_op_raised_live():
    diagnosis = explain_fixture("fixtures/compile/fake_impl_composite_implicit.py")
    assert_names(diagnosis, "compile.fake_impl_composite_implicit", ["fixturelib::twice", "CompositeImplicitAutograd"])


@pytest.mark.parametrize("where", ["r37_c.yaml#14", "r37_c.yaml#53", "r37_c.yaml#54", "r13_b.yaml#50",
                                   "r25_b.yaml#4", "r26_b.yaml#54", "r29_a.yaml#19"])
def test_other_programs_cuda_checks_stay_unclaimed(where):
    assert_left_alone(corpus_message(where), "*")


@pytest.mark.parametrize("text, not_rule", [
    # tcmalloc's report of a large allocation that succeeded (ActionVLAD#7): a warning, not a failure
    ("tcmalloc: large alloc 16056549376 bytes == 0x1f3e56000 @ 0x7fb8fedd1c7b 0x7fb8e4d6715f 0x7fb8e5f74348 "
     "0x7fb8e5f80cbd 0x7fb8e5fa91da 0x7fb8e5faab91 0x7fb8e60f6899 0x7fb8e60f6f5a 0x7fb8e62dd538 0x7fb8e62dcd00 "
     "0x7fb8fd9a9c80 0x7fb8feb896ba 0x7fb8fe8bf3dd (nil)", "memory.tcmalloc_large_alloc_failed"),
    # a non-default generator used during capture: another check of the generator (pytorch#91950)
    ("RuntimeError: philox_cuda_state for an unexpected CUDA generator used during capture",
     "device.cuda_graph_capture_rng_state"),
    # a capturable optimizer with CPU state: the optimizer's own check, no capture underway (pytorch#89987)
    ("Error in Adam.step(): If capturable=True, params and state_steps must be CUDA tensors.",
     "device.cuda_graph_optimizer_not_capturable"),
    # JAX's own cuSOLVER check (dl_binder_design#38)
    ("RuntimeError: jaxlib/cusolver.cc:51: operation cusolverDnCreate(&handle) failed: cuSolver internal error",
     "device.cusolver_error"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
