"""Round-49 wordings for mixed precision on devices: FP8 and compute capability (Transformer Engine, torchao float8,
Triton's e4m3 conversions, an FP8 model loader), autocast and GradScaler without CUDA (a torch module called for the
context manager, GradScaler's CPU-loss assertion, Lightning's and transformers' AMP checks), apex amp's wrapper order
and its parameters on the CPU, and dtype mismatches in kernels (a compiled extension's dispatch, a convolution under a
newest-first traceback) and flat collectives: each corpus message (verbatim from the opened rounds) is claimed, from
its text alone, by the right rule with the values it holds named the way the coverage judge reads them; other
wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    # the TypeError under GradScaler's warning is the failure, not the warning
    ("r49_a.yaml#17", "other.torch_submodule_called", ['trainunet.py", line 39', "autocast_mode"]),
    # apex's CPU-parameter check is a device problem, not a model cast to half
    ("r49_a.yaml#37", "device.apex_amp_param_not_cuda", ["bert.embeddings.word_embeddings.weight", "torch.cuda.FloatTensor"]),
    ("r49_a.yaml#2", "device.fp8_compute_capability", ["8.9", "fp8_autocast"]),
    ("r49_a.yaml#3", "device.fp8_compute_capability", ["8.9", "8.6"]),
    ("r49_a.yaml#4", "device.fp8_compute_capability", ["f8e4m3nv", "90"]),
    ("r49_a.yaml#5", "device.fp8_compute_capability", ["8.9", "MI300+"]),
    ("r49_a.yaml#9", "dtype.not_implemented", ["torch_cluster", "BFloat16"]),
    ("r49_a.yaml#10", "device.lightning_accelerator_unavailable", ['train.py", line 363', "cpu_backend.py"]),
    ("r49_a.yaml#19", "device.gradscaler_loss_not_cuda", ['train.py", line 305', "outputs.is_cuda"]),
    ("r49_a.yaml#20", "shape.te_fp8_dims_divisible", ["896", "712"]),
    ("r49_a.yaml#21", "distributed.apex_amp_parallel_wrapper_order", ["DataParallel", "amp.initialize"]),
    ("r49_a.yaml#22", "distributed.collective_output_dtype", []),
    ("r49_a.yaml#26", "dtype.conv_input_type", ["torch.cuda.HalfTensor", 'base_lss_fpn.py", line 310']),
    ("r49_a.yaml#34", "device.fp16_requires_gpu", ['train.py", line 263', "--fp16"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # the module autocast_mode.py was called, and the warning before it did not stop the program
    assert_names(explain_paste(corpus_message("r49_a.yaml#17")), "other.torch_submodule_called",
                 ["`torch.cuda.amp.autocast_mode`", "separate matter"])
    # the width 712 is the dimension that is not a multiple of 16 (712 % 16 = 8)
    assert_names(explain_paste(corpus_message("r49_a.yaml#20")), "shape.te_fp8_dims_divisible",
                 ["width is not", "712 % 16 = 8"])
    # the scaler is on because CUDA is there; the loss is not on the GPU
    assert_names(explain_paste(corpus_message("r49_a.yaml#19")), "device.gradscaler_loss_not_cuda",
                 ["scaler.scale(loss).backward()", "on the CPU"])
    # torch_cluster's radius is a compiled extension's op, not a CPU-only torch kernel
    diagnosis = explain_paste(corpus_message("r49_a.yaml#9"))
    assert_names(diagnosis, "dtype.not_implemented", ["torch.ops.torch_cluster.radius", "compiled extension"])
    assert not any("On the CPU, run in float32" in fix for fix in diagnosis.fixes), diagnosis.fixes
    # the newest-first traceback: the convolution's call is the frame right below the message
    assert_names(explain_paste(corpus_message("r49_a.yaml#26")), "dtype.conv_input_type",
                 ["newest call first", "x = self.reduce_conv(x)"])


@pytest.mark.parametrize("text, rule, values", [
    # apex on machines or runs without the model on the GPU (ThilinaRajapakse/simpletransformers#27,
    # mgrankin/ru_transformers#41, NVIDIA/apex#230: apex before the advice was added)
    ("RuntimeError: Found param roberta.embeddings.word_embeddings.weight with type torch.FloatTensor, expected "
     "torch.cuda.FloatTensor.\nWhen using amp.initialize, you need to provide a model with parameters\nlocated on a CUDA "
     "device before passing it no matter what optimization level\nyou chose. Use model.to('cuda') to use the default "
     "device.", "device.apex_amp_param_not_cuda", ["roberta.embeddings.word_embeddings.weight", "torch.FloatTensor"]),
    ("RuntimeError: Found param transformer.wte.weight with type torch.FloatTensor, expected torch.cuda.FloatTensor.\n"
     "When using amp.initialize, you need to provide a model with parameters\nlocated on a CUDA device before passing it "
     "no matter what optimization level\nyou chose. Use model.to('cuda') to use the default device.",
     "device.apex_amp_param_not_cuda", ["transformer.wte.weight", "no GPU"]),
    ("RuntimeError: Found param block_one.conv.0.weight with type torch.FloatTensor, expected torch.cuda.FloatTensor.",
     "device.apex_amp_param_not_cuda", ["block_one.conv.0.weight"]),
    # the other advice of the same apex check stays the half-precision rule's (huggingface/transformers#8403)
    ("> RuntimeError: Found param model.model.shared.weight with type torch.cuda.HalfTensor, expected "
     "torch.cuda.FloatTensor.\n> When using amp.initialize, you do not need to call .half() on your model",
     "other.apex_amp_param_not_fp32", ["model.model.shared.weight", "half"]),
    # Triton's e4m3 conversion on an L40S, sm_89 (triton-lang/triton#4232, its title)
    ("Conversion from/to f8e4m3nv is only supported on compute capability >= 90", "device.fp8_compute_capability",
     ["f8e4m3nv", ">= 90"]),
    # TE's divisibility check: a batch of one token (NVIDIA/TransformerEngine#1571), and the wording before TE 1.5
    # (NVIDIA/TransformerEngine#688)
    ("AssertionError: FP8 execution requires 2D input matrices with height divisible by 8 and width divisible by 16, but "
     "got tensor with dims=[1, 256]", "shape.te_fp8_dims_divisible", ["[1, 256]", "height is not", "1 % 8 = 1"]),
    ("AssertionError: Tensor dimensions are not compatible for FP8 execution: (2048 % 8 != 0, 767 % 16 != 0)",
     "shape.te_fp8_dims_divisible", ["[2048, 767]", "767 % 16 = 15"]),
    # apex's wrapper order with DDP (ROCm/pytorch-micro-benchmarking PR #7) and on one line (airaria/TextBrewer#55,
    # ray-project/ray PR #15645)
    ("RuntimeError: Incoming model is an instance of torch.nn.parallel.DistributedDataParallel. Parallel wrappers should "
     "only be applied to the model(s) AFTER \nthe model(s) have been returned from amp.initialize.",
     "distributed.apex_amp_parallel_wrapper_order", ["torch.nn.parallel.DistributedDataParallel", "device_ids"]),
    ("RuntimeError: Incoming model is an instance of torch.nn.parallel.DataParallel. Parallel wrappers should only be "
     "applied to the model(s) AFTER the model(s) have been returned from amp.initialize.",
     "distributed.apex_amp_parallel_wrapper_order", ["torch.nn.parallel.DataParallel"]),
    ("Incoming model is an instance of torch.nn.parallel.DataParallel. Parallel wrappers should only be applied to the "
     "model(s) AFTER  the model(s) have been returned from amp.initialize.",
     "distributed.apex_amp_parallel_wrapper_order", ["DataParallel"]),
    # GradScaler's assertion on a CPU run (karpathy/nanoGPT#317), IPython's frame (pytorch/xla#3559), the bare
    # assertion (wlsdml1114/diff-svc#63)
    ("  File \"/home/projects/nanoGPT/env-nano-gpt/lib/python3.10/site-packages/torch/cuda/amp/grad_scaler.py\", line "
     "166, in scale\n    assert outputs.is_cuda or outputs.device.type == 'xla'\nAssertionError",
     "device.gradscaler_loss_not_cuda", ["outputs.is_cuda or outputs.device.type == 'xla'"]),
    ("  File ~\\anaconda3\\envs\\pvt2\\lib\\site-packages\\torch\\cuda\\amp\\grad_scaler.py:161 in scale\n    assert "
     "outputs.is_cuda or outputs.device.type == 'xla'\n\nAssertionError", "device.gradscaler_loss_not_cuda",
     ["outputs.is_cuda"]),
    ("    assert outputs.is_cuda or outputs.device.type == 'xla'\nAssertionError", "device.gradscaler_loss_not_cuda",
     ["enabled="]),
    # the flat all-gather under DeepSpeed ZeRO-3 (deepspeedai/DeepSpeed#4873) and as thread titles
    # (deepspeedai/DeepSpeed#8072, huggingface/trl#6089)
    ("  File \"/mnt/afs/liwenhao/mplug_owl/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", line "
     "2532, in all_gather_into_tensor\n    work = group._allgather_base(output_tensor, input_tensor)\nRuntimeError: "
     "output tensor must have the same type as input tensor", "distributed.collective_output_dtype",
     ["_allgather_base", "dtype"]),
    ("[BUG] ZeRO-3 + PEFT (LoRA) regression in 0.19.2: TypeError: output tensor must have the same type as input tensor "
     "in _allgather_params_coalesced", "distributed.collective_output_dtype", ["_allgather_params_coalesced"]),
    ("CI fails for distributed smoke tests: TypeError: output tensor must have the same type as input tensor",
     "distributed.collective_output_dtype", ["all_gather_into_tensor"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # a project's own module called by name from a config (yassouali/pytorch-segmentation#131): no torch module
    ("Traceback (most recent call last):\n  File \"train.py\", line 72, in <module>\n    main(config, args.resume)\n"
     "  File \"train.py\", line 32, in main\n    train_loader = get_instance(dataloaders, 'train_loader', config)\n"
     "  File \"train.py\", line 26, in get_instance\n    return getattr(module, config[name]['type'])(*args, "
     "**config[name]['args'])\nTypeError: 'module' object is not callable", "other.torch_submodule_called"),
    # Triton's frontend refusing the type on the same GPUs: a compile error (sgl-project/sglang#5871)
    ("type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\"",
     "device.fp8_compute_capability"),
    # torch's own _scaled_mm size check (pytorch/ao#3111)
    ("RuntimeError: Expected trailing dimension of mat1 to be divisible by 16 but got mat1 shape: (18432x1).",
     "shape.te_fp8_dims_divisible"),
    # the GradScaler warning alone: CUDA missing, not a CPU loss (aladdinpersson/Machine-Learning-Collection#147)
    ("UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
     "device.gradscaler_loss_not_cuda"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_a_traceback_printed_oldest_first_reads_no_newest_first_frame():
    # the usual order, the message last (deepspeedai/DeepSpeed#904, its title): nothing below the message to read
    diagnosis = explain_paste("The correct way to use ZeRO? [RuntimeError: Input type (torch.cuda.FloatTensor) and "
                              "weight type (torch.cuda.HalfTensor) should be the same]")
    assert diagnosis.rule == "dtype.conv_input_type"
    assert "newest call first" not in diagnosis.summary
