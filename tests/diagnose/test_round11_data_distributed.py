"""Round 11 data and distributed rules: the round's misses (a legacy checkpoint whose storage sizes disagree, an
old torchvision transform given a tuple, torch 0.2's stack of unequal sizes, a THD-era NCCL error, torchft's
Rust "os error 98", a pasted DDP unused-parameter hint) and wording families of the libraries built on torch
that no round held yet (transformers' "Unable to load weights from pytorch checkpoint file", backends that
lack a collective, NCCL's tensor-list length check, Gloo's address lookup and missing transport, FSDP's
freed flat parameters, torch.load(mmap=True) of a non-zip file)."""

from __future__ import annotations

import io

import torch
import torch.distributed as dist

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, raised, said


def _live(call) -> str:
    """The message a real torch call on this build raises, as a traceback's last line prints it."""
    exc = raised(call)
    return f"{type(exc).__name__}: {exc}"


def _unclaimed(text: str) -> bool:
    return all(d.rule is None for d in explain_stream(io.StringIO(text)))


# --- data: round-11 misses -----------------------------------------------------------------------

def test_legacy_storage_size_mismatch_names_both_sizes():
    d = explain_paste("RuntimeError: storage has wrong size: expected 0 got 1")
    assert_names(d, "data.checkpoint_corrupt", ["expected 0 got 1", "legacy"])


def test_garbage_storage_size_is_called_garbage():
    # https://github.com/pytorch/pytorch/issues/38643
    d = explain_paste(corpus_message("r28_b.yaml#74"))
    assert_names(d, "data.checkpoint_corrupt", ["4254413747647032608", "1024", "garbage"])


def test_torch_2_storage_byte_size_with_its_format_string_printed():
    d = explain_fixture("fixtures/data/checkpoint_storage_size.py")
    assert_names(d, "data.checkpoint_corrupt", ["byte size", "2012"])
    assert "rank" in said(d)


def test_old_torchvision_scale_with_a_tuple_size():
    d = explain_paste(
        "/Users/USER/anaconda/lib/python3.6/site-packages/torchvision-0.1.8-py3.6.egg/torchvision/transforms.py in "
        "__call__(self, img)\n    137         else:\n    138             oh = self.size\n--> 139             ow = "
        "int(self.size * w / h)\n    140             return img.resize((ow, oh), self.interpolation)\n    141 \n\n"
        "TypeError: unsupported operand type(s) for /: 'tuple' and 'int'")
    assert_names(d, "data.torchvision_transform_operand_type", ["'tuple'", "__call__", "torchvision/transforms.py"])
    assert "Resize((h, w))" in said(d)


def test_a_bare_operand_type_error_is_not_a_transform_error():
    assert _unclaimed("TypeError: unsupported operand type(s) for /: 'tuple' and 'int'")


def test_torch_0_2_stack_of_unequal_sizes_names_the_source_line():
    d = explain_paste(
        '  File "/home/ubuntu/anaconda3/lib/python3.5/site-packages/torch/functional.py", line 66, in stack\n'
        "    return torch.cat(inputs, dim, out=out)\n"
        "RuntimeError: inconsistent tensor sizes at /home/ubuntu/pytorch/torch/lib/TH/generic/THTensorMath.c:2625")
    assert_names(d, "data.stack_sizes_legacy", ["THTensorMath.c:2625", "torch.stack"])


def test_lua_torch_inconsistent_sizes_stays_foreign():
    d = explain_stream(io.StringIO("inconsistent tensor sizes"))
    assert all(x.rule != "data.stack_sizes_legacy" for x in d)


# --- distributed: round-11 misses ----------------------------------------------------------------

def test_thd_nccl_error_without_a_comma():
    d = explain_paste("RuntimeError: NCCL error in: /home/xxx/pytorch/torch/lib/THD/base/data_channels/"
                      "DataChannelNccl.cpp:322 unhandled cuda error")
    assert_names(d, "distributed.nccl_error", ["unhandled cuda error", "DataChannelNccl.cpp:322"])


def test_torchft_lighthouse_port_in_use():
    d = explain_paste("RuntimeError: Address already in use (os error 98)")
    assert_names(d, "distributed.address_in_use", ["os error 98", "torchft"])
    assert "--bind" in said(d)


def test_thd_address_in_use_keeps_its_source_file():
    d = explain_paste("RuntimeError: Address already in use at /pytorch/torch/lib/THD/process_group/General.cpp:20")
    assert_names(d, "distributed.address_in_use", ["General.cpp:20"])


def test_pasted_unused_parameter_hint_alone():
    d = explain_paste("**You can enable unused parameter detection by (1) passing the keyword argument "
                      "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`;**")
    assert d.rule == "distributed.ddp_unused_parameters", d.rule
    assert "find_unused_parameters=True" in said(d)


