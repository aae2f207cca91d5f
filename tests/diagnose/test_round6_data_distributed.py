"""Round 6 data and distributed rules: real torch errors and the real-world wordings they were written from."""

from __future__ import annotations

from conftest import assert_names, explain_fixture, explain_paste


# --- data: live torch errors --------------------------------------------------------------------

def test_weighted_sampler_without_replacement_names_the_check_and_the_sampler():
    d = explain_fixture("fixtures/data/multinomial_sample_count.py")
    assert_names(d, "data.multinomial_sample_count", ["n_sample <= prob_dist.size(-1)", "WeightedRandomSampler"])
    assert d.category == "data"
    assert any("num_samples" in fix and "replacement=False" in fix for fix in d.fixes)


def test_zip_without_version_record_names_the_record():
    d = explain_fixture("fixtures/data/checkpoint_zip_record.py")
    assert_names(d, "data.checkpoint_zip_record", ["'version' record", 'hasRecord("version")'])
    assert any("namelist" in fix for fix in d.fixes)


# --- data: pasted wordings ----------------------------------------------------------------------

def test_old_multinomial_wording_wrapped_mid_word_names_replacement():
    d = explain_paste("RuntimeError: invalid argument 2: invalid multinomial distribution (with replacement=False, "
               "not enough non-negative cat\negory to sample) at ../aten/src/TH/generic/THTensorRandom.cpp:320")
    assert_names(d, "data.multinomial_sample_count", ["with replacement=False"])


def test_multinomial_category_limit_names_the_limit():
    d = explain_paste("RuntimeError: number of categories cannot exceed 2^24")
    assert_names(d, "data.multinomial_sample_count", ["2^24"])


def test_nan_probabilities_stay_with_numerics():
    d = explain_paste("RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)")
    assert d.rule == "numerics.nan_probabilities"


def test_state_dict_header_alone_names_the_class_and_the_wrapper_prefix():
    d = explain_paste("Traceback (most recent call last):\n  File \"eval.py\", line 188, in <module>\n"
               "    net.load_state_dict(ckp)\nRuntimeError: Error(s) in loading state_dict for DataParallel:")
    assert_names(d, "data.state_dict_errors_cut", ["for DataParallel", "'module.'"])
    assert any("model.module.load_state_dict" in fix for fix in d.fixes)


def test_state_dict_header_with_its_details_goes_to_the_key_rule():
    d = explain_paste("RuntimeError: Error(s) in loading state_dict for Net:\n"
               "\tMissing key(s) in state_dict: \"fc.weight\", \"fc.bias\". ")
    assert d.rule == "data.state_dict_keys"


def test_legacy_target_out_of_bounds_names_value_and_kernel():
    d = explain_paste("RuntimeError: Target 100 out of bounds at /.../pytorch/aten/src/THNN/generic/ClassNLLCriterion.c:56")
    assert_names(d, "data.target_out_of_bounds", ["label 100", "ClassNLLCriterion"])


# --- distributed: pasted wordings ---------------------------------------------------------------

def test_gloo_connect_refused_names_peer_port_and_reason():
    d = explain_paste("RuntimeError: [/opt/conda/conda-bld/pytorch_1682343967769/work/third_party/gloo/gloo/transport/"
               "tcp/pair.cc:799] connect [172.31.71.170]:13195: Connection refused")
    assert_names(d, "distributed.gloo_connection", ["pair.cc:799", "172.31.71.170:13195", "Connection refused",
                                                    "Nothing listened"])


def test_gloo_connect_full_mesh_from_a_header_file_names_the_detail():
    d = explain_paste("RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.h:301] "
               "Connect timeout [none]")
    assert_names(d, "distributed.gloo_connection", ["connectFullMesh", "pair.h:301", "Connect timeout"])


def test_libuv_address_in_use_wrapped_inside_the_error_name_names_the_port():
    d = explain_paste("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
               "address. port: 42173, useIpv6: false, code: -98, name: EAD\nDRINUSE, message: address already in use")
    assert_names(d, "distributed.address_in_use", ["port 42173", "Address already in use"])


def test_libuv_permission_denied_names_the_port_and_error():
    d = explain_paste("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
               "address. port: 98, useIpv6: false, code: -13, name: EACCES, message: permission denied")
    assert_names(d, "distributed.store_bind_failed", ["port 98", "EACCES", "permission denied", "below 1024"])


def test_elastic_root_cause_table_without_its_header_names_rank_and_exitcode():
    d = explain_paste("Root Cause (first observed failure):\n[0]:\n  time      : 2024-03-05_07:01:51\n"
               "  host      : node.internal\n  rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 69811)\n"
               "  error_file: <N/A>\n  traceback : To enable traceback see: "
               "https://pytorch.org/docs/stable/elastic/errors.html\n" + "=" * 60)
    assert_names(d, "distributed.child_failed", ["rank      : 0 (local_rank: 0)", "exitcode  : 1", "pid: 69811"])


def test_old_spawn_exception_names_process_and_signal():
    d = explain_paste('  File "/x/site-packages/torch/multiprocessing/spawn.py", line 107, in join\n'
               "    (error_index, name)\nException: process 3 terminated with signal SIGKILL")
    assert_names(d, "distributed.child_failed", ["process 3", "SIGKILL", "out-of-memory"])


