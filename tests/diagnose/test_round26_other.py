"""Round 26 `other` rules: torch's bare checks (TORCH_CHECK with no message, torch.profiler's internal asserts) in
other.torch_check_failed, and native crashes pasted alone (a bug report's bare "Segmentation fault (core dumped)",
"Floating point exception (core dumped)", glibc's "free(): invalid pointer" with the shell's abort) or with
faulthandler's Python stack (the innermost frame named). Messages verbatim from the corpus and the threads cited; the
checks need a profiler mode or a torch release not installed here, and a crash cannot be raised in a test process, so
no live fixture."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message as corpus, explain_paste

CORPUS = [
    ("r26_a.yaml#8", "other.torch_check_failed", ["`!config.profile_memory`", "profile_memory=True"]),
    ("r26_a.yaml#61", "other.torch_check_failed", ["`has_running_mean == has_running_var`", "running_var"]),
    ("r26_a.yaml#9", "other.torch_check_failed", ["`stack.size()`", 'profiler_python.cpp":963', "with_stack=True"]),
    ("r26_a.yaml#59", "other.native_segfault", ["line 456 in _conv_forward", "0x0000ffffa9062700", "`conv.py`"]),
    ("r26_a.yaml#58", "other.native_segfault", ["Segmentation fault (core dumped)"]),
    ("r26_a.yaml#54", "other.native_fpe", ["Floating point exception (core dumped)", "SIGFPE"]),
    ("r26_a.yaml#66", "other.native_heap_corruption", ["`free(): invalid pointer`", "Aborted (core dumped)"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


NOT_CLAIMED = [
    # flash-attention's architecture check is device.flash_attn_arch's (https://github.com/Dao-AILab/flash-attention/issues/143)
    ("RuntimeError: Expected is_sm80 to be true, but got false.  (Could this error message be improved?  If so, please "
     "report an enhancement request to PyTorch.)", "other.torch_check_failed"),
    # a checkpoint without its version record is data's (https://github.com/nmndeep/revisiting-at/issues/7)
    ('`RuntimeError: Expected hasRecord("version") to be true, but got false`', "other.torch_check_failed"),
    # the caching allocator's assert after an NVML failure is memory's (https://github.com/jayin92/Skyfall-GS/issues/10)
    ('RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":830, please '
     "report a bug to PyTorch. ", "other.torch_check_failed"),
    # darknet's crash under its own log (https://github.com/GuiltyNeuron/ANPR/issues/27)
    ("Loading weights from darknet53.conv.74...Done!\nLearning Rate: 0.001, Momentum: 0.9, Decay: 0.0005\nResizing\n480\n"
     "Floating point exception (core dumped)",
     "other.native_fpe"),
]


@pytest.mark.parametrize(("text", "rule"), NOT_CLAIMED, ids=[f"{r}-{i}" for i, (_, r) in enumerate(NOT_CLAIMED)])
def test_near_misses_are_left_to_others(text, rule):
    assert_left_alone(text, rule)
