"""Round 21 `other` rules (first half): sparse tensors where torch needs a dense one or a shape a sparse layout cannot
hold, torch.linalg's solvers given a vector or a non-square matrix, uv's missing torch wheel, open_clip's model registry,
DGL 0.4's removed NodeFlow module, and bitsandbytes' CUDA-runtime search and CPU-library fallback. Messages verbatim from
the corpus and the threads cited; the sparse and linear-algebra families are also raised here by real torch calls."""

from __future__ import annotations

import pytest
import torch

import explainer

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, raised

CORPUS = [
    ("r19_b.yaml#2", "other.sparse_layout_unsupported", ["`torch.empty`", "[2449029]", "adj_t.sum(dim=1)"]),
    ("r19_b.yaml#3", "other.sparse_layout_unsupported", ["`.to_dense()`", "torch 0.3"]),
    ("r21_a.yaml#44", "other.sparse_layout_unsupported", ["sparse tensors have no strides"]),
    ("r21_a.yaml#45", "other.sparse_layout_unsupported", ["`addmm_sparse_dense`", "Sparse", "`r.layout() == kStrided`",
                                                          "SparseTensorMath.cpp:1253"]),
    ("r19_b.yaml#14", "other.linalg_matrix_operand", ["B has 1 dimension,", "at least 2 dimensions",
                                                      "`B.unsqueeze(-1)`"]),
    ("r16_b.yaml#7", "other.uv_no_wheel_for_platform", ["`torch==2.6.0`", "`manylinux_2_36_aarch64`",
                                                        "`macosx_11_0_arm64`", "Linux"]),
    ("r16_b.yaml#8", "other.uv_no_wheel_for_platform", ["`torch==2.5.1`", "CPython 3.13.1", "https://pypi.org/simple"]),
    ("r19_a.yaml#69", "other.openclip_unknown_model", ["`laion2b_s34b_b88k`", "pretrained-weights tag",
                                                       "pretrained='laion2b_s34b_b88k'"]),
    ("r17_b.yaml#91", "other.dgl_api_deprecated", ["`dgl.nodeflow`", "DGL 0.5", "torch>=1.5.0"]),
    ("r16_b.yaml#88", "other.bnb_cuda_setup_failed", ["`libcudart.so`", "`/data/conda/envs/xx`",
                                                      "PosixPath('//127.0.0.1')", "`cuda_setup/main.py:167`"]),
    ("r19_a.yaml#62", "other.bnb_cpu_library_loaded", ["`libbitsandbytes_cpu.so`", "`libcudart.so`",
                                                       "`cuda_setup/paths.py:27`", "Windows"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


# The same families in other threads' words.
PASTED = [
    # a CUDA index pinned for Windows (https://github.com/astral-sh/uv/issues/10843)
    ("Resolved 64 packages in 4ms\nerror: Distribution `torch==2.5.1 @ registry+https://download.pytorch.org/whl/cu124` "
     "can't be installed because it doesn't have a source distribution or wheel for the current platform\n\nhint: You're on "
     "Windows (`win_amd64`), but `torch` (v2.5.1) only has wheels for the following platform: `linux_aarch64`",
     "other.uv_no_wheel_for_platform", ["`win_amd64`", "`linux_aarch64`", "https://download.pytorch.org/whl/cu124"]),
    # https://github.com/astral-sh/uv/issues/9647
    ("error: Distribution `torch==2.5.1 @ registry+https://download.pytorch.org/whl/cpu` can't be installed because it "
     "doesn't have a source distribution or wheel for the current platform",
     "other.uv_no_wheel_for_platform", ["`torch==2.5.1`", "https://download.pytorch.org/whl/cpu"]),
]


@pytest.mark.parametrize(("text", "rule", "values"), PASTED, ids=[r for _, r, _ in PASTED])
def test_other_wordings(text, rule, values):
    assert_names(explain_paste(text), rule, values)


NOT_CLAIMED = [
    # uv's error for a package that is not torch's (https://github.com/astral-sh/uv/issues/16329)
    ("error: Distribution `pyqt5-qt5==5.15.17 @ registry+https://pypi.org/simple` can't be installed because it doesn't "
     "have a source distribution or wheel for the current platform", "other.uv_no_wheel_for_platform"),
    # timm's registry keeps its own rule (https://github.com/snap-research/EfficientFormer/issues/21)
    ("RuntimeError: Unknown model (efficientformer_l1)", "other.openclip_unknown_model"),
    # an operator without a sparse kernel is the dispatcher's message (https://github.com/janhq/ichigo/issues/101)
    ("NotImplementedError: Could not run 'aten::empty.memory_format' with arguments from the 'SparseMPS' backend. This could "
     "be because the operator doesn't exist for this backend, or was omitted during the selective/custom build process (if "
     "using custom build).", "other.sparse_layout_unsupported"),
]


@pytest.mark.parametrize(("text", "rule"), NOT_CLAIMED, ids=[r for _, r in NOT_CLAIMED])
def test_near_misses_are_left_to_others(text, rule):
    import io

    from explainer.cli.explain import explain_stream

    assert all(d.rule != rule for d in explain_stream(io.StringIO(text))), text


def test_fixture_csr_degree_vector():
    diagnosis = explain_fixture("fixtures/other/sparse_compressed_1d.py")
    assert_names(diagnosis, "other.sparse_layout_unsupported", ["`torch.zeros`", "[6]", "dense (strided)"])


def test_fixture_cholesky_solve_vector_rhs():
    diagnosis = explain_fixture("fixtures/other/linalg_vector_operand.py")
    assert_names(diagnosis, "other.linalg_matrix_operand", ["b has 1 dimension,", "`b.unsqueeze(-1)`"])


def _csr():
    return torch.eye(3).to_sparse_csr()


LIVE_SPARSE = [
    (lambda: _csr().numpy(), ["`.numpy()`", "SparseCsr", "`.to_dense().numpy()`"]),
    (lambda: _csr().sum(dim=1), ["CSR", "`keepdim=True`"]),
    (lambda: _csr().stride(), ["Sparse CSR tensors have no strides"]),
    (lambda: torch.addmm(torch.zeros(2, 2).to_sparse(), torch.eye(2).to_sparse(), torch.eye(2),
                         out=torch.zeros(2, 2).to_sparse()), ["`addmm_sparse_dense`", "Sparse", "strided"]),
]


@pytest.mark.parametrize(("call", "values"), LIVE_SPARSE, ids=["numpy", "csr_sum", "csr_stride", "addmm_out"])
def test_live_sparse_layout_errors(call, values):
    assert_names(explainer.explain(raised(call)), "other.sparse_layout_unsupported", values)


LIVE_LINALG = [
    (lambda: torch.linalg.inv(torch.ones(3)), ["`linalg.inv`", "A to have at least 2 dimensions", "`.unsqueeze(0)`"]),
    (lambda: torch.linalg.solve_triangular(torch.eye(3), torch.ones(3), upper=True),
     ["`linalg.solve_triangular`", "B to have at least 2 dimensions", "`B.unsqueeze(-1)`"]),
    (lambda: torch.triangular_solve(torch.ones(3), torch.eye(3)), ["`torch.triangular_solve`", "b with 1 dimension"]),
    (lambda: torch.linalg.solve(torch.ones(3, 2), torch.ones(3)), ["`linalg.solve`", "3 by 2", "`torch.linalg.lstsq`"]),
]


@pytest.mark.parametrize(("call", "values"), LIVE_LINALG, ids=["inv", "solve_triangular", "triangular_solve", "solve"])
def test_live_linalg_operand_errors(call, values):
    assert_names(explainer.explain(raised(call)), "other.linalg_matrix_operand", values)