def test_nccl_warn_cuda_failure_names_error_and_allocation():
    d = explain_paste("ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n\n"
               "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes")
    assert_names(d, "distributed.nccl_warn_cuda_failure", ["include/alloc.h:178", "'out of memory'", "6291456 bytes"])


def test_nccl_warn_invalid_device_ordinal_stays_with_device():
    d = explain_paste("transport/p2p.cc:275 NCCL WARN Cuda failure 101 'invalid device ordinal'")
    assert d.rule == "device.invalid_ordinal"


def test_nccl_error_with_host_prefixed_lines_names_code_and_last_error():
    d = explain_paste("worker-1: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/"
               "distributed/c10d/ProcessGroupNCCL.cpp:1197, unhandled cuda error (run with NCCL_DEBUG=INFO for "
               "details), NCCL version 2.18.3\nworker-1: ncclUnhandledCudaError: Call to CUDA function failed.\n"
               "worker-1: Last error:\nworker-1: Cuda failure 'initialization error'")
    assert_names(d, "distributed.nccl_error", ["ncclUnhandledCudaError", "initialization error", "2.18.3"])


def test_deepspeed_config_mismatch_names_every_conflict():
    d = explain_paste("ValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments "
               "values:\n- ds train_micro_batch_size_per_gpu=32 vs hf per_device_train_batch_size=4\n"
               "- ds gradient_accumulation_steps=1 vs hf gradient_accumulation_steps=8\n"
               "The easiest method is to set these DeepSpeed config values to 'auto'.")
    assert_names(d, "distributed.deepspeed_config_mismatch",
                 ["train_micro_batch_size_per_gpu=32", "per_device_train_batch_size=4",
                  "gradient_accumulation_steps=1 vs hf gradient_accumulation_steps=8"])
    assert '"train_micro_batch_size_per_gpu": "auto"' in d.fixes[0]


def test_fairscale_fsdp_full_params_assert_names_the_attribute():
    d = explain_paste("`assert self.has_full_params`")
    assert_names(d, "distributed.fsdp_full_params_missing", ["has_full_params", "root"])
    assert any("checkpoint_wrapper" in fix for fix in d.fixes)


# --- DataLoader arguments and torchrun's signal handler --------------------------------------------

def test_sampler_with_shuffle_names_both_options_and_set_epoch():
    d = explain_fixture("fixtures/data/dataloader_sampler_shuffle.py")
    assert_names(d, "data.dataloader_options", ["sampler", "shuffle=True", "DistributedSampler"])
    assert "set_epoch" in d.fixes[0]


def test_dataloader_option_family_names_the_option_in_each_wording():
    wordings = {
        "ValueError: batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last":
            ["batch_sampler", "batch_size, shuffle, sampler, and drop_last"],
        "ValueError: persistent_workers option needs num_workers > 0": ["persistent_workers", "num_workers > 0"],
        "ValueError: prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to "
        "enable multiprocessing.": ["prefetch_factor", "num_workers > 0"],
        "ValueError: DataLoader with IterableDataset: expected unspecified sampler option, but got "
        "sampler=<torch.utils.data.sampler.SequentialSampler object at 0x7f315a1452d0>": ["IterableDataset", "sampler="],
        "ValueError: multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
        "but got num_workers=0": ["multiprocessing_context", "num_workers=0"],
        "ValueError: batch_size=None option disables auto-batching and is mutually exclusive with drop_last":
            ["batch_size=None", "drop_last"],
        "ValueError: num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.":
            ["num_workers", "negative"],
    }
    for message, values in wordings.items():
        assert_names(explain_paste(message), "data.dataloader_options", values)


def test_ddp_around_a_lazy_module_names_the_dummy_forward():
    d = explain_fixture("fixtures/distributed/ddp_lazy_module.py")
    assert_names(d, "distributed.ddp_lazy_params", ["uninitialized parameters", "LazyLinear"])
    assert "forward pass" in d.fixes[0]


def test_torchrun_signal_exception_names_pid_and_signal():
    d = explain_paste("torch.distributed.elastic.multiprocessing.api.SignalException: Process 8665 got signal: 1")
    assert_names(d, "distributed.elastic_sigterm", ["process 8665", "signal: 1", "SIGHUP"])
    assert any("tmux" in fix for fix in d.fixes)
    d = explain_paste("torch.distributed.elastic.multiprocessing.api.SignalException: Process 7 got signal: Signals.SIGTERM")
    assert_names(d, "distributed.elastic_sigterm", ["process 7", "SIGTERM", "scheduler"])


def test_watchdog_abort_names_the_cpp_exception_when_the_terminate_line_is_kept():
    from explainer.diagnose.explain import explain_text

    d = explain_text("terminate called after throwing an instance of 'c10::DistBackendError'\n"
                     "  what():  [Rank 6] NCCL watchdog thread terminated with exception: [Rank 6] Watchdog caught "
                     "collective operation timeout: WorkNCCL(SeqNum=880, OpType=BROADCAST, NumelIn=131137536, "
                     "NumelOut=131137536, Timeout(ms)=1800000) ran for 1800902 milliseconds before timing out.")
    assert_names(d, "distributed.nccl_timeout", ["c10::DistBackendError", "rank 6", "OpType=BROADCAST", "-6"])