# --- data: families no round held yet ------------------------------------------------------------

def test_transformers_unreadable_weights_file_names_the_file():
    d = explain_paste(
        "OSError: Unable to load weights from pytorch checkpoint file for 'model_cache/models--decapoda-research--"
        "llama-30b-hf/snapshots/f991780f9362b2fcaefad066cd235058844562b7/pytorch_model-00039-of-00061.bin'. If you "
        "tried to load a PyTorch model from a TF 2.0 checkpoint, please set from_tf=True.")
    assert_names(d, "data.hf_checkpoint_unreadable", ["pytorch_model-00039-of-00061.bin"])


def test_transformers_3_names_the_model_and_the_cached_file():
    # https://github.com/UKPLab/EasyNMT/issues/46 (runbooks/data/hf_checkpoint_unreadable.md's example)
    d = explain_paste(
        "OSError: Unable to load weights from pytorch checkpoint file for 'facebook/m2m100_1.2B' at '/cache/transformers/"
        "68002fb1a7773d8d8373f1a230588141964ef9f249db6987681f295dbe85356c.ee70663869b89be4f68eed03a21d5c3400b223cb544883f4"
        "11e469aaea0a25f9'If you tried to load a PyTorch model from a TF 2.0 checkpoint, please set from_tf=True.")
    assert_names(d, "data.hf_checkpoint_unreadable", ["facebook/m2m100_1.2B", "/cache/transformers/68002fb1a7773d8d"])


def test_transformers_2_without_a_file_name():
    d = explain_paste("OSError: Unable to load weights from pytorch checkpoint file. If you tried to load a PyTorch "
                      "model from a TF 2.0 checkpoint, please set from_tf=True.")
    assert d.rule == "data.hf_checkpoint_unreadable", d.rule
    assert "force_download=True" in said(d)


def test_transformers_git_lfs_pointer():
    # https://github.com/quantum00549/SoftMaskedBert/issues/6 (the traceback's last line)
    d = explain_paste("OSError: You seem to have cloned a repository without having git-lfs installed. Please "
                      "install git-lfs and run `git lfs install` followed by `git lfs pull` in the folder you cloned.")
    assert_names(d, "data.hf_checkpoint_unreadable", ["git-lfs", "pointer"])


def test_mmap_load_of_a_legacy_checkpoint():
    d = explain_fixture("fixtures/data/checkpoint_mmap_legacy.py")
    assert_names(d, "data.checkpoint_mmap_not_zip", ["model.pt", "mmap=True", "legacy"])


# --- distributed: families no round held yet -----------------------------------------------------

def test_gloo_without_reduce_scatter():
    d = explain_paste("RuntimeError: ProcessGroupGloo does not support reduce_scatter")
    assert_names(d, "distributed.backend_op_unsupported", ["ProcessGroupGloo", "reduce_scatter", "all_reduce"])


def test_old_nccl_without_gather():
    d = explain_paste("RuntimeError: ProcessGroupNCCL does not support gather")
    assert_names(d, "distributed.backend_op_unsupported", ["ProcessGroupNCCL", "gather", "1.11"])


def test_device_mesh_fallback_warning_is_not_the_error():
    assert _unclaimed("UserWarning: ProcessGroupGloo does not support reduce_scatter, falling back with all reduce!")


def test_nccl_tensor_list_length_old_wording():
    # https://github.com/hpcaitech/ColossalAI/issues/524 (runbooks/distributed/collective_buffer_size.md's example)
    d = explain_paste("RuntimeError: Tensor list input to scatter/gather must match number of collective participants ")
    assert d.rule == "distributed.collective_buffer_size", d.rule
    assert "dist.get_world_size(group)" in said(d)


def test_gloo_hostname_that_does_not_resolve():
    d = explain_paste("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] rp != "
                      "nullptr. Unable to find address for: dgx-1.ai")
    assert_names(d, "distributed.gloo_device_address", ["dgx-1.ai", "device.cc:127"])
    assert "GLOO_SOCKET_IFNAME" in said(d)


def test_gloo_interface_that_does_not_exist(monkeypatch):
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29561")
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "nosuchif0")
    d = explain_paste(_live(lambda: dist.init_process_group("gloo", rank=0, world_size=1)))
    assert_names(d, "distributed.gloo_device_address", ["nosuchif0", "device.cc:84"])
    assert "GLOO_SOCKET_IFNAME" in said(d)


def test_gloo_without_a_transport_on_windows():
    d = explain_paste("RuntimeError: makeDeviceForHostname(): unsupported gloo device")
    assert_names(d, "distributed.backend_not_available", ["makeDeviceForHostname(): unsupported gloo device", "libuv"])


