"""Round 8 data and distributed rules: real torch errors where torch 2.x on CPU raises them, and the
wordings copied from public threads (older torch, DeepSpeed, Lightning, vLLM, nnU-Net, torchvision,
safetensors, ultralytics) where it cannot."""

from __future__ import annotations

import io

from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_fixture, explain_paste, said


def _unclaimed(text: str) -> bool:
    return all(d.rule is None for d in explain_stream(io.StringIO(text)))


# --- data: live torch errors --------------------------------------------------------------------

def test_whole_model_whose_class_is_gone_names_the_class_and_main_module():
    d = explain_fixture("fixtures/data/checkpoint_class_missing.py")
    assert_names(d, "data.unpickle_class_missing", ["Net", "__main__", "torch.save(model)"])
    assert any("state_dict" in fix for fix in d.fixes), d.fixes


def test_bytes_that_are_no_pickle_name_the_unpickler_error():
    d = explain_fixture("fixtures/data/checkpoint_not_a_pickle.py")
    assert_names(d, "data.checkpoint_unpickling_error", ["could not find MARK", "UnpicklingError"])


# --- data: pasted wordings ----------------------------------------------------------------------

def test_python2_cpickle_could_not_find_mark_from_torch_load():
    d = explain_paste("    magic_number = pickle_module.load(f)\ncPickle.UnpicklingError: could not find MARK")
    assert_names(d, "data.checkpoint_unpickling_error", ["could not find MARK", "cPickle.UnpicklingError"])


def test_truncated_pickle_is_read_as_a_cut_file():
    d = explain_paste("_pickle.UnpicklingError: pickle data was truncated")
    assert_names(d, "data.checkpoint_unpickling_error", ["pickle data was truncated", "cut short"])


def test_old_torch_refusing_a_zip_checkpoint_names_the_file_and_the_version():
    d = explain_paste("RuntimeError: ./pretrained_models/e4e_ffhq_encode.pt is a zip archive "
                      "(did you mean to use torch.jit.load()?)")
    assert_names(d, "data.checkpoint_zip_old_torch", ["./pretrained_models/e4e_ffhq_encode.pt", "older than 1.6"])
    assert any("_use_new_zipfile_serialization=False" in fix for fix in d.fixes), d.fixes


def test_zip_archive_path_with_spaces_on_windows_is_captured_whole():
    d = explain_paste('    raise RuntimeError("{} is a zip archive (did you mean to use torch.jit.load()?)".format(f.name))\n'
                      "RuntimeError: C:\\Users\\a b\\final_model is a zip archive (did you mean to use torch.jit.load()?)")
    assert_names(d, "data.checkpoint_zip_old_torch", ["C:\\Users\\a b\\final_model"])


def test_batchgenerators_abort_event_points_above_and_at_ram():
    d = explain_paste("RuntimeError: Abort event was set. So someone died and we should end this madness. \n"
                      "IMPORTANT: This is not the actual error message! Look further up to see what caused the error. "
                      "Please also check whether your RAM was full")
    assert_names(d, "data.batchgenerators_workers_died", ["Abort event was set", "RAM"])
    assert "nnUNet_n_proc_DA" in said(d)


def test_nnunet_v2_background_workers_and_export_pool():
    d = explain_paste("RuntimeError: One or more background workers are no longer alive. Exiting. "
                      "Please check the print statements above for the actual error message")
    assert_names(d, "data.batchgenerators_workers_died", ["One or more background workers are no longer alive."])
    d = explain_paste("RuntimeError: Some background workers are no longer alive")
    assert_names(d, "data.batchgenerators_workers_died", ["Some background workers are no longer alive", "export"])


def test_ultralytics_class_missing_reads_as_a_library_version_mismatch():
    d = explain_paste("AttributeError: Can't get attribute 'C3k2' on <module 'ultralytics.nn.modules.block' "
                      "from '/ultralytics/ultralytics/nn/modules/block.py'>")
    assert_names(d, "data.unpickle_class_missing", ["C3k2", "ultralytics.nn.modules.block", "YOLO11"])
    assert "pip install -U ultralytics" in said(d)


def test_silu_missing_from_torch_means_torch_older_than_1_7():
    d = explain_paste("AttributeError: Can't get attribute 'SiLU' on <module 'torch.nn.modules.activation' "
                      "from '/x/torch/nn/modules/activation.py'>")
    assert_names(d, "data.unpickle_class_missing", ["SiLU", "torch.nn.modules.activation", "1.7"])


def test_dataset_class_of_a_notebook_in_a_spawned_worker():
    d = explain_paste("AttributeError: Can't get attribute 'ImageDataset' on <module '__main__' (built-in)>")
    assert_names(d, "data.unpickle_class_missing", ["ImageDataset", "notebook", "DataLoader worker"])
    d = explain_paste("AttributeError: Can't get attribute 'ChatDataset' on <module '__mp_main__' from 'c:\\\\train.py'>")
    assert_names(d, "data.unpickle_class_missing", ["ChatDataset", "__mp_main__", "if __name__ == '__main__':"])


