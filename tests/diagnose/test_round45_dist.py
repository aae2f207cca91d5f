"""Round-45 wordings for distributed training (DDP's device_ids checks, torchrun's agent and DeepSpeed's launcher, NCCL's
data types and test runs, Horovod's build and import, Open MPI's mpirun and signal handler, SLURM's variables, tensor
parallelism in ColossalAI and foundation-model-stack, SyncBatchNorm on the CPU): each corpus message (verbatim from the
opened round) is claimed, from its text alone, by the right rule with the values it holds named the way the coverage
judge reads them; other wordings of the same families (from the threads cited) are claimed too, and near misses stay
unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r45_a.yaml#4", "distributed.address_in_use", ["DistNetworkError"]),
    ("r45_a.yaml#17", "distributed.child_failed", ["3353707", "src/train_bash.py"]),
    ("r45_a.yaml#22", "distributed.child_failed", ["NCCL", "14708", "_new_process_group_helper"]),
    ("r45_a.yaml#35", "distributed.ddp_device_ids_multiple", ["device_ids"]),
    ("r45_a.yaml#36", "distributed.ddp_device_ids_cpu_module", ["device_ids", "1"]),
    ("r45_a.yaml#56", "distributed.nccl_error", ["NCCLUtils.hpp:29", "SIGIOT", "test_c10d"]),
    ("r45_a.yaml#66", "distributed.elastic_sigterm", ["SIGHUP", "85005"]),
    ("r45_a.yaml#11", "distributed.horovod_extension_not_built", ["horovod.torch", "HOROVOD_WITH_PYTORCH=1", "train.py:12"]),
    ("r45_a.yaml#12", "distributed.horovod_extension_not_built", ["horovod.torch", "HOROVOD_WITH_PYTORCH=1"]),
    ("r45_a.yaml#13", "distributed.horovod_extension_not_built", ["horovod.torch", "HOROVOD_WITH_PYTORCH=1"]),
    ("r45_a.yaml#15", "distributed.horovod_build_torch_no_cuda", ["cuda.h", "THCGeneral.h:12:10", "DistutilsPlatformError"]),
    ("r45_a.yaml#40", "distributed.deepspeed_batch_size", ["2", "1"]),
    ("r45_a.yaml#46", "distributed.slurm_env_missing", ["SLURM_PROCID", "dist.py:53"]),
    ("r45_a.yaml#47", "distributed.slurm_env_missing", ["SLURM_NODEID", "slurm.py:155"]),
    ("r45_a.yaml#82", "numerics.amp_overflow_skip", ["4294967296", "16777216.0", "stage2.py:1132"]),
    ("r45_a.yaml#83", "numerics.amp_overflow_skip", ["1", "stage2.py:1628"]),
    ("r45_a.yaml#42", "memory.cuda_oom", ["978.00 MiB", "4.00 GiB", "953850"]),
    ("r45_a.yaml#80", "distributed.mpirun_rank_signal", ["9", "Killed"]),
    ("r45_a.yaml#50", "distributed.syncbn_input_not_on_gpu", ["SyncBatchNorm", "GPU"]),
    ("r45_a.yaml#81", "distributed.mpi_signal_backtrace", ["libcuda.so.1", "Segmentation fault", "0x565391a57a40"]),
    ("r45_a.yaml#63", "distributed.tensor_parallel_divisibility", ["96", "64", "gpt_attention.py:49"]),
    ("r45_a.yaml#64", "distributed.tensor_parallel_divisibility", ["nheads", "world_size"]),
    ("r45_a.yaml#71", "distributed.nccl_unsupported_dtype", ["BFloat16", "irecv", "distributed_c10d.py:911"]),
    ("r45_a.yaml#31", "device.mismatch", ["THCGraclus.cu:31", "graclus_cluster", "one_to_three_graclus.py:128"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("where, rule, values", [
    # world size 1 against a train_batch_size of 2: a run started without a launcher
    ("r45_a.yaml#40", "distributed.deepspeed_batch_size", ["plain `python`"]),
    # signal 9 from mpirun: the out-of-memory killer
    ("r45_a.yaml#80", "distributed.mpirun_rank_signal", ["out-of-memory killer"]),
    # the driver aborted on a thread of its own; UCX's segfault came after
    ("r45_a.yaml#81", "distributed.mpi_signal_backtrace", ["the CUDA driver", "a consequence of the first crash"]),
    # SIGHUP forwarded by torchrun: the terminal that started it went away
    ("r45_a.yaml#66", "distributed.elastic_sigterm", ["hang-up", "tmux"]),
    # Lightning's SLURM environment forced by the code
    ("r45_a.yaml#47", "distributed.slurm_env_missing", ["SLURMEnvironment"]),
    # the NCCL-less torch build under kohya's torchrun on Windows
    ("r45_a.yaml#22", "distributed.child_failed", ["backend='gloo'"]),
    # the rank in the corpus message's prefix
    ("r45_a.yaml#64", "distributed.tensor_parallel_divisibility", ["divisor of `nheads`"]),
])
def test_the_reasons_the_corpus_messages_hold_are_read(where, rule, values):
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


def test_a_tensorflow_horovod_graph_error_is_not_claimed_as_pytorch():
    # TensorFlow 1.x's session error around a Horovod op (horovod/horovod#108): a negative control
    import io

    from explainer.cli.explain import explain_stream

    diagnoses = list(explain_stream(io.StringIO(corpus_message("r45_a.yaml#7"))))
    assert diagnoses and all(d.rule is None for d in diagnoses)
    assert any("TensorFlow 1.x's session error" in d.summary for d in diagnoses)


@pytest.mark.parametrize("text, rule, values", [
    # Horovod >= 0.21 names the missing library (horovod/horovod#3986), and a paste without the final period
    # (mit-han-lab/once-for-all#19)
    ("ImportError: Extension horovod.torch has not been built: /dockerdata/anaconda3/lib/python3.7/site-packages/horovod/"
     "torch/mpi_lib_v2.cpython-37m-x86_64-linux-gnu.so not found\nIf this is not expected, reinstall Horovod with "
     "HOROVOD_WITH_PYTORCH=1 to debug the build error.", "distributed.horovod_extension_not_built",
     ["horovod.torch", "mpi_lib_v2.cpython-37m-x86_64-linux-gnu.so"]),
    ("ImportError: Extension horovod.torch has not been built.  If this is not expected, reinstall Horovod with "
     "HOROVOD_WITH_PYTORCH=1 to debug the build error", "distributed.horovod_extension_not_built",
     ["HOROVOD_WITH_PYTORCH=1"]),
    # the same refusal as an issue's title, without the exception name or the comma (horovod/horovod#4051)
    ("Horovod build with GPU support was requested but this PyTorch installation does not support CUDA.",
     "distributed.horovod_build_torch_no_cuda", ["CPU-only"]),
    # torch 1.5's assertion, wrapped, for a model half on the CPU (wenwenyu/PICK-pytorch#21)
    ("AssertionError: DistributedDataParallel device_ids and output_device arguments only work\nwith single-device CUDA "
     "modules, but got device_ids [0], output_device 0, and\nmodule parameters {device(type='cuda', index=0), "
     "device(type='cpu')}.", "distributed.ddp_device_ids_cpu_module", ["[0]", "still on the CPU"]),
    # SyncBN configs run on the CPU (open-mmlab/mmagic#133, open-mmlab/mmocr#398)
    ("```ValueError: SyncBatchNorm expected input tensor to be on GPU```", "distributed.syncbn_input_not_on_gpu",
     ["type='BN'"]),
    ("`ValueError: SyncBatchNorm expected input tensor to be on GPU`", "distributed.syncbn_input_not_on_gpu",
     ["revert_sync_batchnorm"]),
    # a title without the space after the colon (facebookresearch/nougat#46)
    ("KeyError:'SLURM_NODEID'", "distributed.slurm_env_missing", ["SLURM_NODEID", "srun"]),
    # the cut exception quoted in a title (Ascend/sglang#625)
    ("[Bug] [Func] [B030] Service startup failed for deepseek_r1 model test cases, error: \"torch.distributed."
     "DistNetworkError: The server socket has failed to listen on any local network address\"",
     "distributed.address_in_use", ["DistNetworkError", "29500"]),
    # Open MPI's handler with the crash in Horovod's own library (horovod/horovod#585)
    ("[HOST:03599] *** Process received signal ***\n[HOST:03599] Signal: Segmentation fault (11)\n[HOST:03599] Signal "
     "code: Address not mapped (1)\n[HOST:03599] Failing at address: (nil)\n[HOST:03599] [ 0] /lib/x86_64-linux-gnu/"
     "libpthread.so.0(+0x11390)[0x7fe26f028390]\n[HOST:03599] [ 1] ..../virtualenv/tf1.8_horovod_no_ofed/local/lib/"
     "python2.7/site-packages/horovod/tensorflow/mpi_lib.so(+0x34887)[0x7fe1b6d46887]",
     "distributed.mpi_signal_backtrace", ["mpi_lib.so", "Horovod's own library"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # the full exception with its reason: a privileged port, distributed.store_bind_failed's (KimMeen/Time-LLM#158)
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The server "
     "socket has failed to bind to [::]:98 (errno: 13 - Permission denied). The server socket has failed to bind to "
     "0.0.0.0:98 (errno: 13 - Permission denied).", "distributed.address_in_use"),
    # a checkpoint's key, not an environment variable (amirbar/DETReg#68)
    ("1: checkpoint_args = torch.load(args.resume,map_location='cpu')['args']\nKeyError: 'args'",
     "distributed.slurm_env_missing"),
    # ColossalAI's divide() wording without its frame: any assertion may say it (hpcaitech/ColossalAI#3043, its last line)
    ("AssertionError: 96 is not divisible by 64", "distributed.tensor_parallel_divisibility"),
    # the launcher's line for an old torch with a multi-device module, not the device_ids list check (pytorch/pytorch#46821)
    ("`DistributedDataParallel device_ids and output_device arguments only work with single-device CUDA modules, but got "
     "device_ids 1`", "distributed.ddp_device_ids_multiple"),
    # an install that did work, Horovod's other build message (horovod/horovod#404)
    ("error: Neither TensorFlow nor PyTorch plugins were built. See errors above.", "distributed.horovod_extension_not_built"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
