"""Round 9 data and distributed rules: the round's misses (torchvision detection targets, Lightning
loaders, old BatchSampler checks, DeepSpeed CPU Adam, FSDP state dicts, the c10d store) and wording
families of the libraries built on torch that no round held yet (PIL, transformers tokenizers and
Trainer, datasets, DeepSpeed ZeRO-3, fairscale)."""

from __future__ import annotations

import io

from explainer.cli.explain import explain_stream

from conftest import assert_names, explain_fixture, explain_paste, said


def _unclaimed(text: str) -> bool:
    return all(d.rule is None for d in explain_stream(io.StringIO(text)))


# --- data: round-9 misses -----------------------------------------------------------------------

def test_weights_only_message_cut_before_its_reason_is_named():
    d = explain_paste("_pickle.UnpicklingError: Weights only load failed. This file can still be loaded, to do so you "
                      "have two options, do those steps only if you trust the source of the checkpoint.")
    assert_names(d, "data.weights_only_load", ["Weights only load failed", "weights_only=True"])


def test_ancdata_names_the_count_and_file_descriptors():
    d = explain_paste("RuntimeError: received 0 items of ancdata")
    assert_names(d, "data.too_many_open_files", ["received 0 items of ancdata", "descriptor"])
    assert any("file_system" in fix for fix in d.fixes), d.fixes


def test_iterable_dataset_sampler_wrapped_over_two_lines():
    d = explain_paste("ValueError: DataLoader with IterableDataset: expected unspecified sampler option,\n"
                      "but got sampler=<torch.utils.data.distributed.DistributedSampler object at 0x7fbbe1e616d0>")
    assert_names(d, "data.dataloader_options", ["DistributedSampler", "IterableDataset"])


def test_detection_model_in_training_mode_without_targets():
    d = explain_paste("AssertionError: targets should not be none when in training mode")
    assert_names(d, "data.detection_targets", ["targets should not be none when in training mode", "model.eval()"])
    d = explain_paste("ValueError: In training mode, targets should be passed")
    assert d.rule == "data.detection_targets", d.rule


def test_degenerate_box_names_the_box_and_the_target():
    d = explain_paste("ValueError: All bounding boxes should have positive height and width. Found invalid box "
                      "[10.0, 20.0, 10.0, 40.0] for target at index 3.")
    assert_names(d, "data.detection_targets", ["[10.0, 20.0, 10.0, 40.0]", "target at index 3", "box_convert"], said(d))


def test_target_list_instead_of_dict_read_from_the_detection_frame():
    d = explain_paste('  File "/usr/lib/python3/site-packages/torchvision/models/detection/transform.py", line 75, in resize\n'
                      '    bbox = target["boxes"]\n'
                      "TypeError: list indices must be integers or slices, not str")
    assert_names(d, "data.detection_targets", ["transform.py", "resize", 'target["boxes"]'])
    assert any("zip(*batch)" in fix for fix in d.fixes), d.fixes
    assert _unclaimed("TypeError: list indices must be integers or slices, not str")


def test_lightning_without_test_dataloader_names_hook_and_call():
    d = explain_paste("pytorch_lightning.utilities.exceptions.MisconfigurationException: No `test_dataloader()` "
                      "method defined to run `Trainer.test`.")
    assert_names(d, "data.lightning_dataloader_missing", ["test_dataloader()", "Trainer.test"])
    assert any("trainer.test(model, dataloaders=" in fix for fix in d.fixes), d.fixes
    d = explain_paste("lightning_fabric.utilities.exceptions.MisconfigurationException: `val_dataloader` must be "
                      "implemented to be used with the Lightning Trainer")
    assert_names(d, "data.lightning_dataloader_missing", ["val_dataloader"])


def test_custom_sampler_not_derived_from_sampler_names_its_class():
    d = explain_paste("ValueError: sampler should be an instance of torch.utils.data.Sampler, but got "
                      "sampler=<utils.sampler.SubsetSequentialSampler object at 0x7f0e192affd0>")
    assert_names(d, "data.sampler_argument_type", ["utils.sampler.SubsetSequentialSampler", "torch.utils.data.Sampler"])
    assert any("class SubsetSequentialSampler(torch.utils.data.Sampler)" in fix for fix in d.fixes), d.fixes


