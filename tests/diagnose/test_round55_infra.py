"""Round-55 wordings from PyTorch on shared infrastructure (a Slurm batch script's Killed line for a containerised run,
Colab's TPU Node without tpu-env, an op builder refusing a CUDA 12 minor mismatch, cuInit failing in an LXD
container, NVML in a Docker container, DCP's flat shard against a full tensor, NCCL's /dev/shm segment, an unmapped
container uid under torch's inductor cache, Kokkos' own CUDA error under MPICH, and the values that SGLang's pynccl,
NVIDIA DALI, the R torch package, Lightning, Horovod, the NCCL watchdog and an application's pipeline log add): each
corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it
holds named the way the coverage judge reads them; other wordings of the same families (from the threads cited) are
claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r55_b.yaml#1", "distributed.nccl_error", ["ncclCommInitRank", "PyNcclCommunicator"]),
    ("r55_b.yaml#8", "device.illegal_memory_access", ["conv2d", "cudaErrorIllegalAddress (700)", "dali::CUDAError"]),
    ("r55_b.yaml#10", "memory.process_killed", ["Killed", "train.py"]),
    ("r55_b.yaml#20", "other.glibc_version_not_found", ["GLIBC_2.27", "liblantern.so"]),
    ("r55_b.yaml#21", "device.lightning_accelerator_unavailable", ["[0, 1, 2, 3]", "MisconfigurationException"]),
    ("r55_b.yaml#23", "other.xla_tpu_metadata_unavailable", ["HTTP 404", "tpu-env"]),
    ("r55_b.yaml#27", "distributed.horovod_nccl_failed", ["ncclCommInitRank", "horovod_torch_wait_and_clear"]),
    ("r55_b.yaml#38", "other.extension_cuda_version_mismatch", ["12.3", "12.1"]),
    ("r55_b.yaml#39", "device.unspecified_launch_failure", ["ProcessGroupNCCL.cpp:1895", "Rank 1"]),
    ("r55_b.yaml#40", "device.no_cuda_device", ["CUDAFunctions.cpp:108", "_cuda_getDeviceCount"]),
    ("r55_b.yaml#43", "device.nvml_init_warning", ["NVML", "__init__.py:829"]),
    ("r55_b.yaml#50", "data.dcp_size_mismatch",
     ["torch.Size([257152, 2048])", "torch.Size([131661824])", "embed_tokens.weight"]),
    ("r55_b.yaml#52", "device.cuda_busy_unavailable", ["krea-realtime-video"]),
    ("r55_b.yaml#56", "distributed.nccl_shared_memory", ["/dev/shm/nccl-pZafXL", "7340384"]),
    ("r55_b.yaml#60", "other.getpwuid_uid_not_found", ["getpwuid()", "1042", "cache_dir_utils.py"]),
    ("r55_b.yaml#61", "other.getpwuid_uid_not_found", ["getpwuid()", "501"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # 257152 x 2048 is exactly four times 131661824: one rank's flat FSDP shard against the full embedding
    assert_names(explain_paste(corpus_message("r55_b.yaml#50")), "data.dcp_size_mismatch",
                 ["exactly 1/4", "FSDP flat parameter", "LOCAL_STATE_DICT"])
    # the paste is SGLang's copy of vLLM's pynccl, not vLLM's
    assert_names(explain_paste(corpus_message("r55_b.yaml#1")), "distributed.nccl_error",
                 ["SGLang's own NCCL binding", "`PyNcclCommunicator`"])
    # 12.3 against 12.1 differ only in the minor version: the old builder's table, not a major mismatch
    assert_names(explain_paste(corpus_message("r55_b.yaml#38")), "other.extension_cuda_version_mismatch",
                 ["differ only in the minor version", "cuda_minor_mismatch_ok", "lightseq"])
    # a Slurm job's shell: the job's memory cgroup, not a time limit
    assert_names(explain_paste(corpus_message("r55_b.yaml#10")), "memory.process_killed",
                 ["Slurm batch job", "--mem", "`singularity exec --nv ../singularity/pytorch.sif python"])
    # a 404 from the metadata server: a Google Cloud machine that is not a TPU VM (Colab's TPU Node)
    assert_names(explain_paste(corpus_message("r55_b.yaml#23")), "other.xla_tpu_metadata_unavailable",
                 ["not a Cloud TPU VM", "TPU Node", "torch_xla 2.0"])
    # the uid has no /etc/passwd entry: TORCHINDUCTOR_CACHE_DIR avoids the lookup
    diagnosis = explain_paste(corpus_message("r55_b.yaml#60"))
    assert_names(diagnosis, "other.getpwuid_uid_not_found", ["uid 1042", "default_cache_dir", "TORCHINDUCTOR_CACHE_DIR"])
    assert any("TORCHINDUCTOR_CACHE_DIR" in fix for fix in diagnosis.fixes)
    # DALI's report is the same sticky error met again in its thread
    assert_names(explain_paste(corpus_message("r55_b.yaml#8")), "device.illegal_memory_access",
                 ["NVIDIA DALI", "not a second fault"])
    # the NCCL watchdog only noticed the crash of rank 1's kernel
    assert_names(explain_paste(corpus_message("r55_b.yaml#39")), "device.unspecified_launch_failure",
                 ["on Rank 1 ProcessGroupNCCL's watchdog"])


def test_nvml_warning_with_torch_next_warning_names_that_reason():
    # chemprop/chemprop#929: NVML first, then torch's own "driver too old (found version 11040)" warning
    diagnosis = explain_paste(corpus_message("r39_b.yaml#84"))
    assert_explained(diagnosis, "device.nvml_init_warning", ["11040", "CUDAFunctions.cpp:108"])
    assert_names(diagnosis, "device.nvml_init_warning", ["The NVIDIA driver on your system is too old", "11.4"])


def test_nccl_error_line_before_its_last_error_keeps_its_version():
    # torch 2.x prints the NCCL error first and the segment under "Last error:" (pytorch/torchtitan#853)
    assert_explained(explain_paste(corpus_message("r55_b.yaml#54")), "distributed.nccl_shared_memory",
                     ["/dev/shm/nccl-1YsMbG", "7340384", "2.21.5"])


def test_kokkos_cuda_error_under_mpich_is_not_a_pytorch_failure():
    # E3SM's Kokkos names its own source file: a foreign message, neither a CUDA device error nor an MPI abort of torch's
    text = corpus_message("r55_b.yaml#26")
    assert_left_alone(text, "*")
    assert_left_alone(text, "distributed.mpi_abort")


@pytest.mark.parametrize("text, rule, values", [
    # Kokoro-FastAPI's GPU image on a Maxwell GPU (remsky/Kokoro-FastAPI#406)
    ("/app/.venv/lib/python3.10/site-packages/torch/cuda/__init__.py:734: UserWarning: Can't initialize NVML\n"
     "  warnings.warn(\"Can't initialize NVML\")\nINFO:     Started server process [30]",
     "device.nvml_init_warning", ["torch/cuda/__init__.py:734", "--gpus all"]),
    # unstructured-api's container (Unstructured-IO/unstructured-api#418)
    ("2024-05-20 12:44:22 /home/notebook-user/.local/lib/python3.10/site-packages/torch/cuda/__init__.py:619: "
     "UserWarning: Can't initialize NVML\n2024-05-20 12:44:22   warnings.warn(\"Can't initialize NVML\")",
     "device.nvml_init_warning", ["torch/cuda/__init__.py:619"]),
    # libtpu's own fetch of tpu-env on a machine that is not a TPU VM (pytorch/xla#4847)
    ("Failed to get 'tpu-env' from instance metadata: Failed to fetch URL (http status: 404) No error",
     "other.xla_tpu_metadata_unavailable", ["tpu-env", "http status: 404"]),
    # vllm's container on a v5litepod-8 that cannot reach the metadata server (pytorch/xla#8297)
    ("ERROR 10-21 02:38:59 worker_base.py:464] requests.exceptions.ConnectionError: HTTPConnectionPool("
     "host='metadata.google.internal', port=80): Max retries exceeded with url: /computeMetadata/v1/instance/attributes/"
     "tpu-env (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f01780d21a0>: Failed to "
     "establish a new connection: [Errno 111] Connection refused'))",
     "other.xla_tpu_metadata_unavailable", ["Connection refused", "TPU_SKIP_MDS_QUERY"]),
    # EasyR1's Ray runner in a container with a small /dev/shm (hiyouga/EasyR1#228)
    ("(Runner pid=868697) Error while creating shared memory segment /dev/shm/nccl-UmqSM9 (size 7340384)",
     "distributed.nccl_shared_memory", ["/dev/shm/nccl-UmqSM9", "7340384"]),
    # the other actor's copy of the DCP line (RLinf/RLinf#655)
    ("(EmbodiedFSDPActor pid=9671) ValueError: Size mismatch between saved torch.Size([257152, 2048]) and current: "
     "torch.Size([131661824]) for fsdp_checkpoint.model.paligemma_with_expert.paligemma.model.language_model."
     "embed_tokens.weight", "data.dcp_size_mismatch", ["torch.Size([131661824])", "exactly 1/4"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


def test_kokkos_initialize_error_is_foreign_too():
    # Kokkos::initialize() refusing a device id (kokkos/kokkos#5279)
    assert_left_alone("01:25:29 Error: Requested GPU with id '2' but only 2GPU(s) available! Raised by "
                      "Kokkos::initialize().", "*")


@pytest.mark.parametrize("text, not_rule", [
    # nvidia-smi's own report in an image started without --gpus all (PaddlePaddle/FastDeploy#2390)
    ("Error: Failed to initialize NVML", "device.nvml_init_warning"),
    # a Kubernetes worker's metadata attribute, not the TPU's (kelseyhightower/kubernetes-the-hard-way#454)
    ("The requested URL <code>/computeMetadata/v1/instance/attributes/pod-cidr</code> was not found on this server. "
     "That's all we know.", "other.xla_tpu_metadata_unavailable"),
    # Module.load_state_dict's size mismatch under FSDP, not DCP's (huggingface/transformers#34080)
    ("size mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([65667584]) from checkpoint, "
     "the shape in current model is torch.Size([128256, 2048]).", "data.dcp_size_mismatch"),
    # DeepSpeed letting a mismatch through with DS_SKIP_CUDA_CHECK=1 (deepspeedai/DeepSpeed#3436)
    ("[WARNING]  DeepSpeed Op Builder: Installed CUDA version 12.1 does not match the version torch was compiled with "
     "11.8.Detected `DS_SKIP_CUDA_CHECK=1`: Allowing this combination of CUDA, but it may result in unexpected behavior.",
     "other.extension_cuda_version_mismatch"),
    # ggml's own cudaSetDevice failure: llama.cpp's, not Kokkos' (ggml-org/llama.cpp#11841)
    ("CUDA error: CUDA-capable device(s) is/are busy or unavailable\n  current device: 0, in function "
     "ggml_cuda_set_device at /appuser/llama.cpp/llama.cpp-b4704/ggml/src/ggml-cuda/ggml-cuda.cu:86\n"
     "  cudaSetDevice(device)", "other.not_pytorch_kokkos"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_torch_onnx_summary_of_the_uid_keyerror_keeps_its_export_reading():
    # torch.onnx's "<class 'KeyError'>:" summary line under TorchExportError (pasteurlabs/tesseract-core#425)
    text = corpus_message("r5_b.yaml#100")
    assert explain_paste(text).rule == "compile.onnx_export_failed"


def test_slurm_oom_kill_line_keeps_the_slurm_reading():
    # the batch script's Killed line with slurmstepd's oom-kill report under it (ArjunaCluster/ArjunaUsers#52)
    assert explain_paste(corpus_message("r21_b.yaml#47")).rule == "memory.slurm_oom_kill"
