"""The lead's shared changes while round 37 was open: TorchX's role/replica column before torchrun's tee column of the
local rank, taken off each line so the error under it is read. Corpus messages verbatim from the opened rounds
(TorchX's launcher is not installed here)."""

from __future__ import annotations

from conftest import assert_names, corpus_message, explain_paste
from explainer.diagnose.logpatterns import TORCHX_PREFIX_RE
from explainer.diagnose.logscan import scan


def test_torchx_s_role_and_replica_before_the_tee_column_is_taken_off_each_line():
    # torchrec#649: "test_installation/0 [1]:" on every line of the replica's traceback, then its agent's log record
    message = corpus_message("r36_a.yaml#69")
    texts = [found.text for found in scan(message.splitlines())]
    assert "AttributeError: '_OpNamespace' 'fbgemm' object has no attribute 'jagged_2d_to_dense'" in texts
    assert_names(explain_paste(message), "other.torch_op_not_registered", ["jagged_2d_to_dense", "fbgemm"])
    # dlrm#256: the same column before a library's own line ("dlrm_main/0 [0]:File fbgemm_gpu_py.so not found")
    assert_names(explain_paste(corpus_message("r17_a.yaml#22")), "other.ops_load_library_failed", ["fbgemm_gpu_py.so"])


def test_a_test_runner_s_counter_is_not_a_replica_column():
    # ncnn#5083: ctest's "227/523 Test #230: ..." starts with a count, not a role's name; torchrec#649's lines do
    ctest = corpus_message("r37_a.yaml#57").splitlines()[0]
    assert ctest.startswith("227/523 Test #230:") and not TORCHX_PREFIX_RE.match(ctest)
    replica = corpus_message("r36_a.yaml#69").splitlines()
    assert [TORCHX_PREFIX_RE.match(line).group(0) for line in (replica[0], replica[-1])] == [
        "test_installation/0 [1]:", "test_installation/0 "]
