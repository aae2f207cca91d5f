"""Round-34 wordings for device, distributed, memory and data (3D vision and neural rendering, PyTorch's own trackers,
multimodal and LLM applications): each corpus message (verbatim from the opened rounds) is claimed, from its text
alone, by the right rule with the values it holds named; other wordings of the same families (from the threads cited)
are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r34_a.yaml#8", "memory.cuda_oom", ["64.00 MiB", "21.99 GiB", "20.68 GiB"]),
    ("r34_a.yaml#16", "device.extension_cpu_not_supported", ["sampling.cpp:83", "furthest_point_sampling"]),
    ("r34_a.yaml#17", "device.extension_cpu_not_supported", ["sampling.cpp:83", "furthest_point_sampling"]),
    ("r34_b.yaml#41", "device.miopen_error",
     ["MIOpenBatchNormFwdTrainSpatial.cpp", "HIPRTC_ERROR_COMPILATION", "gfx1151", "type_traits"]),
    ("r34_b.yaml#89", "device.backend_not_available", ["aten::sum.IntList_out", "SparseCPU"]),
    ("r34_b.yaml#90", "other.sparse_layout_unsupported", ["CPU", "SparseCPU", "`mat2`"]),
    ("r34_b.yaml#75", "device.illegal_memory_access", ["error (77)", "THCTensorCopy.cpp:70"]),
    ("r34_c.yaml#6", "device.flash_attn_arch", ["flash_attn_gpu.varlen_fwd", "Ampere"]),
    ("r34_c.yaml#46", "distributed.mpi_init_failed", ["MPI_Init_thread", "MPI_ERRORS_ARE_FATAL"]),
    ("r34_c.yaml#63", "data.hf_no_weights_file", ["pytorch_model.bin", "model.safetensors", "Ke-Omni-R-3B"]),
    ("r34_c.yaml#64", "data.hf_no_weights_file", ["./checkpoints/vicuna-7b-v1.5"]),
    ("r34_c.yaml#65", "data.hf_no_weights_file", ["chinese-lert-base-tokenizer", "pytorch_model.bin"]),
    ("r24_b.yaml#49", "memory.cuda_extension_alloc", ["cudaMalloc(&rawptr, n_bytes+DEBUG_GUARD_SIZE*2)"]),
    ("r34_a.yaml#45", "memory.cuda_extension_alloc", ["gpu_memory.h:109", "cudaMalloc"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # pointnet2_ops copies: pointMLP (Windows path, #92; no space after "false", #76), PVN3D's torch 1.x wording (#52)
    ('RuntimeError: false INTERNAL ASSERT FAILED at "pointnet2_ops\\\\_ext-src\\\\src\\\\sampling.cpp":83, please report '
     "a bug to PyTorch. CPU not supported", "device.extension_cpu_not_supported", ["sampling.cpp:83"]),
    ('RuntimeError: falseINTERNAL ASSERT FAILED at "pointnet2_ops/_ext-src/src/sampling.cpp":83, please report a bug to '
     "PyTorch. CPU not supported", "device.extension_cpu_not_supported", ["sampling.cpp:83"]),
    ("RuntimeError: CPU not supported (furthest_point_sampling at ./pvn3d/_ext-src/src/sampling.cpp:82)",
     "device.extension_cpu_not_supported", ["furthest_point_sampling", "sampling.cpp:82"]),
    # transformers' older list without model.safetensors (transformers#24687), diffusers' one file (magic-animate#115)
    ("OSError: Error no file named pytorch_model.bin, tf_model.h5, model.ckpt.index or flax_model.msgpack found in "
     "directory /mnt/workspace/lawyer-llama/lawyer-llama-13b-beta1.0.", "data.hf_no_weights_file",
     ["/mnt/workspace/lawyer-llama/lawyer-llama-13b-beta1.0", "model.safetensors"]),
    ("OSError: Error no file named diffusion_pytorch_model.bin found in directory "
     "/content/drive/MyDrive/sd-ma/MagicAnimate/appearance_encoder.", "data.hf_no_weights_file",
     ["diffusion_pytorch_model.bin", "appearance_encoder"]),
    # the same sparse wording on the GPU (pytorch#12498)
    ("RuntimeError: Expected object of backend CUDA but got backend SparseCUDA for argument #2 'mat2'",
     "other.sparse_layout_unsupported", ["SparseCUDA", "`mat2`"]),
    # the dispatcher's wording for a sparse CUDA tensor (bindog/pytorch-model-parallel#3)
    ("RuntimeError: Could not run 'aten::nonzero' with arguments from the 'SparseCUDA' backend. 'aten::nonzero' is only "
     "available for these backends: [CPU, CUDA, Autograd, Profiler, Tracer].", "device.backend_not_available",
     ["aten::nonzero", "SparseCUDA"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # two devices, no sparse layout (SAGPool#3): device.mismatch's, not the sparse rule's
    ("RuntimeError: Expected object of backend CUDA but got backend CPU for argument #2 'mat2'",
     "other.sparse_layout_unsupported"),
    # a weights file that is there but unreadable (parsbert#7)
    ("OSError: Unable to load weights from pytorch checkpoint file. If you tried to load a PyTorch model from a TF 2.0 "
     "checkpoint, please set from_tf=True.", "data.hf_no_weights_file"),
    # mpich's error on a communicator, not an init failure (mpich#961)
    ("Fatal error in MPI_Comm_size: Invalid communicator, error stack:\nMPI_Comm_size(111): "
     "MPI_Comm_size(comm=0x5b, size=0x7fff6a27b33c) failed\nMPI_Comm_size(69).: Invalid communicator",
     "distributed.mpi_init_failed"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
