"""Round 7 data and distributed rules: real torch errors and the real-world wordings they were written from."""

from __future__ import annotations

from conftest import assert_names, explain_fixture, explain_paste, said


# --- data: live torch errors --------------------------------------------------------------------

def test_random_split_lengths_that_do_not_add_up_names_the_check_and_the_remainder_fix():
    d = explain_fixture("fixtures/data/random_split_lengths.py")
    assert_names(d, "data.random_split_lengths", ["[84, 21, 5]", "110", "105"])
    assert any("len(ds) - n_train" in fix for fix in d.fixes)
    pasted = explain_paste("ValueError: Sum of input lengths does not equal the length of the input dataset!")
    assert_names(pasted, "data.random_split_lengths",
                 ["Sum of input lengths does not equal the length of the input dataset", "int("])


def test_pickle_load_of_a_torch_save_record_points_to_torch_load():
    d = explain_fixture("fixtures/data/pickle_persistent_id.py")
    assert_names(d, "data.pickle_persistent_id", ["persistent id", "torch.load", "data.pkl"])


# --- data: pasted wordings ----------------------------------------------------------------------

def test_legacy_checkpoint_unexpected_eof_without_the_corruption_sentence_names_the_bytes():
    d = explain_paste("    typed_storage._storage._set_from_file(\nRuntimeError: unexpected EOF, expected 273069 more bytes.")
    assert_names(d, "data.checkpoint_corrupt", ["273069 more bytes"])


def test_worker_error_of_a_module_level_exception_class_names_the_qualified_class():
    d = explain_paste("cv2.error: Caught error in DataLoader worker process 1.")
    assert_names(d, "data.worker_error", ["cv2.error", "worker process 1", "cv2.imread"])


def test_builtin_worker_error_is_not_given_a_module():
    d = explain_paste("KeyError: Caught KeyError in DataLoader worker process 0.")
    assert d.rule == "data.worker_error"
    assert "cv2" not in d.summary


def test_sox_failed_to_open_names_the_file():
    d = explain_paste("RuntimeError: Error loading audio file: failed to open file test.opu\n```")
    assert_names(d, "data.audio_load_failed", ["test.opu", "failed to open file"])


def test_sox_unknown_length_is_read_as_a_length_problem_not_an_open_failure():
    d = explain_paste("`RuntimeError: Error reading audio file: unknown length\n`")
    assert_names(d, "data.audio_load_failed", ["unknown length", "how long"])


def test_ffmpeg_backend_missing_file_names_path_and_reason():
    d = explain_paste('RuntimeError: Failed to open the input "data10/data10.wav" (No such file or directory).')
    assert_names(d, "data.audio_load_failed", ["data10/data10.wav", "No such file or directory", "does not exist"])


def test_torchaudio_without_any_backend_is_left_to_the_installation_rules():
    import io

    from explainer.cli.explain import explain_stream

    text = "RuntimeError: Couldn't find appropriate backend to handle uri assets/exampleaudio.mp3 and format None."
    rules = [d.rule for d in explain_stream(io.StringIO(text))]
    assert "data.audio_load_failed" not in rules


def test_pil_only_transform_given_a_tensor_names_the_class_and_the_order():
    d = explain_paste("TypeError: img should be PIL Image. Got <class 'torch.Tensor'>")
    assert_names(d, "data.torchvision_image_type", ["<class 'torch.Tensor'>", "ToTensor()"])


def test_old_to_pil_image_given_a_tensor_reads_as_a_shape_problem():
    d = explain_paste("pic should be Tensor or ndarray. Got <class 'torch.FloatTensor'>")
    assert_names(d, "data.torchvision_image_type", ["<class 'torch.FloatTensor'>", "dimensions"])


def test_ndarray_rejected_as_ndarray_reads_as_a_numpy_mismatch():
    d = explain_paste("TypeError: Input pic must be a torch.Tensor or NumPy ndarray, not <class 'numpy.ndarray'>")
    assert_names(d, "data.torchvision_image_type", ["<class 'numpy.ndarray'>", "NumPy"])


def test_to_pil_image_dimension_message_names_the_count():
    d = explain_paste("ValueError: pic should be 2/3 dimensional. Got 4 dimensions.")
    assert_names(d, "data.torchvision_image_type", ["4 dimensions", "batch"])


def test_pin_memory_thread_exit_points_to_the_thread_error_and_pin_memory_false():
    d = explain_paste("    raise RuntimeError('Pin memory thread exited unexpectedly')\n"
                      "RuntimeError: Pin memory thread exited unexpectedly")
    assert_names(d, "data.pin_memory_thread", ["Pin memory thread exited unexpectedly", "Exception in thread"])
    assert any("pin_memory=False" in fix for fix in d.fixes)


def test_windows_shared_file_mapping_1455_names_the_page_file():
    d = explain_paste("RuntimeError: Couldn't open shared file mapping: <torch_28076_1033928186_0>, error code: <1455>")
    assert_names(d, "data.windows_shared_file_mapping", ["torch_28076_1033928186_0", "1455", "paging file"])


# --- distributed: pasted wordings ---------------------------------------------------------------

def test_watchdog_timeout_hard_wrapped_mid_word_names_op_and_timeout():
    d = explain_paste("  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with "
                      "exception: [Rank 3] Watchdog caught colle\nctive operation timeout: WorkNCCL(SeqNum=4, "
                      "OpType=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800011 millisecond\n"
                      "s before timing out.")
    assert_names(d, "distributed.nccl_timeout", ["OpType=BROADCAST", "Timeout(ms)=1800000", "rank 3"])


