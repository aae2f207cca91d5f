"""Round-21 wordings for autograd, numerics, dtype and shape (scientific uses of torch: torch.linalg's and LAPACK's
failures in every release's wording, GPyTorch's jitter retries, torchdiffeq's step assertions): each corpus message
(verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named;
near misses stay unclaimed or go to their own rule."""

from __future__ import annotations

import io

import pytest
import torch

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_paste, raised

CORPUS_CASES = [
    # GPyTorch/linear_operator psd_safe_cholesky: the error when the jitter ran out, and the retries' warnings
    ("r21_a.yaml#1", "numerics.cholesky_not_pd", ["1.0e-06", "cholesky_cpu", "U(41,41) is zero"]),
    ("r21_a.yaml#2", "numerics.cholesky_jitter_warning", ["from 1.0e-06 up to 1.0e-04", "cholesky.py:38"]),
    # TH's LAPACK wording of a failed Cholesky names the routine
    ("r21_a.yaml#3", "numerics.cholesky_not_pd", ["potrf", "order 2"]),
    # eig/eigvals/symeig/svd that did not converge: torch 2.x and 1.x wordings, with the batch and the code as printed
    ("r21_a.yaml#6", "numerics.linalg_failed", ["torch.linalg.eigvals", "batch element 1", "error code: 6"]),
    ("r21_a.yaml#7", "numerics.linalg_failed", ["symeig_cpu", "for batch 0", "80 off-diagonal elements"]),
    ("r21_a.yaml#8", "numerics.linalg_failed", ["symeig_cpu", "2 off-diagonal elements"]),
    ("r21_a.yaml#9", "numerics.linalg_failed", ["svd_cuda", "error: 2"]),
    ("r21_a.yaml#10", "numerics.linalg_failed", ["svd_cuda", "error: 7"]),
    # singular matrices: the diagonal element of U (torch 1.11+), U(i,i) (torch 1.x), for solve and inv alike
    ("r21_a.yaml#14", "numerics.linalg_failed", ["linalg.solve", "diagonal element 2"]),
    ("r21_a.yaml#15", "numerics.linalg_failed", ["linalg.inv", "diagonal element 1"]),
    ("r21_a.yaml#16", "numerics.linalg_failed", ["inverse_cuda", "U(1,1) is zero"]),
    ("r21_a.yaml#17", "numerics.linalg_failed", ["solve_cuda", "for batch 0", "U(1,1) is zero"]),
    # torchdiffeq: the adaptive step underflowed (nan: the dynamics diverged), a non-finite state, a fixed-step grid
    ("r21_a.yaml#25", "numerics.ode_solver_failed", ["step size of nan", "underflow in dt nan"]),
    ("r21_a.yaml#26", "numerics.ode_solver_failed", ["underflow in dt nan"]),
    ("r21_a.yaml#27", "numerics.ode_solver_failed", ["time_grid[-1] == t[-1]", "step_size"]),
    ("r21_a.yaml#28", "numerics.ode_solver_failed", ["-1.1727", "non-finite values in the ODE state"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values)


CITED_CASES = [
    # gpytorch 1.0-1.1: a RuntimeWarning, the jitter printed as 1e-08 (facebook/Ax#311)
    ("C:\\code\\env\\lib\\site-packages\\gpytorch\\utils\\cholesky.py:43: RuntimeWarning:\n"
     "A not p.d., added jitter of 1e-08 to the diagonal", "numerics.cholesky_jitter_warning",
     ["cholesky.py:43", "(1e-08)"]),
]


@pytest.mark.parametrize("message, rule, values", CITED_CASES, ids=[c[1] for c in CITED_CASES])
def test_cited_wording_is_explained(message, rule, values):
    assert_names(explain_paste(message), rule, values)


def test_cholesky_pivot_stays_with_the_cholesky_rule():
    # the same "U(1,1) is zero, singular U" words from cholesky_cuda are a Cholesky failure, not an LU one
    diagnosis = explain_paste(corpus_message("r21_a.yaml#18"))
    assert_names(diagnosis, "numerics.cholesky_not_pd", ["cholesky_cuda", "batch 0", "U(1,1) is zero"])


def test_a_backward_nan_is_not_the_ode_solvers():
    # a nan found by anomaly mode in backward (facebookresearch/svoice#78) is anomaly_nan's, not the ODE solver's
    message = "RuntimeError: Function 'DivBackward0' returned nan values in its 1th output."
    rules = [d.rule for d in explain_stream(io.StringIO(message)) if d.rule]
    assert rules[:1] == ["numerics.anomaly_nan"], rules


def test_live_singular_solve_names_its_call():
    # this torch says "The solver failed" for a singular solve; the rule names the call and the singular matrix
    import explainer

    diagnosis = explainer.explain(raised(lambda: torch.linalg.solve(torch.zeros(2, 2), torch.ones(2))))
    assert_names(diagnosis, "numerics.linalg_failed", ["torch.linalg.solve", "singular"])