def test_fsdp_freed_flat_parameter_names_the_view():
    d = explain_paste("RuntimeError: setStorage: sizes [4544, 4672], strides [1, 4544], storage offset 6507580544, "
                      "and itemsize 2 requiring a \nstorage size of 13057620224 are out of bounds for storage of size 0 ")
    assert_names(d, "distributed.sharded_param_outside_forward",
                 ["[4544, 4672]", "6507580544", "13057620224", "FSDP"])
    assert "apply_activation_checkpointing" in said(d)


def test_freed_flat_parameter_fixture():
    d = explain_fixture("fixtures/distributed/flat_param_freed.py")
    assert_names(d, "distributed.sharded_param_outside_forward", ["[4, 4]", "64"])


def test_set_storage_out_of_bounds_of_a_nonempty_storage_is_not_claimed():
    text = _live(lambda: torch.zeros(8).as_strided((4, 4), (4, 1)))
    assert "for storage of size 32" in text, text
    assert all(d.rule != "distributed.sharded_param_outside_forward" for d in explain_stream(io.StringIO(text)))


def test_deepspeed_checkpoint_from_another_world_size():
    d = explain_paste("[rank5]: deepspeed.runtime.zero.utils.ZeRORuntimeException: The checkpoint being loaded used a DP "
                      "world size of 8 but the current world size is 16. Automatic adjustment of ZeRO's optimizer state "
                      "partitioning with a new world size is not currently supported.")
    assert_names(d, "distributed.deepspeed_checkpoint_world_size", ["8 data-parallel ranks", "has 16"])
    assert "load_optimizer_states=False" in said(d)


def test_torchvision_download_checksum_names_the_file():
    # excerpt of https://github.com/pytorch/vision/issues/8550 (runbooks/data/torchvision_dataset_not_found.md's example)
    d = explain_paste("RuntimeError: The MD5 checksum of the download file ./data/celebA/celeba/img_align_celeba.zip does "
                      "not match the one on record.Please delete the file and try again.")
    assert_names(d, "data.torchvision_dataset_not_found", ["./data/celebA/celeba/img_align_celeba.zip", "MD5"])


def test_old_torchvision_download_integrity_under_its_frame():
    # https://github.com/pytorch/examples/issues/725 (runbooks/data/torchvision_dataset_not_found.md's example)
    d = explain_paste(
        '  File "/home/ubuntu/anaconda3/envs/pytorch_p27/lib/python2.7/site-packages/torchvision/datasets/utils.py", '
        "line 100, in download_url\n"
        '    raise RuntimeError("File not found or corrupted.")\n'
        "RuntimeError: File not found or corrupted.")
    assert_names(d, "data.torchvision_dataset_not_found", ["download_url", "File not found or corrupted"])


def test_a_bare_file_not_found_or_corrupted_is_not_torchvision():
    # excerpt of https://github.com/pytorch/examples/issues/725 (runbooks/data/torchvision_dataset_not_found.md's example)
    assert _unclaimed("RuntimeError: File not found or corrupted.")


def test_vllm_placement_group_without_enough_gpus():
    # excerpt of https://github.com/VITA-MLLM/VITA/issues/42 (runbooks/distributed/ray_gpus_unavailable.md's example)
    d = explain_paste("ValueError: The number of required GPUs exceeds the total number of available GPUs in the "
                      "placement group.")
    assert_names(d, "distributed.ray_gpus_unavailable", ["placement group", "tensor_parallel_size"])
    assert "ray status" in said(d)


def test_verl_resource_pool_names_both_counts():
    d = explain_paste("ValueError: Total available GPUs 8.0 is less than total desired GPUs 16")
    assert_names(d, "distributed.ray_gpus_unavailable", ["8.0", "16"])


def test_all_reduce_of_a_float_fixture():
    d = explain_fixture("fixtures/distributed/all_reduce_float.py")
    assert_names(d, "distributed.collective_argument_type", ["`tensor`", "<class 'float'>", ".item()"])


def test_collective_argument_type_torch_1_0_wording():
    # https://github.com/pytorch/pytorch/pull/14204 (runbooks/distributed/collective_argument_type.md's example)
    d = explain_paste("RuntimeError: Invalid function argument. Expecting parameter: tensor to be a torch.Tensor type")
    assert_names(d, "distributed.collective_argument_type", ["`tensor`", "torch.Tensor"])


def test_hf_remove_columns_names_missing_and_present_columns():
    # https://github.com/neulab/prompt2model/issues/291 (raised by Dataset.remove_columns inside map;
    # runbooks/data/hf_dataset_column_missing.md's example)
    d = explain_paste("ValueError: Column name input_col not in the dataset. Current columns in the dataset: []")
    assert_names(d, "data.hf_dataset_column_missing", ["input_col", "its columns are []"])