def test_sampler_class_passed_uninstantiated_and_a_flag_from_a_config():
    d = explain_paste("ValueError: sampler should be an instance of torch.utils.data.Sampler, but got "
                      "sampler=<class 'torch.utils.data.sampler.WeightedRandomSampler'>")
    assert_names(d, "data.sampler_argument_type", ["not a sampler object", "WeightedRandomSampler"])
    d = explain_paste("ValueError: drop_last should be a boolean value, but got drop_last=1")
    assert_names(d, "data.sampler_argument_type", ["drop_last=1"])


# --- data: library families new in this round --------------------------------------------------

def test_truncated_image_names_the_bytes_and_the_pil_switch():
    d = explain_paste("OSError: image file is truncated (43 bytes not processed)")
    assert_names(d, "data.image_file_unreadable", ["image file is truncated (43 bytes not processed)"])
    assert "LOAD_TRUNCATED_IMAGES" in said(d)


def test_unidentified_image_names_the_file_and_macos_resource_files():
    d = explain_paste("PIL.UnidentifiedImageError: cannot identify image file 'dataset/img_vg/53.jpg'")
    assert_names(d, "data.image_file_unreadable", ["'dataset/img_vg/53.jpg'"])
    d = explain_paste("PIL.UnidentifiedImageError: cannot identify image file <_io.BufferedReader "
                      "name='data/faces/._img_001.jpg'>")
    assert_names(d, "data.image_file_unreadable", ["AppleDouble"])


def test_pil_error_inside_tensorflow_is_left_to_the_foreign_rules():
    assert _unclaimed("UnknownError:  UnidentifiedImageError: cannot identify image file "
                      "<_io.BytesIO object at 0x7f9c489460a0>")


def test_tokenizer_labels_of_unequal_length_point_at_a_label_padding_collator():
    d = explain_paste("ValueError: Unable to create tensor, you should probably activate truncation and/or padding with "
                      "'padding=True' 'truncation=True' to have batched tensors with the same length. Perhaps your "
                      "features (`labels` in this case) have excessive nesting (inputs type `list` where type `int` "
                      "is expected).")
    assert_names(d, "data.tokenizer_batch_unequal_lengths", ["`labels`", "DataCollatorWithPadding"])
    assert any("DataCollatorForSeq2Seq" in fix for fix in d.fixes), d.fixes


def test_tokenizer_raw_column_left_in_the_dataset():
    d = explain_paste("ValueError: Unable to create tensor, you should probably activate truncation and/or padding with "
                      "'padding=True' 'truncation=True' to have batched tensors with the same length. Perhaps your "
                      "features (`Instruction` in this case) have excessive nesting (inputs type `list` where type "
                      "`int` is expected).")
    assert_names(d, "data.tokenizer_batch_unequal_lengths", ["`Instruction`", "raw column"])


def test_trainer_empty_batch_with_a_kwargs_model_suggests_keeping_columns():
    d = explain_paste("ValueError: The batch received was empty, your model won't be able to train on it. Double-check "
                      "that your training dataset contains keys expected by the model: args,kwargs,label_ids,label.")
    assert_names(d, "data.trainer_empty_batch", ["args,kwargs,label_ids,label", "*args, **kwargs"])
    assert any("remove_unused_columns=False" in fix for fix in d.fixes), d.fixes


def test_hf_dataset_index_on_an_empty_and_on_a_smaller_dataset():
    d = explain_paste("IndexError: Invalid key: 0 is out of bounds for size 0")
    assert_names(d, "data.hf_dataset_index_out_of_bounds", ["0 rows", "empty"])
    d = explain_paste("IndexError: Invalid key: 16315106 is out of bounds for size 15000")
    assert_names(d, "data.hf_dataset_index_out_of_bounds", ["16315106", "15000", "larger dataset"])


# --- distributed: round-9 misses ---------------------------------------------------------------

def test_tcpstore_workers_wording_names_timeout_and_count():
    d = explain_paste("torch.distributed.DistStoreError: Timed out after 6 seconds waiting for workers. 1/2 workers joined.")
    assert_names(d, "distributed.rendezvous_timeout", ["6 seconds", "1/2"])


def test_libuv_bind_failure_names_port_and_errno_name():
    d = explain_paste("The server socket has failed to bind. port: 1, useIpv6: 0, code: -13, name: EACCES, "
                      "message: permission denied")
    assert_names(d, "distributed.store_bind_failed", ["port: 1", "EACCES", "below 1024"])