def test_torchrun_summary_with_stderr_prefixes_names_rank_and_exitcode():
    d = explain_paste("stderr: Root Cause (first observed failure):\nstderr: [0]:\n"
                      "stderr:   time      : 2023-06-15_00:47:44\nstderr:   host      : node\n"
                      "stderr:   rank      : 1 (local_rank: 1)\nstderr:   exitcode  : 1 (pid: 226263)\n"
                      "stderr:   error_file: <N/A>\n"
                      "stderr:   traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
    assert_names(d, "distributed.child_failed", ["rank      : 1 (local_rank: 1)", "exitcode  : 1"])


def test_nccl_default_timeout_warning_names_the_backend():
    d = explain_paste("UserWarning: Attempted to get default timeout for nccl backend, but NCCL support is not compiled")
    assert_names(d, "distributed.backend_not_available", ["nccl backend", "gloo"])


def test_vllm_pynccl_error_without_version_names_the_reason_and_the_wrapper():
    d = explain_paste('  File "/x/vllm/distributed/device_communicators/pynccl_wrapper.py", line 223, in NCCL_CHECK\n'
                      '    raise RuntimeError(f"NCCL error: {error_str}")\n'
                      "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)")
    assert d.rule == "distributed.nccl_error"
    assert "unhandled cuda error" in d.summary


def test_nccl_shm_segment_failure_names_segment_size_and_reason():
    d = explain_paste("host:97:183 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
                      "nccl-shm-recv-c43b846667d22574-1-1-0 (size 9637888)\n"
                      "host:97:183 [0] NCCL INFO transport/shm.cc:101 -> 2\n"
                      "ERROR    __main__   NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:784, "
                      "unhandled system error, NCCL version 2.7.8")
    assert_names(d, "distributed.nccl_shared_memory", ["nccl-shm-recv-c43b846667d22574-1-1-0", "9637888",
                                                      "unhandled system error", "2.7.8", "/dev/shm"])
    assert any("--shm-size" in fix for fix in d.fixes)


def test_nccl_shm_attach_failure_reads_as_namespaces_not_size():
    d = explain_paste("[0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment "
                      "/dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)")
    assert_names(d, "distributed.nccl_shared_memory", ["/dev/shm/nccl-glnlGK", "No such file or directory",
                                                      "IPC namespaces"])


def test_bus_error_in_an_nccl_thread_names_the_function():
    d = explain_paste("[worker-0:2121 :0:7025] Caught signal 7 (Bus error: nonexistent physical address)\n"
                      "==== backtrace (tid: 7025) ====\n0 0x0000000000014420 __funlockfile() ???:0\n"
                      "1 0x000000000018bb41 __nss_database_lookup() ???:0\n2 0x0000000000068d7c ncclGroupEnd() ???:0\n"
                      "=================================")
    assert_names(d, "distributed.nccl_shared_memory", ["Bus error: nonexistent physical address", "ncclGroupEnd"])


def test_bus_error_without_nccl_is_not_claimed_as_nccl():
    import io

    from explainer.cli.explain import explain_stream

    text = "Caught signal 7 (Bus error: nonexistent physical address)"
    assert "distributed.nccl_shared_memory" not in [d.rule for d in explain_stream(io.StringIO(text))]


def test_barrier_device_guess_names_rank_and_gpu_in_both_wordings():
    old = explain_paste("[W ProcessGroupNCCL.cpp:1569] Rank 0 using best-guess GPU 0 to perform barrier as devices "
                        "used by this process are currently unknown.")
    assert_names(old, "distributed.barrier_unknown_device", ["rank 0", "GPU 0"])
    new = explain_paste("[rank1]:[W510 09:18:00.213483298 ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank 1] using "
                        "GPU 0 to perform barrier as devices used by this process are currently unknown. This can "
                        "potentially cause a hang if this rank to GPU mapping is incorrect.")
    assert_names(new, "distributed.barrier_unknown_device", ["rank 1", "GPU 0"])
    assert any("device_id" in fix for fix in new.fixes)


def test_deepspeed_gradient_reduced_twice_names_the_parameter_and_checkpointing():
    d = explain_paste("AssertionError: The parameter 388 has already been reduced.             Gradient computed twice "
                      "for this partition.             Multiple gradient reduction is currently not supported")
    assert_names(d, "distributed.deepspeed_grad_reduced_twice", ["parameter 388", "use_reentrant"])
    assert "use_reentrant" in said(d)


def test_ddp_rebuilt_parameter_indices_names_both_counts_and_the_torch_release():
    d = explain_paste('RuntimeError: replicas_[0].size() == rebuilt_param_indices_.size() INTERNAL ASSERT FAILED at '
                      '"/pytorch/torch/csrc/distributed/c10d/reducer.cpp":1326, please report a bug to PyTorch. rebuilt '
                      "parameter indices size is not same as original model parameters size.538 versus 1076000")
    assert_names(d, "distributed.ddp_rebuilt_param_indices", ["538", "1076000", "1.7.0", "1.7.1"])


def test_ddp_static_graph_changed_names_the_flag_and_the_way_out():
    d = explain_paste("RuntimeError: Your training graph has changed in this iteration, e.g., one parameter is unused in "
                      "first iteration, but then got used in the second iteration. this is not compatible with "
                      "static_graph set to True.")
    assert_names(d, "distributed.ddp_static_graph_changed", ["static_graph=True", "_set_static_graph()"])
    assert any("find_unused_parameters=True" in fix for fix in d.fixes)


def test_ddp_unfinished_reduction_with_the_static_graph_sentence_stays_with_unused_parameters():
    d = explain_paste("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new "
                      "one. This error indicates that your training graph has changed in this iteration, e.g., one "
                      "parameter is used in first iteration, but then got unused in the second iteration. this is not "
                      "compatible with static_graph set to True.\nParameter indices which did not receive grad for "
                      "rank 1: 375 376 377")
    assert d.rule == "distributed.ddp_unused_parameters"