def test_class_missing_from_an_unrelated_library_is_left_alone():
    assert _unclaimed("AttributeError: Can't get attribute 'Tokenizer' on <module 'sklearn.feature_extraction.text'>")


def test_safetensors_header_errors_tell_lfs_pointer_from_truncation():
    d = explain_paste("safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge")
    assert_names(d, "data.safetensors_header", ["HeaderTooLarge", "Git LFS pointer"])
    d = explain_paste("safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer")
    assert_names(d, "data.safetensors_header", ["MetadataIncompleteBuffer", "truncated"])


def test_imagefolder_names_the_empty_classes_and_the_jupyter_folder():
    d = explain_paste("FileNotFoundError: Found no valid file for the classes .ipynb_checkpoints. Supported extensions are: "
                      ".jpg, .jpeg, .png, .ppm, .bmp, .pgm, .tif, .tiff, .webp")
    assert_names(d, "data.imagefolder_no_files", [".ipynb_checkpoints", ".jpg, .jpeg, .png", "Jupyter"])
    d = explain_paste("FileNotFoundError: Couldn't find any class folder in ./data/train.")
    assert_names(d, "data.imagefolder_no_files", ["./data/train", "root/CLASS_NAME"])
    d = explain_paste("RuntimeError: Found 0 files in subfolders of: ./data/train\nSupported extensions are: .jpg,.jpeg,.png")
    assert_names(d, "data.imagefolder_no_files", ["./data/train", ".jpg,.jpeg,.png"])


def test_torchvision_dataset_not_found_but_not_other_libraries_wording():
    d = explain_paste("RuntimeError: Dataset not found or corrupted. You can use download=True to download it")
    assert_names(d, "data.torchvision_dataset_not_found", ["Dataset not found or corrupted", "download=True"])
    assert _unclaimed("Exception: Dataset not found or corrupted.")


def test_state_dict_keys_behind_markdown_bold_still_name_the_wrapper():
    d = explain_paste("Some modules are missing: Error(s) in loading state_dict for DataParallel:**\n"
                      '\tUnexpected key(s) in state_dict: "module.aux.0.weight", "module.aux.0.bias",')
    assert_names(d, "data.state_dict_keys", ["DataParallel"])


# --- distributed: live torch errors -------------------------------------------------------------

def test_embedding_with_a_partitioned_placeholder_weight_reads_as_zero3_or_fsdp():
    d = explain_fixture("fixtures/distributed/sharded_param_outside_forward.py")
    assert_names(d, "distributed.sharded_param_outside_forward", ["'weight' must be 2-D", "ZeRO-3", "FSDP"])
    assert "GatheredParameters" in said(d)


def test_linear_with_an_empty_weight_names_the_shapes():
    d = explain_fixture("fixtures/distributed/sharded_linear_outside_forward.py")
    assert_names(d, "distributed.sharded_param_outside_forward", ["mat 2x4", "vec (0)"])


def test_ordinary_matrix_vector_mismatch_is_not_read_as_sharding():
    assert _unclaimed("RuntimeError: size mismatch, got input (2), mat (2x4), vec (3)") or \
        explain_paste("RuntimeError: size mismatch, got input (2), mat (2x4), vec (3)").rule != \
        "distributed.sharded_param_outside_forward"


# --- distributed: pasted wordings ---------------------------------------------------------------

def test_deepspeed_inflight_params_names_the_first_parameter():
    d = explain_paste("RuntimeError: still have inflight params [{'id': 723, 'status': 'AVAILABLE', 'numel': 4194304, "
                      "'ds_numel': 4194304, 'shape': (512, 8192), 'ds_shape': (512, 8192)")
    assert_names(d, "distributed.deepspeed_inflight_params", ["723", "(512, 8192)", "4194304", "AVAILABLE"])
    assert "stage3_prefetch_bucket_size" in said(d)


def test_deepspeed_inflight_params_of_old_releases():
    d = explain_paste("RuntimeError: still have inflight params [<bound method Init._convert_to_deepspeed_param.<locals>"
                      ".ds_summary of Parameter")
    assert d.rule == "distributed.deepspeed_inflight_params"


def test_lightning_unused_parameters_names_the_strategy():
    d = explain_paste("[rank0]: RuntimeError: It looks like your LightningModule has parameters that were not used in "
                      "producing the loss returned by training_step. If this is intentional, you must enable the "
                      "detection of unused parameters in DDP, either by setting the string value "
                      "`strategy='ddp_find_unused_parameters_true'` or by setting the flag in the strategy with "
                      "`strategy=DDPStrategy(find_unused_parameters=True)`.")
    assert_names(d, "distributed.ddp_unused_parameters", ["ddp_find_unused_parameters_true", "training_step"])


def test_unused_parameter_names_cut_before_the_index_line_are_named():
    d = explain_paste("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new "
                      "one. This error indicates that your module has parameters that were not used in producing loss.\n"
                      "Parameters which did not receive grad for rank 0: enc.norm.bias, enc.norm.weight, enc.attenti")
    assert_names(d, "distributed.ddp_unused_parameters", ["enc.norm.bias", "rank 0"])


