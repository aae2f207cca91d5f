"""Round-31 wordings for `other` (localised Windows builds, LLM installs and servers, torch's own warnings): each
corpus message (verbatim from the opened round) is claimed, from its text alone, by the right rule with the values it
holds named; other wordings of the same families (from the threads cited in the rules) are claimed too, and near
misses stay unclaimed. A live fixture raises the warning this CPU torch can."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r31_a.yaml#47", "other.named_tensor_experimental_warning", ["functional.py:718", "torch.max_pool2d", "Named tensors"]),
    ("r31_a.yaml#83", "other.tensor_copy_construct_warning", ["utils.py:378", "sourceTensor.clone().detach()"]),
    ("r31_a.yaml#84", "other.rnn_weights_not_contiguous",
     ["flatten_parameters()", "LegacyDefinitions.cpp:14", "torch.uint8", "torch.bool"]),
    ("r31_b.yaml#31", "other.extension_torch_header_missing", ["C1083", "torch/extension.h", "pybind.cpp(3)"]),
    ("r31_b.yaml#32", "other.extension_toolchain_missing", ["['where', 'cl']"]),
    ("r31_b.yaml#37", "other.extension_toolchain_missing",
     ["compiler version for cl", "WinError 2", "torch_tensorrt._C"]),
    ("r31_b.yaml#42", "other.subprocess_output_not_utf8", ["0xfc", "output.decode('utf-8')"]),
    ("r31_c.yaml#10", "other.bnb_native_library_missing",
     ["libbitsandbytes_cuda121.so", "libbitsandbytes_cpu.so"]),
    ("r31_c.yaml#14", "other.tgi_shard_signaled", ["signal 4", "rank=0", "ShardCannotStart"]),
    ("r31_c.yaml#46", "other.cuda_home_not_set", ["flash_attn", "nvcc", "2.0.1+cu117", "CUDA 11.7"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the named-tensor warning from channel_shuffle, quoted in a reply (https://github.com/pytorch/pytorch/issues/54846,
    # other/named_tensor_experimental_warning's example)
    ("> /home/user/PyTorch/dist-packages/release/torch/nn/modules/channelshuffle.py:46: UserWarning: Named tensors and "
     "all their associated APIs are an experimental feature and subject to change. Please do not use them for anything "
     "important until they are released as stable. (Triggered internally at  ../c10/core/TensorImpl.h:973.)\n"
     ">   return F.channel_shuffle(input, self.groups)",
     "other.named_tensor_experimental_warning", ["channelshuffle.py:46", "F.channel_shuffle"]),
    # the copy warning in torch 2.x's words (LanPaint#38, the corpus entry of round 34, now opened)
    (corpus_message("r34_b.yaml#62"), "other.tensor_copy_construct_warning", ["nodes.py:78", "sourceTensor.detach().clone()"]),
    # `where cl` elsewhere (maskrcnn-benchmark#1288)
    ("subprocess.CalledProcessError: Command '['where', 'cl']' returned non-zero exit status 1.",
     "other.extension_toolchain_missing", ["['where', 'cl']", "cl.exe"]),
    # gcc's missing torch header, in English and in another wording (FOTS.PyTorch#89; a line of
    # https://github.com/lufficc/SSD/issues/45)
    ("rroi_align_kernel.cu:1:10: fatal error: torch/extension.h: No such file or directory",
     "other.extension_torch_header_missing", ["rroi_align_kernel.cu:1:10", "torch/extension.h"]),
    ("/home/marco/Documenti/github/SSD-1.0.1/ext/cpu/vision.h:3:10: fatal error: torch/extension.h: File or directory does "
     "not exist", "other.extension_torch_header_missing", ["vision.h:3:10", "torch/extension.h"]),
    # apex's --cuda_ext (mega.pytorch#11)
    ("RuntimeError: --cuda_ext was requested, but nvcc was not found.  Are you sure your environment has nvcc available?",
     "other.cuda_home_not_set", ["--cuda_ext", "nvcc"]),
    # a Japanese Windows' output decoded as UTF-8 (https://github.com/ROCm/TheRock/issues/1074,
    # other/subprocess_output_not_utf8's example)
    ('File "C:\\Users\\yangw\\AppData\\Local\\Packages\\PythonSoftwareFoundation.Python.3.11_qbz5n2kfra8p0\\LocalCache\\'
     'local-packages\\Python311\\site-packages\\rocm_sdk\\tests\\core_test.py", line 106, in testConsoleScripts\n'
     "    ).decode()\n      ^^^^^^^^\nUnicodeDecodeError: 'utf-8' codec can't decode byte 0x82 in position 1222: invalid start byte",
     "other.subprocess_output_not_utf8", ["0x82", "1222"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a binary file read as UTF-8: no program output decoded
    ("UnicodeDecodeError: 'utf-8' codec can't decode byte 0x80 in position 64: invalid start byte",
     "other.subprocess_output_not_utf8"),
    # the removed THC header: extension_build_failed's, not the torch header's (a line of
    # https://github.com/zju3dv/snake/issues/244)
    ("D:\\PythonProject\\snake-master\\lib\\csrc\\extreme_utils\\src\\nms.cu(5): fatal error C1083: 无法打开包括文件: "
     "“THC/THC.h”: No such file or directory",
     "other.extension_torch_header_missing"),
    # the launcher's line for a shard that failed with a Python error
    ("ERROR text_generation_launcher: Shard 0 failed to start", "other.tgi_shard_signaled"),
    # an operator that refuses named tensors: an error, not the experimental warning
    # (https://github.com/pytorch/pytorch/issues/49427)
    ("RuntimeError: view is not yet supported with named tensors. Please drop names via `tensor = tensor.rename(None)`, "
     "call the op with an unnamed tensor, and set names on the result of the operation.",
     "other.named_tensor_experimental_warning"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_live_tensor_copy_construct_warning():
    diagnosis = explain_fixture("fixtures/other/tensor_copy_construct.py")
    assert diagnosis.rule == "other.tensor_copy_construct_warning"
    assert "sourceTensor.detach().clone()" in diagnosis.summary