def test_dtensor_mixed_without_the_operator_name():
    d = explain_paste("got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor before "
                      "calling distributed operators!")
    assert_names(d, "distributed.dtensor_mixed_tensor", ["got mixed torch.Tensor and DTensor", "DTensor.from_local"], said(d))
    d = explain_paste("RuntimeError: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor "
                      "before calling distributed operators!")
    assert not d.summary.startswith("RuntimeError"), d.summary


def test_deepspeed_cpu_adam_undefined_tensor_needs_its_frame():
    d = explain_paste('[rank0]: File "/home/z/.local/lib/python3.10/site-packages/deepspeed/ops/adam/cpu_adam.py", '
                      "line 163, in step\n"
                      "[rank0]: self.ds_opt_adam.adam_update(self.opt_id, state['step'], group['lr'], beta1, beta2, "
                      "group['eps'],\n"
                      "[rank0]: RuntimeError: tensor does not have a device")
    assert_names(d, "distributed.deepspeed_cpu_optimizer_undefined_tensor", ["cpu_adam.py", "offload"])
    # the bare line (no DeepSpeed frame) gets the general rule, which names no DeepSpeed kernel
    assert explain_paste("RuntimeError: tensor does not have a device").rule == "device.undefined_tensor_no_device"


def test_store_wait_timeout_live():
    d = explain_fixture("fixtures/distributed/store_wait_timeout.py")
    assert_names(d, "distributed.store_wait_timeout", ["1000 ms", "/rank1_ready"])


def test_store_wait_timeout_reads_elastic_and_vllm_keys():
    d = explain_paste("torch.distributed.DistStoreError: wait timeout after 900000ms, keys: "
                      "/none/torchelastic/role_info/0, /none/torchelastic/role_info/1")
    assert_names(d, "distributed.store_wait_timeout", ["900000 ms", "torchrun's elastic agents"])
    d = explain_paste("[rank0]: torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /broadcast_from/0/75465")
    assert_names(d, "distributed.store_wait_timeout", ["/broadcast_from/0/75465", "StatelessProcessGroup"])
    d = explain_paste("RuntimeError: Socket Timeout")
    assert_names(d, "distributed.store_wait_timeout", ["Socket Timeout"])


def test_nccl_unique_id_store_keeps_its_own_socket_timeout():
    d = explain_paste("RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d "
                      "key-value store by key '0', but store->get('0') got error: Socket Timeout")
    assert d.rule == "distributed.nccl_unique_id_store", d.rule


def test_fsdp_state_dict_assert_names_parameter_and_rank():
    d = explain_paste("AssertionError: FSDP assumes _fsdp_wrapped_module.encoder.block.0.layer.0.SelfAttention.q.weight "
                      "is in the state_dict \nbut the state_dict only has odict_keys(['_fsdp_wrapped_module._flat_param', \n"
                      "'_fsdp_wrapped_module.encoder.block.0._flat_param']). prefix=_fsdp_wrapped_module.encoder.block.0., "
                      "module_name=layer.0.SelfAttention.q. param_name=weight rank=1.")
    assert_names(d, "distributed.fsdp_state_dict_missing_param",
                 ["_fsdp_wrapped_module.encoder.block.0.layer.0.SelfAttention.q.weight", "rank=1", "flat parameters"])


def test_fairscale_consolidate_shared_param_needs_its_frame():
    d = explain_paste('  File "/env/lib/python3.8/site-packages/fairscale/nn/data_parallel/fully_sharded_data_parallel.py", '
                      "line 1706, in consolidate_shard_weights\n"
                      "    consolidated_weights[dest_path] = consolidated_weights[src_path]\n"
                      "KeyError: 'embed_tokens.weight'")
    assert_names(d, "distributed.fairscale_consolidate_shared_param", ["'embed_tokens.weight'", "consolidate_shard_weights"])
    # without the frame, a bare KeyError on a parameter name is a state_dict indexed by a name it lacks (round 17)
    assert explain_paste("KeyError: 'embed_tokens.weight'").rule == "data.state_dict_param_key_missing"


# --- distributed: library families new in this round ------------------------------------------

