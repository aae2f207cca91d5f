"""Round-35 (second wave) wordings for dtype and compile, and older compile leftovers (rounds 32-34): each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named; other wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r35_a.yaml#70", "dtype.pyg_dataset_index", ["Tensor", "long", "bool"]),
    ("r35_c.yaml#16", "compile.fx_not_submodule", ["self.encoder"]),
    ("r32_a.yaml#76", "compile.config_option_missing", ["torch._dynamo.config.recompile_limit", "cache_size_limit"]),
    ("r34_b.yaml#56", "compile.jit_required_attribute_undefined", ["'value'"]),
    ("r32_c.yaml#34", "compile.jit_load_truncated_pickle", ["Unexpected end of pickler archive"]),
    ("r32_b.yaml#29", "compile.nvfuser_fallback",
     ["graph_fuser.cpp:108", "manager.cpp:340", "runCudaFusionGroup", "PYTORCH_NVFUSER_DISABLE=fallback"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # PyG 1.x's wording, a NumPy int32 index (pytorch_geometric#2611)
    ("IndexError: Only integers, slices (`:`), list, tuples, and long or bool tensors are valid indices (got int32).",
     "dtype.pyg_dataset_index", ["int32", "long or bool"]),
    # inductor's config module, an option newer than the installed torch (metavoice-src#88)
    ("AttributeError: torch._inductor.config.fx_graph_cache does not exist", "compile.config_option_missing",
     ["torch._inductor.config.fx_graph_cache", "2.2"]),
    # a Torch-TensorRT build reading a graph of another torch (TensorRT#1755)
    ("  File \"/home/bo/.virtualenvs/my_env/lib/python3.8/site-packages/torch_tensorrt/ts/_compiler.py\", line 136, in "
     "compile\n    compiled_cpp_mod = _C.compile_graph(module._c, _parse_compile_spec(spec))\nRuntimeError: required "
     "keyword attribute 'to' is undefined", "compile.jit_required_attribute_undefined", ["`to`", "compile_graph"]),
    # the model saved after optimize_for_inference (pytorch#62706)
    ("  File \"/home/naveen/anaconda3/envs/pt19/lib/python3.8/site-packages/torch/jit/_serialization.py\", line 161, in "
     "load\n    cpp_module = torch._C.import_ir_module(cu, str(f), map_location, _extra_files)\nRuntimeError: required "
     "keyword attribute 'value' is undefined", "compile.jit_required_attribute_undefined", ["optimize_for_inference"]),
    # NVFuser's fallback warning as Python prints it (pytorch#88050), and torch 1.8's wording (csarofeen/pytorch#572)
    ("C:\\Python310\\lib\\site-packages\\torch\\nn\\modules\\module.py:1423: UserWarning: FALLBACK path has been "
     "taken inside: torch::jit::fuser::cuda::runCudaFusionGroup. This is an indication that codegen Failed for some "
     "reason.\nTo debug try disable codegen fallback path via setting the env variable `export "
     "PYTORCH_NVFUSER_DISABLE=fallback`\n (Triggered internally at ..\\torch\\csrc\\jit\\codegen\\cuda\\manager.cpp:336.)",
     "compile.nvfuser_fallback", ["runCudaFusionGroup", "manager.cpp:336", "PYTORCH_NVFUSER_DISABLE=fallback"]),
    ("[W manager.cpp:255] Warning: FALLBACK path has been taken. This is an indication that codegenFailed for some "
     "reason. To debug try disable codegen fallback pathvia setting the env variable`export "
     "PYTORCH_NVFUSER_DISABLE_FALLBACK=1` (function compileCudaFusionGroup)", "compile.nvfuser_fallback",
     ["PYTORCH_NVFUSER_DISABLE_FALLBACK=1"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # torch's own indexing with a set (pytorch#69800), and NumPy's (HyperDenseNet_pytorch#4): not a PyG dataset
    ("IndexError: only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
     "(got set)", "dtype.pyg_dataset_index"),
    ("IndexError: only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays "
     "are valid indices", "dtype.pyg_dataset_index"),
    # the config submodule not imported (sapiens#141): not an unknown option
    ("AttributeError: module 'torch._inductor' has no attribute 'config'", "compile.config_option_missing"),
    # Python's pickle on a cut-short file (GOC-VRPTW#5): not the TorchScript loader
    ("UnpicklingError: pickle data was truncated", "compile.jit_load_truncated_pickle"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
