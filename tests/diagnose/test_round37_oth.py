"""Round-37 wordings for other (custom ops and torch.library, the caching allocator's settings, the profiler, linalg
backends, SparseAdam, Pyro, CUDA IPC): each corpus message (verbatim from the opened rounds) is claimed, from its text
alone, by the right rule with the values it holds named; other wordings of the same families (from the threads cited)
are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r37_a.yaml#42", "other.magma_not_compiled", ["svd", "MAGMA"]),
    ("r37_a.yaml#51", "other.sparse_adam_dense_params", ["SparseAdam", "indices [0]"]),
    ("r37_a.yaml#61", "other.pyro_model_guide_mismatch", ["{'x'}"]),
    ("r37_b.yaml#48", "other.cuda_ipc_producer_terminated", ["CudaIPCTypes.cpp:15"]),
    ("r37_c.yaml#3", "other.alloc_conf_env_deprecated", ["PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"]),
    ("r37_c.yaml#15", "other.profiler_export_crash", ["export_chrome_trace", 'profiler.py", line 238', 'trainer.py", line 226']),
    ("r37_c.yaml#16", "other.profiler_trace_already_saved", ["export_chrome_trace", 'profiler.py", line 278']),
    ("r37_c.yaml#25", "other.torch_library_namespace_twice",
     ["custom_ops", "custom_matmul/extension.cpp:36", "other_custom_matmul/extension.cpp:49"]),
    ("r37_c.yaml#26", "other.torch_op_not_registered", ["custom::warp_perspective", "warp_perspective.so"]),
    ("r37_c.yaml#27", "other.torch_library_namespace_mismatch", ["foo", "my_classes", "class.cpp:60"]),
    ("r37_c.yaml#35", "other.alloc_conf_unrecognized_option", ["option: C", "_lazy_init", 'main.py", line 21']),
    ("r37_c.yaml#36", "other.alloc_conf_unrecognized_option", ["cudart", "_lazy_init"]),
    ("r37_c.yaml#37", "other.alloc_conf_unrecognized_option", ["release_lock_on_cudamalloc"]),
    ("r37_c.yaml#87", "other.profiler_kineto_not_running", ["server0", 'internal.py", line 204']),
    ("r37_c.yaml#88", "other.profiler_nvtx_internal_assert", ["nvtx_observer.cpp:116", "state_ptr", "record_function.cpp:497"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # the same namespace registered twice from one place (iree#19303) and from two files without FRAGMENT (pytorch#41917)
    ("RuntimeError: Only a single TORCH_LIBRARY can be used to register the namespace turbine; please put all of your "
     "definitions in a single TORCH_LIBRARY block.  If you were trying to specify implementations, consider using "
     "TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define operators for a single namespace "
     "in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  Previous registration of "
     "TORCH_LIBRARY was registered at /dev/null:86; latest registration was registered at /dev/null:86",
     "other.torch_library_namespace_twice", ["turbine", "/dev/null:86"]),
    ("Only a single TORCH_LIBRARY can be used to register the namespace decode; please put all of your definitions in a "
     "single TORCH_LIBRARY block.  If you were trying to specify implementations, consider using TORCH_LIBRARY_IMPL "
     "(which can be duplicated).  Previous registration of TORCH_LIBRARY was registered at "
     "/home/cloudhan/workspaces/torch_plugins/src/readjpeg_cpu.cpp:146; latest registration was registered at "
     "/home/cloudhan/workspaces/torch_plugins/src/readpng_cpu.cpp:87",
     "other.torch_library_namespace_twice", ["decode", "readjpeg_cpu.cpp:146", "readpng_cpu.cpp:87"]),
    # the fixed spelling "string", with the namespaces agreeing (pytorch#40725)
    ("  what():  1Explicitly provided namespace (torchvision) in schema string does not match namespace of enclosing "
     "TORCH_LIBRARY block (torchvision).  Move this definition to the (unique) TORCH_LIBRARY block corresponding to "
     "this namespace (and consider deleting the namespace from your schema string.)  (Error occurred while processing "
     "TORCH_LIBRARY block at /data/users/ezyang/vision/torchvision/csrc/vision.cpp:45)",
     "other.torch_library_namespace_mismatch", ["torchvision", "vision.cpp:45"]),
    # the warning quoted on its own (Leopard-EM#72)
    ("`Producer process has been terminated before all shared CUDA tensors released`",
     "other.cuda_ipc_producer_terminated", []),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # one operator defined twice, not a namespace (pytorch#148148)
    ("RuntimeError: Tried to register an operator (mylib::foo(Tensor(a!) x, Tensor(b!) y) -> ()) with the same name and "
     "overload name multiple times. Each overload's schema should only be registered with a single call to def(). "
     "Duplicate registration: registered at /dev/null:135. Original registration: registered at /dev/null:203",
     "other.torch_library_namespace_twice"),
    # another CUDA IPC warning of the producer (pytorch#118859)
    ("[W CudaIPCTypes.cpp:95] Producer process tried to deallocate over 1000 memory blocks referred by consumer "
     "processes. Deallocation might be significantly slowed down. We assume it will never going to b",
     "other.cuda_ipc_producer_terminated"),
    # a cuSOLVER failure in a build that has its backends (KinectFusion#4)
    ("RuntimeError: cusolver error: CUSOLVER_STATUS_EXECUTION_FAILED, when calling `cusolverDnSgetrf( handle, m, n, dA, "
     "ldda, static_cast<float*>(dataPtr.get()), ipiv, info)`", "other.magma_not_compiled"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