def test_old_launch_child_killed_by_sigsegv_names_script_rank_and_signal():
    d = explain_paste("subprocess.CalledProcessError: Command '['/usr/bin/python3', '-u', 'train_imagenet.py', "
                      "'--local_rank=7', '--epochs', '180']' died with <Signals.SIGSEGV: 11>.")
    assert_names(d, "distributed.child_failed", ["train_imagenet.py", "local rank 7", "SIGSEGV", "native code"])


def test_called_process_error_of_a_build_is_not_a_launcher_report():
    d = explain_paste("subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.")
    assert d.rule != "distributed.child_failed"


def test_bare_connection_reset_names_gloo_and_the_store():
    d = explain_paste("    timeout=timeout)\nRuntimeError: Connection reset by peer")
    assert_names(d, "distributed.gloo_connection", ["Connection reset by peer", "Gloo", "TCPStore"])


def test_deepspeed_batch_assertion_multiplies_out_and_spots_a_world_of_one():
    d = explain_paste("AssertionError: Check batch related parameters. train_batch_size is not\nequal to "
                      "micro_batch_per_gpu * gradient_acc_step * world_size 64 != 4 *\n8 * 1")
    assert_names(d, "distributed.deepspeed_batch_size", ["64 != 4 * 8 * 1", "= 32", "world size is 1"])
    d = explain_paste("AssertionError: Check batch related parameters. train_batch_size is not equal to "
                      "micro_batch_per_gpu * gradient_acc_step * world_size 256 != 2 * 18 * 7")
    assert_names(d, "distributed.deepspeed_batch_size", ["256 != 2 * 18 * 7", "= 252", "7 processes"])


def test_deepspeed_zero_batch_value():
    d = explain_paste("AssertionError: Micro batch size per gpu: 0 has to be greater than 0")
    assert_names(d, "distributed.deepspeed_batch_size", ["Micro batch size per gpu: 0"])


def test_deepspeed_no_sync_names_the_stage_and_the_accumulation_cause():
    d = explain_paste("AssertionError: no_sync context manager is incompatible with gradient partitioning logic of ZeRO stage 2")
    assert_names(d, "distributed.deepspeed_no_sync", ["ZeRO stage 2", "gradient_accumulation_steps"])
    d = explain_paste("AssertionError: no sync context manager is incompatible with gradientpartitioning logic of ZeRo stage 3")
    assert d.rule == "distributed.deepspeed_no_sync"


def test_vllm_tensor_parallel_size_lists_the_divisors():
    d = explain_paste("ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8)")
    assert_names(d, "distributed.tensor_parallel_divisibility", ["28", "tensor parallel size of 8", "1, 2, 4, 7, 14, 28"])


def test_lightning_in_a_notebook_names_the_strategy_and_the_cuda_fork_case():
    d = explain_paste("MisconfigurationException: `Trainer(strategy='ddp_spawn')` or `Trainer(accelerator='ddp_spawn')` "
                      "is not compatible with an interactive environment. Run your code as a script")
    assert_names(d, "distributed.lightning_interactive_strategy", ["ddp_spawn", "notebook"])
    d = explain_paste("MisconfigurationException: Selected distributed backend ddp is not compatible with an interactive "
                      "environment. Run your code as a script, or choose one of the compatible backends: dp, ddp_spawn")
    assert_names(d, "distributed.lightning_interactive_strategy", ["'ddp'"])
    d = explain_paste("RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually "
                      "call `torch.cuda.*` functions")
    assert_names(d, "distributed.lightning_interactive_strategy", ["CUDA is already initialized", "fork"])


def test_non_contiguous_collective_input():
    d = explain_paste("           work = group.allgather([tensor_list], [tensor])\nE       ValueError: Tensors must be contiguous")
    assert_names(d, "distributed.collective_tensor_contiguous", ["Tensors must be contiguous", ".contiguous()"],
                 text=said(d))


def test_deepspeed_offload_with_a_client_optimizer_names_the_class():
    d = explain_paste("deepspeed.runtime.zero.utils.ZeRORuntimeException: You are using ZeRO-Offload with a client provided "
                      "optimizer (<class 'apex.optimizers.fused_adam.FusedAdam'>) which in most cases will yield poor "
                      "performance.")
    assert_names(d, "distributed.deepspeed_client_optimizer", ["apex.optimizers.fused_adam.FusedAdam",
                                                              "DeepSpeedCPUAdam"])
    assert "zero_force_ds_cpu_optimizer" in said(d)


def test_deepspeed_untested_optimizer_names_the_flag():
    d = explain_paste('AssertionError: You are using an untested ZeRO Optimizer. Please add '
                      '<"zero_allow_untested_optimizer": true> in the configuration file to use it.')
    assert_names(d, "distributed.deepspeed_client_optimizer", ["zero_allow_untested_optimizer"])


def test_webdataset_without_nodesplitter_in_ddp():
    d = explain_paste("ValueError: you need to add an explicit nodesplitter to your input pipeline for multi-node training")
    assert_names(d, "data.webdataset_nodesplitter", ["explicit nodesplitter", "world size"])
    assert "split_by_node" in said(d)
