"""Round-36 wordings for device, memory and numerics (recommender and forecasting models, libtorch programs, OCR and
restoration applications): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by
the right rule with the values it holds named; other wordings of the same families (from the threads cited) are
claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r36_a.yaml#24", "device.device_assert", ["training.trainer.CTLTrainer"]),
    ("r36_a.yaml#42", "device.device_assert",
     ["EmbeddingBag.cu:122", "EmbeddingBag_updateOutputKernel_sum_mean", "input[emb] >= 0 && input[emb] < vocab_size"]),
    ("r36_a.yaml#72", "device.device_assert", ["reduce failed to synchronize"]),
    ("r36_a.yaml#74", "numerics.loss_nan_log", ["Vali Loss: nan", "(nan --> nan)"]),
    ("r36_a.yaml#75", "numerics.loss_nan_log", ["epoch 25", "nan"]),
    ("r36_a.yaml#83", "device.illegal_memory_access", ["Process group watchdog"]),
    ("r36_b.yaml#75", "device.mismatch", ["CPU", "CUDA", "'tensors'", "Utils.h:87"]),
    ("r36_b.yaml#76", "device.cuda_runtime_error", ["CUDADevice.h:12", "getDeviceFromPtr", "tensorFromBlob"]),
    ("r36_c.yaml#48", "device.nvrtc_invalid_arch", ["--gpu-architecture (-arch)", "fused_sigmoid_mul"]),
    ("r36_c.yaml#79", "numerics.loss_nan_log", ["[L1: nan]", "1.00e-4"]),
    ("r36_c.yaml#86", "device.mps_command_buffer_error", ["0000000e", "Apple M1", "AGXG13GFamilyCommandBuffer"]),
    ("r36_c.yaml#90", "memory.cuda_oom", ["2.00 MiB", "11.17 GiB", "10.68 GiB", "188.49 MiB"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # Thrust's synchronisation after a failed assert, old and CUB spellings (pytorch#14519, MhLiao/DB#233)
    ("RuntimeError: reduce failed to synchronize: device-side assert triggered", "device.device_assert",
     ["reduce failed to synchronize"]),
    ("RuntimeError: transform: failed to synchronize: cudaErrorAssert: device-side assert triggered",
     "device.device_assert", ["transform: failed to synchronize"]),
    # EmbeddingBag's offsets assertion (pytorch-metric-learning#172)
    ("/pytorch/aten/src/ATen/native/cuda/EmbeddingBag.cu:57: EmbeddingBag_updateOutputKernel: block: [863,0,0], "
     "thread: [20,7,0] Assertion `end >= begin` failed.", "device.device_assert",
     ["EmbeddingBag.cu:57", "EmbeddingBag_updateOutputKernel", "end >= begin"]),
    # the NCCL watchdog's wording in a serving engine's log (lmdeploy#3048)
    ("[rank0]:[E117 11:40:54.259889664 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group "
     "watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered\nCUDA kernel "
     "errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
     "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side "
     "assertions.", "device.illegal_memory_access", ["Process group watchdog"]),
    # an M2 Pro's command buffer (stable-diffusion-webui#9973)
    ("Error: command buffer exited with error status.\n\tThe Metal Performance Shaders operations encoded on it may "
     "not have completed.\n\tError: \n\t(null)\n\tInternal Error (0000000e:Internal Error)\n\t"
     "<AGXG14XFamilyCommandBuffer: 0x107b72b70>\n    label = <none> \n    device = <AGXG14SDevice: 0x29487d400>\n"
     "        name = Apple M2 Pro \n    commandQueue = <AGXG14XFamilyCommandQueue: 0x29488c200>",
     "device.mps_command_buffer_error", ["AGXG14XFamilyCommandBuffer", "Apple M2 Pro"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # two dtypes in torch.cat's list, one device (cat_mixed_dtypes' example): not a device mismatch
    ("RuntimeError: Expected object of scalar type Double but got scalar type Float for sequence element 2 in sequence "
     "argument at position #1 'tensors'", "device.mismatch"),
    # NVRTC rejecting the fuser's source, not the architecture (pytorch#62962)
    ("`Error: input model incompatible with test data, exception: default_program(24): error: extra text after "
     "expected end of number\n\ndefault_program(29): error: extra text after expected end of number\n\n2 errors "
     "detected in the compilation of \"default_program\".\n\nnvrtc compilation failed: \n\n#define NAN "
     "__int_as_float(0x7fffffff)", "device.nvrtc_invalid_arch"),
    # the same watchdog thread ending on a collective's timeout (open-r1#620): no illegal memory access
    ("  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: "
     "[Rank 3] Watchdog caught colle\nctive operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST, NumelIn=112, "
     "NumelOut=112, Timeout(ms)=1800000) ran for 1800011 millisecond\ns before timing out.",
     "device.illegal_memory_access"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
