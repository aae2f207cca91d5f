"""Round-34 wordings for device, memory and data left by the first writer (3D vision and PyTorch's own trackers: the
SMPL body-model files, COLMAP camera models of splatting loaders, KPConv's C++ wrappers, nvdiffrast's EGL log, the
sparse CPU kernel's device assert, the caching allocator's own asserts, libtorch 1.0's container, SoX's undetermined
file type): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule
with the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and near
misses stay unclaimed. None of these can be raised by this CPU torch."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r34_a.yaml#23", "data.smpl_model_path_missing", ["../data/smplx_models", 'body_models.py", line 969', "__init__"]),
    ("r34_a.yaml#27", "device.extension_cuda_error_code",
     ["219", "cudaGraphicsMapResources", "glutil.cpp:248", "eglMakeCurrent() failed when setting GL context"]),
    ("r34_a.yaml#50", "data.colmap_camera_model_unsupported",
     ["PINHOLE or SIMPLE_PINHOLE", "image_undistorter", "data/sanya0/train/block_all/dense", "`--data.path`"]),
    ("r34_a.yaml#57", "data.kpconv_cpp_wrapper_input_dtype", ["`classes`", "int32"]),
    ("r34_b.yaml#1", "device.sparse_cpu_kernel_cuda_input", ["`!t.is_cuda()`", "SparseTensorMath.cpp:591"]),
    ("r34_b.yaml#46", "data.audio_load_failed", ["sox_io", "`filetype=`", "/path/to/extensionless/file", "format="]),
    ("r34_b.yaml#58", "data.jit_load_footer_corrupted",
     ["inline_container.h:234", "RecordTags::FOOTER", "`torch::jit::load`"]),
    ("r34_b.yaml#73", "memory.caching_allocator_internal_assert",
     ["`!block->expandable_segment_`", "CUDACachingAllocator.cpp:2814", "expandable_segments:True"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the allocator's expandable segment after a partial mapping failure (pytorch#188008) and the size overflow of
    # torch < 1.9 (pytorch#57571)
    ('`!handles_.at(i) INTERNAL ASSERT FAILED at "c10/cuda/CUDACachingAllocator.cpp":487`',
     "memory.caching_allocator_internal_assert", ["`!handles_.at(i)`", "CUDACachingAllocator.cpp:487"]),
    ('RuntimeError: p.block != nullptr && p.block->ptr != nullptrINTERNAL ASSERT FAILED at '
     '"../c10/cuda/CUDACachingAllocator.cpp":991, please report a bug to PyTorch. \n'
     "Exception raised from alloc_block at ../c10/cuda/CUDACachingAllocator.cpp:991 (most recent call first):",
     "memory.caching_allocator_internal_assert", ["`p.block != nullptr && p.block->ptr != nullptr`",
                                                  "CUDACachingAllocator.cpp:991"]),
    # torch.spmm with the sparse adjacency left on the CPU (pytorch#29026)
    ('File "/home/jinzhu/pro/UIL/GraphMatch/layers.py", line 42, in forward\n    output = torch.spmm(adj, support) \n'
     "RuntimeError: !t.is_cuda() INTERNAL ASSERT FAILED at /pytorch/aten/src/ATen/native/sparse/SparseTensorMath.cpp:591, "
     "please report a bug to PyTorch.", "device.sparse_cpu_kernel_cuda_input", ["`torch.spmm`", "SparseTensorMath.cpp:591"]),
    # gaussian-splatting's assert, in GauStudio (2.5d-gaussian-splatting#2) and in its first release (gaussian-splatting#4)
    ('File "GauStudio/gaustudio/gaustudio/datasets/colmap.py", line 44, in readColmapCameras\n'
     'assert False, "Colmap camera model not handled: only undistorted datasets (PINHOLE or SIMPLE_PINHOLE cameras) '
     'supported!"\nAssertionError: Colmap camera model not handled: only undistorted datasets (PINHOLE or SIMPLE_PINHOLE '
     "cameras) supported!", "data.colmap_camera_model_unsupported", ["PINHOLE or SIMPLE_PINHOLE", "image_undistorter"]),
    ('  File "C:\\gaussian-splatting\\scene\\dataset_readers.py", line 95, in readColmapCameras\n'
     '    assert False, "Colmap camera model not handled!"\nAssertionError: Colmap camera model not handled!',
     "data.colmap_camera_model_unsupported", ["Colmap camera model not handled", "image_undistorter"]),
    # KPConv's features input (KPConv-PyTorch#81)
    ("RuntimeError: Error converting input features to numpy arrays of type float32", "data.kpconv_cpp_wrapper_input_dtype",
     ["`features`", "float32"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # NVML's failure inside the allocator's out-of-memory report stays memory.oom_nvml_assert's (fal#478)
    ('RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":830, please '
     "report a bug to PyTorch. ", "memory.caching_allocator_internal_assert"),
    # an extension's own assert on the other device direction (pytorch_sparse#114)
    ('RuntimeError: mat.device().is_cpu() INTERNAL ASSERT FAILED at "/home/travis/build/rusty1s/pytorch_sparse/csrc/cpu/'
     'spmm_cpu.cpp":14, please report a bug to PyTorch. mat must be CPU tensor', "device.sparse_cpu_kernel_cuda_input"),
    # a bare path assert of another project (tf-faster-rcnn#451)
    ("AssertionError: Path does not exist:", "data.smpl_model_path_missing"),
    # KPConv's wrapper module not built is not a dtype problem (KPConv-PyTorch#142)
    ("AttributeError: module 'cpp_wrappers.cpp_subsampling.grid_subsampling' has no attribute 'subsample'",
     "data.kpconv_cpp_wrapper_input_dtype"),
    # COLMAP's own dense-stereo check (colmap#233)
    ("`Check failed: camera.ModelId() == PinholeCameraModel::model_id`", "data.colmap_camera_model_unsupported"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_nvml_assert_keeps_its_own_rule():
    text = ('RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":830, please '
            "report a bug to PyTorch. ")
    assert explain_paste(text).rule == "memory.oom_nvml_assert"