def test_zero3_with_device_map_names_the_conflict():
    d = explain_paste("ValueError: DeepSpeed Zero-3 is not compatible with `low_cpu_mem_usage=True` or with passing "
                      "a `device_map`.")
    assert_names(d, "distributed.deepspeed_zero3_device_map", ["`low_cpu_mem_usage=True` or with passing a `device_map`"])
    d = explain_paste("ValueError: DeepSpeed Zero-3 is not compatible with passing a `device_map`.")
    assert_names(d, "distributed.deepspeed_zero3_device_map", ["passing a `device_map`", "zero.Init"])


def test_zero3_parameter_without_ds_attributes():
    d = explain_paste("AttributeError: 'Parameter' object has no attribute 'ds_status'")
    assert_names(d, "distributed.deepspeed_zero3_param_attribute", ["`ds_status`", "nn.Parameter"])
    # another library's attribute on a Parameter (ColossalAI's): not DeepSpeed's, only Python's generic reading
    [other] = explain_stream(io.StringIO("AttributeError: 'Parameter' object has no attribute 'colo_attr'"))
    assert other.rule == "other.object_has_no_attribute"


def test_misspelled_getitem_live():
    d = explain_fixture("fixtures/data/dataset_getitem_misspelled.py")
    assert_names(d, "data.dataset_method_missing", ["Dataset.__getitem__", "__get_item__"])


def test_old_torch_bare_not_implemented_read_from_the_dataset_frame():
    d = explain_paste("~\\Anaconda3\\envs\\Pytorch\\lib\\site-packages\\torch\\utils\\data\\dataset.py in "
                      "__getitem__(self, index)\n     24     def __getitem__(self, index):\n"
                      "---> 25         raise NotImplementedError\n\nNotImplementedError:")
    assert_names(d, "data.dataset_method_missing", ["__getitem__", "torch/utils/data/dataset.py"])
    assert _unclaimed("NotImplementedError:")


def test_batched_map_that_changes_the_row_count():
    d = explain_paste("pyarrow.lib.ArrowInvalid: Column 5 named input_ids expected length 1000 but got length 1096")
    assert_names(d, "data.hf_map_column_length", ["`input_ids`", "1096", "1000", "more"])
    assert any("remove_columns=ds.column_names" in fix for fix in d.fixes), d.fixes


def test_accelerate_device_map_auto_in_a_distributed_run():
    d = explain_paste("ValueError: You can't train a model that has been loaded with `device_map='auto'` in any "
                      "distributed mode. Please rerun your script specifying `--num_processes=1` or by launching with "
                      "`python {{myscript.py}}`.")
    assert_names(d, "distributed.accelerate_device_map_distributed", ["`device_map='auto'`", "one process"])
    assert any("process_index" in fix for fix in d.fixes), d.fixes


def test_bare_dist_network_error_reads_as_a_lost_store_peer():
    d = explain_paste("torch.distributed.DistNetworkError: Connection reset by peer")
    assert_names(d, "distributed.tcpstore_connection_lost", ["Connection reset by peer", "MASTER_ADDR:MASTER_PORT"])
    assert explain_paste("RuntimeError: Connection reset by peer").rule == "distributed.gloo_connection"


def test_old_addmm_check_under_zero3_read_from_the_linear_frame():
    d = explain_paste('  File "/env/lib/python3.7/site-packages/torch/nn/functional.py", line 1690, in linear\n'
                      "    ret = torch.addmm(bias, input, weight.t())\n"
                      "RuntimeError: tensors must be 2-D")
    assert_names(d, "distributed.sharded_param_outside_forward", ["tensors must be 2-D", "torch.addmm", "ZeRO-3"])
    # bare, the words are torch 1.12's MPS addmm more often than a sharded weight (r9_a.yaml#12, labelled other/device)
    assert explain_paste("RuntimeError: tensors must be 2-D").rule == "other.mps_addmm_not_2d"


def test_class_names_as_labels_are_a_data_failure_that_names_the_labels():
    diagnosis = explain_fixture("fixtures/data/loss_target_class_names.py")
    assert_names(diagnosis, "data.loss_target_not_tensor", ["labels is a tuple of 4: str", "cross_entropy_loss()"])
    assert any(c["name"] == "labels" for c in diagnosis.culprits)
    # the input side of the same check stays a model-outputs problem
    assert explain_paste("TypeError: cross_entropy_loss(): argument 'input' (position 1) must be Tensor, not tuple"
                         ).rule == "other.argument_type"
