"""Round-39 wordings for device, distributed, memory and compile left by the first wave (optimizer state on another
device in torch 0.3, ZeRO's unconsolidated state, torch_extensions builds, DeepSpeed's op check, Boltz's skipped
batch, exchangeDevice, libtpu, torch 0.3's ONNX export, sparse clones): each corpus message (verbatim from the opened
rounds) is claimed by the right rule with its values named; other real wordings are claimed too, near misses not."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r39_a.yaml#17", "device.legacy_cuda_argument_to_cpu_tensor",
     ["torch.cuda.FloatTensor", "exp_avg.mul_(beta1).add_(1 - beta1, grad)", "add_"]),
    ("r39_a.yaml#19", "distributed.zero_optimizer_state_not_consolidated", ["consolidate_state_dict()"]),
    ("r39_b.yaml#2", "compile.torch_extension_so_missing",
     ["evoformer_attn.so", "_import_module_from_library", "cpp_extension.py:2634"]),
    ("r39_b.yaml#3", "compile.torch_extension_so_missing", ["evoformer_attn.so", "torch_extensions"]),
    ("r39_b.yaml#4", "compile.deepspeed_op_jit_incompatible", ["evoformer_attn"]),
    ("r39_b.yaml#52", "memory.oom_skipping_batch", ["skipping batch"]),
    ("r39_b.yaml#78", "device.exchange_device_no_gpu", ["exchangeDevice"]),
    ("r39_c.yaml#23", "device.xla_tpu_library_symbol_missing",
     ["tpu_library_init_fns.inc:85", "TpuUtil_GetXlaPadSizeFromTpuTopology"]),
    ("r39_c.yaml#79", "compile.onnx_python_operator", ["Max"]),
    ("r39_c.yaml#80", "compile.sparse_clone_memory_format", ["Preserve", "torch.preserve_format"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # SGD's momentum buffer after resuming (deepspeech.pytorch#195), Adagrad's sum (allennlp#1102)
    ("  File \"/usr/local/lib/python2.7/dist-packages/torch/optim/sgd.py\", line 94, in step\n"
     "    buf.mul_(momentum).add_(1. - dampening, d_p)\n"
     "TypeError: add_ received an invalid combination of arguments - got (float, torch.cuda.FloatTensor), but expected one of:\n"
     " * (float value)\n * (torch.FloatTensor other)\n * (torch.SparseFloatTensor other)\n"
     " * (float value, torch.FloatTensor other)\n"
     "      didn't match because some of the arguments have invalid types: (float, torch.cuda.FloatTensor)\n"
     " * (float value, torch.SparseFloatTensor other)\n"
     "      didn't match because some of the arguments have invalid types: (float, torch.cuda.FloatTensor)",
     "device.legacy_cuda_argument_to_cpu_tensor", ["add_", "torch.cuda.FloatTensor", "sgd.py:94"]),
    ("state['sum'].addcmul_(1, grad, grad)\nTypeError: addcmul_ received an invalid combination of arguments - got (int, "
     "torch.cuda.FloatTensor, torch.cuda.FloatTensor), but expected one of:\n\n(torch.FloatTensor tensor1, torch.FloatTensor "
     "tensor2)\n(torch.SparseFloatTensor tensor1, torch.SparseFloatTensor tensor2)\n(float value, torch.FloatTensor tensor1, "
     "torch.FloatTensor tensor2)\ndidn't match because some of the arguments have invalid types: (int, torch.cuda.FloatTensor, "
     "torch.cuda.FloatTensor)", "device.legacy_cuda_argument_to_cpu_tensor", ["addcmul_", "torch.cuda.FloatTensor"]),
    # the error form of torch >= 1.9 and fairscale's OSS, through Lightning (pytorch-lightning#10745)
    ("RuntimeError: Optimizer state has not been consolidated on this rank.                 Please call "
     "`consolidate_state_dict()` on all ranks beforehand if you meant to save the global state",
     "distributed.zero_optimizer_state_not_consolidated", ["consolidate_state_dict()"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a complex lr, no CUDA type (structure_knowledge_distillation#23)
    ("TypeError: add_() received an invalid combination of arguments - got (complex, Tensor), but expected one of:\n"
     " * (Tensor other, Number alpha)\n"
     "      didn't match because some of the arguments have invalid types: (!complex!, !Tensor!)\n"
     " * (Number other, Number alpha)\n"
     "      didn't match because some of the arguments have invalid types: (!complex!, !Tensor!)",
     "device.legacy_cuda_argument_to_cpu_tensor"),
    # a system library, not a torch extension build (LLMDet#32)
    ("ImportError: libcudart.so.10.1: cannot open shared object file: No such file or directory",
     "compile.torch_extension_so_missing"),
    # the build was tried and failed (openfold#452)
    ("RuntimeError: Error building extension 'evoformer_attn'", "compile.deepspeed_op_jit_incompatible"),
    # the strided-only check of a custom op (Open-Sora#160), and DIPU's own check (DIOPI#1317)
    ("RuntimeError: memory format option is only supported by strided tensors", "compile.sparse_clone_memory_format"),
    ("RuntimeError: unsupported memory format Preserve", "compile.sparse_clone_memory_format"),
    # a device string, not exchangeDevice (Federated-Learning-PyTorch#28)
    ("RuntimeError: Invalid device string: '0'", "device.exchange_device_no_gpu"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
