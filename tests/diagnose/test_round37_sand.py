"""Round-37 wordings for shape, dtype, numerics and autograd (PyTorch as a numerical library: torch.linalg and the old
solvers, complex tensors, GPyTorch; data pipelines; custom operators and CUDA graphs): each corpus message (verbatim
from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named; other
wordings of the same families (from the threads cited, or raised live by torch) are claimed too, and near misses stay
unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste, raised


CORPUS_CASES = [
    ("r37_a.yaml#5", "numerics.linalg_failed", ["svd_cuda", "SBDSDC", "error: 2"]),
    ("r37_a.yaml#24", "autograd.eig_backward_ill_defined", ["eig_ backward", "complex eigenvalues"]),
    ("r37_a.yaml#25", "autograd.eig_backward_ill_defined", ["linalg_eig_backward", "eigenvectors"]),
    ("r37_a.yaml#48", "numerics.gpytorch_cg_nan", ["matrix-vector multiplication"]),
    ("r37_a.yaml#55", "numerics.linalg_failed", ["torch.linalg.lstsq", "error code: 69", "Batch element 0"]),
    ("r37_a.yaml#54", "shape.lstsq_underdetermined", ["torch.linalg.lstsq", "CUDA", "cuSOLVER"]),
    ("r37_a.yaml#56", "shape.lstsq_underdetermined", ["argument 2", "m >= n", "orMathMagma.cu:107"]),
    ("r37_a.yaml#57", "shape.view_as_complex_last_dim", ["torch.view_as_complex", "test_torch_view_as_complex.py"]),
    ("r37_a.yaml#68", "autograd.no_grad_fn", ["untitled27.py:36", "torch.autograd.grad", "element 0"]),
    ("r37_a.yaml#73", "autograd.non_scalar_backward", ["torch.complex64"]),
    ("r37_b.yaml#84", "dtype.numpy_object_array", ["numpy.datetime64"]),
    ("r37_c.yaml#23", "dtype.not_implemented", ['op', "Half", "op_cuda_kernel.cu:146"]),
    ("r37_c.yaml#33", "shape.channels_last_rank", ["channels_last", "train_realesrnet.py", "kernel1"]),
    ("r37_c.yaml#34", "shape.channels_last_rank", ["channels_last"]),
    ("r37_c.yaml#80", "autograd.grad_empty_inputs", ["make_graphed_callables", "graphs.py, line 318"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the same SVD wording with another LAPACK code (LiftedGAN#3)
    ("RuntimeError: svd_cuda: the updating process of SBDSDC did not converge (error: 7)", "numerics.linalg_failed",
     ["SBDSDC", "error: 7"]),
    # view_as_complex's stride check stays dtype.complex_view's (its size check moved to shape)
    ("RuntimeError: view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar "
     "type: BFloat16", "dtype.complex_view", ["BFloat16"]),
    # the 5-D format's twin of the channels_last check
    ("RuntimeError: required rank 5 tensor to use channels_last_3d format", "shape.channels_last_rank",
     ["channels_last_3d", "5"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def _view_as_complex_last_dim():
    import torch

    torch.view_as_complex(torch.randn(4, 8))


def _channels_last_3d():
    import torch

    torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last_3d)


def _lstsq_rank_deficient():
    import torch

    A = torch.zeros(4, 3, dtype=torch.float64)
    A[:, 0] = 1.0
    torch.linalg.lstsq(A, torch.ones(4, 1, dtype=torch.float64), driver="gels")


def _eig_phase():
    import torch

    A = torch.tensor([[0.0, -1.0, 0.2], [1.0, 0.0, 0.3], [0.1, 0.2, 2.0]], requires_grad=True)
    torch.linalg.eig(A)[1].imag.sum().backward()


def _grad_empty_inputs():
    import torch

    x = torch.randn(3, requires_grad=True)
    torch.autograd.grad(x.sum(), [])


def _complex_loss():
    import torch

    w = torch.randn(4, dtype=torch.complex128, requires_grad=True)
    (w * 2).sum().backward()


def _datetime_array():
    import numpy as np
    import torch

    torch.as_tensor(np.array(["2024-05-01"], dtype="datetime64[D]"))


@pytest.mark.parametrize("call, rule, values", [
    (_view_as_complex_last_dim, "shape.view_as_complex_last_dim", ["view_as_complex"]),
    (_channels_last_3d, "shape.channels_last_rank", ["channels_last_3d"]),
    (_lstsq_rank_deficient, "numerics.linalg_failed", ["torch.linalg.lstsq", "full rank"]),
    (_eig_phase, "autograd.eig_backward_ill_defined", ["linalg_eig_backward"]),
    (_grad_empty_inputs, "autograd.grad_empty_inputs", ["cannot be empty"]),
    (_complex_loss, "autograd.non_scalar_backward", ["torch.complex128"]),
    (_datetime_array, "dtype.numpy_object_array", ["numpy.datetime64"]),
], ids=lambda value: getattr(value, "__name__", None))
def test_live_messages_of_the_families(call, rule, values):
    error = raised(call)
    text = f"{type(error).__name__}: {error}"
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a singular matrix's inversion is not a rank-deficient least-squares solve (pytorch#76300)
    ("_LinAlgError: linalg.solve: The diagonal element 2 is zero, the solve could not be completed because the input "
     "matrix is singular.", "shape.lstsq_underdetermined"),
    # inputs that exist but do not require grad (autograd.grad_input_no_grad's fixture)
    ("RuntimeError: One of the differentiated Tensors does not require grad", "autograd.grad_empty_inputs"),
    # a conv's input rank (pytorch-histogram-loss#13), not a memory format
    ("RuntimeError: Expected 4-dimensional input for 4-dimensional weight [64, 3, 7, 7], but got 3-dimensional input "
     "of size [3, 224, 224] instead.", "shape.channels_last_rank"),
    # the forward solver failing (eigh_nan fixture) is not the backward's phase check
    ("torch._C._LinAlgError: linalg.eigh: The algorithm failed to converge because the input matrix is ill-conditioned "
     "or has too many repeated eigenvalues (error code: 2).", "autograd.eig_backward_ill_defined"),
    # Cholesky on a non-PD matrix is torch's own error, not GPyTorch's CG check
    ("torch._C._LinAlgError: linalg.cholesky: The factorization could not be completed because the input is not "
     "positive-definite (the leading minor of order 5 is not positive-definite).", "numerics.gpytorch_cg_nan"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
