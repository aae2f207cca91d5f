"""Round-19 wordings for autograd, numerics, dtype and shape (torch 0.3-1.4-era threads and operator edge cases:
sparse COO, torch.func, checkpoint): each corpus message (verbatim from the opened rounds) is claimed, from its text
alone, by the right rule with the values it holds named; near misses stay unclaimed; the errors this torch can raise
are explained live from their fixtures."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste

CORPUS_CASES = [
    # torch 0.3-0.4's from_numpy, which did not name the array's type; torch 1.x's, with the call on the failing line
    ("r19_b.yaml#70", "dtype.numpy_object_array", ["np.ndarray", "double, float, int64, int32, and uint8", "int8"]),
    ("r19_b.yaml#97", "dtype.numpy_object_array", ["this old PyTorch", "int8, int16, float16 and bool"]),
    ("r19_b.yaml#98", "dtype.numpy_object_array", ["`torch.as_tensor(x)`", "numpy.object_"]),
    # expand() with fewer sizes: the call as torch printed it
    ("r19_b.yaml#94", "shape.expand_rank", ["expand(torch.FloatTensor{[1, 1]}, size=[1])"]),
    ("r19_b.yaml#95", "shape.expand_rank", ["expand(torch.FloatTensor{[1, 2, 128, 128]}, size=[2, 128, 128])"]),
    ("r19_b.yaml#96", "shape.expand_rank", ["expand(torch.cuda.LongTensor{[50, 1]}, size=[50])"]),
    # dimension out of range: ATen's wording and THNN's (torch 0.2-0.3 softmax kernels, negative dims unwrapped)
    ("r19_b.yaml#82", "shape.dim_out_of_range", ["[-1, 0]", "got 1"]),
    ("r19_b.yaml#84", "shape.dim_out_of_range", ["[-2, 1]", "got 2"]),
    ("r19_b.yaml#85", "shape.dim_out_of_range", ["LogSoftMax.c:20", "got -1", "3 dims", "dim=2"]),
    ("r19_b.yaml#86", "shape.dim_out_of_range", ["SoftMax.c:19", "got 1", "1 dims", "dim=0"]),
    # torch 0.4's narrow refused a zero length with the "exceeds" wording although it fit
    ("r19_b.yaml#74", "shape.narrow_range", ["start (0)", "length (0)", "size (3)", "torch 0.4 refused zero-length"]),
    # sparse COO constructor invariants
    ("r19_b.yaml#57", "shape.sparse_coo_invariants", ["index 10", "dim 0", "size is 1"]),
    ("r19_b.yaml#58", "shape.sparse_coo_invariants", ["sparse_dim (3)", "dense_dim (0)", "got 1", "`.t()`"]),
    # torch.func / functorch
    ("r19_b.yaml#21", "autograd.vmap_unsupported", ["aten::copy_", "`other`", "`self`"]),
    # non-reentrant checkpoint: the recomputation saved another number of tensors
    ("r19_b.yaml#59", "autograd.checkpoint_metadata", ["torch.utils.checkpoint", "CheckpointError", "different number"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values)


def test_a_private_exception_class_ends_the_traceback_it_closes():
    # torch 1.13-2.1 name the linalg error "torch._C._LinAlgError": its frame is the place of the error
    diagnosis = explain_paste(corpus_message("r19_b.yaml#61"))
    assert diagnosis.rule == "numerics.cholesky_not_pd"
    place = diagnosis.location.to_dict() if diagnosis.location is not None else diagnosis.facts.get("raised_in")
    assert place and place["file"].endswith("weight_only/gptq.py") and place["line"] == 813, place


# pytorch/functorch#7: torch.tensor inside grad, in a traceback that runs through functorch's transforms
FUNCTORCH_TRACEBACK = """Traceback (most recent call last):
  File "t.py", line 8, in <module>
    print(grad(f)(*inps))
  File "/home/chilli/fb/functorch/functorch/_src/eager_transforms.py", line 152, in wrapper
    results = grad_and_value(f, argnums, has_aux=has_aux)(*args)
  File "/home/chilli/fb/functorch/functorch/_src/eager_transforms.py", line 110, in wrapper
    output = f(*args)
  File "t.py", line 5, in f
    t = torch.tensor(0)
RuntimeError: Cannot access data pointer of Tensor that doesn't have storage
"""


def test_a_storage_less_tensor_in_a_functorch_traceback_is_the_transforms():
    diagnosis = explain_paste(FUNCTORCH_TRACEBACK)
    assert_names(diagnosis, "autograd.func_transform_no_storage", ["data pointer", "GradTrackingTensor"])


NEAR_MISSES = [
    # the bare message: a torch.func wrapper's as often as an XLA tensor's (pytorch/xla#2652), so left unclaimed
    (corpus_message("r19_b.yaml#22"), "autograd.func_transform_no_storage"),
    # XLA's tensors have no storage either (pytorch/xla#929)
    ("import torch_xla\ndevice = 'xla:0'\nRuntimeError: Cannot access data pointer of Tensor that doesn't have storage",
     "autograd.func_transform_no_storage"),
    # an index past a dense tensor's size (traveller59/spconv#112)
    ("IndexError: index 1 is out of bounds for dimension 0 with size 1", "shape.sparse_coo_invariants"),
]


@pytest.mark.parametrize("text, rule", NEAR_MISSES, ids=[f"{r}-{i}" for i, (_, r) in enumerate(NEAR_MISSES)])
def test_near_misses_stay_with_other_rules(text, rule):
    claimed = [d.rule for d in explain_stream(io.StringIO(text))]
    assert rule not in claimed, claimed


LIVE_CASES = [
    ("fixtures/shape/sparse_coo_invariants.py", "shape.sparse_coo_invariants", ["index 10", "dim 0", "size is 1"]),
    ("fixtures/shape/sparse_coo_dims.py", "shape.sparse_coo_invariants", ["1 dimension(s)", "3 rows", "must list 3"]),
    ("fixtures/autograd/checkpoint_count_mismatch.py", "autograd.checkpoint_metadata", ["forward: 5", "recomputation: 2"]),
    ("fixtures/autograd/func_grad_storage.py", "autograd.func_transform_no_storage", ["TensorWrapper", "`grad`"]),
    ("fixtures/autograd/func_vmap_storage.py", "autograd.func_transform_no_storage",
     ["`x.untyped_storage()`", "BatchedTensorImpl", "`vmap`"]),
]


@pytest.mark.parametrize("fixture, rule, values", LIVE_CASES, ids=[c[0].rsplit("/", 1)[1] for c in LIVE_CASES])
def test_live_error_is_explained_with_its_values(fixture, rule, values):
    assert_names(explain_fixture(fixture), rule, values)
