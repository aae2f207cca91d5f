"""Device and memory rules from round 18 (deployment and platforms): PyTorch/XLA's internal checks and TPU memory,
DirectML's missing kernels, CPU fallback and HRESULT checks, the autograd engine's device queues, Ascend NPU stream
synchronisation, IPEX selecting an XPU that is not there, the NVIDIA driver library missing under cuDNN or
bitsandbytes, MIOpen's own errors, MPS kernels missing for a dtype pair, and allocations over 1 EB. Only the
PrivateUse1 case can be raised by the CPU build of torch 2.13 (a fixture); the rest are real messages, verbatim from
the corpus or the cited threads."""

from __future__ import annotations

import pytest

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, ruled_diagnoses


def test_a_privateuse1_plugin_without_kernels_is_named_live():
    diagnosis = explain_fixture("fixtures/device/privateuse1_no_kernel.py")
    assert_names(diagnosis, "device.backend_not_available", ["`aten::empty.memory_format`", "PrivateUse1 backend"])
    assert diagnosis.location.line == 19


@pytest.mark.parametrize("where, values", [
    ("r18_b.yaml#36", ["`aten::_cumsum`", "DirectML (the `DML` backend"]),
    ("r18_b.yaml#37", ["`aten::rrelu_with_noise_`", "UNKNOWN_TENSOR_TYPE_ID"]),
])
def test_directml_missing_kernels_name_the_op_and_backend(where, values):
    assert_names(ruled_diagnoses(where)[0], "device.backend_not_available", values)


def test_a_quantized_kernel_on_an_unknown_tensor_type_stays_quantized():
    text = ("RuntimeError: Could not run 'quantized::conv2d_prepack' with arguments from the 'UNKNOWN_TENSOR_TYPE_ID' "
            "backend. 'quantized::conv2d_prepack' is only available for these backends: [QuantizedCPU].  ")
    assert explain_paste(text).rule == "other.quantized_backend_mismatch"


@pytest.mark.parametrize("where, values", [
    ("r18_b.yaml#6", ["`it != inputs_.end()`", "aten_xla_type.cpp:161", "`mul`", "pytorch/xla#7602"]),
    ("r18_b.yaml#7", ["`xtensor`", "aten_xla_bridge.cpp:110", "not an XLA tensor"]),
    ("r18_b.yaml#53", ["`default_device_target != options_.global_device_map.end()`", "xrt_computation_client.cc:258",
                       "XRT_TPU_CONFIG"]),
])
def test_xla_check_failures_name_the_check_and_place(where, values):
    assert_names(ruled_diagnoses(where)[0], "device.xla_check_failed", values)


@pytest.mark.parametrize("text, values", [
    # pytorch/xla#8346: a check with the two values it compared
    ("RuntimeError: torch_xla/csrc/data_ops.cpp:185 : Check failed: input_sizes.size() <= output_sizes.size() (2 vs. 1)\n"
     "*** Begin stack trace ***\n\ttsl::CurrentStackTrace()\n\ttorch_xla::BuildExpand(xla::XlaOp, "
     "absl::lts_20230802::Span<long const>)", ["`input_sizes.size() <= output_sizes.size()`", "(2 vs. 1)",
                                               "data_ops.cpp:185"]),
    # pytorch/xla#3108: the bridge's message
    ("Input tensor is not an XLA tensor: torch.FloatTensor", ["`torch.FloatTensor`", "still on the CPU"]),
])
def test_other_xla_check_wordings(text, values):
    assert_names(explain_paste(text), "device.xla_check_failed", values)


def test_a_lost_xrt_session_stays_its_own_rule():
    text = ("RuntimeError: tensorflow/compiler/xla/xla_client/xrt_computation_client.cc:421 : Check failed: "
            "session->session()->Run(session_work->feed_inputs, session_work->outputs_handles, &outputs) == "
            "::tensorflow::Status::OK() (Aborted: Session 018370a5591ff66c is not found. vs. OK)")
    assert explain_paste(text).rule == "device.xla_session_not_found"


@pytest.mark.parametrize("text, values", [
    (corpus_message("r18_b.yaml#5"), ["6.48G", "6.78G free", "3.33G reservable", "tpu_execute_op.cc:266"]),
    # pytorch/xla#9524: the compiler's vmem check
    ("RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
     "memory space vmem. Used 32.42M of 16.00M vmem. Exceeded vmem capacity by 16.42M",
     ["TPU vmem", "32.42M of 16.00M", "16.42M over capacity"]),
])
def test_tpu_out_of_memory_names_the_sizes(text, values):
    assert_names(explain_paste(text), "memory.xla_tpu_oom", values)


def test_jax_out_of_tpu_memory_is_not_claimed():
    import io

    from explainer.cli.explain import explain_stream

    text = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of "
            "memory in memory space hbm. Used 21.95G of 15.48G hbm.")
    assert all(d.rule != "memory.xla_tpu_oom" for d in explain_stream(io.StringIO(text)))


@pytest.mark.parametrize("where, values", [
    ("r18_b.yaml#62", ["`synchronize`", "compiler_depend.ts:361", "error code 507011",
                       "`AclrtSynchronizeStreamWithTimeout`"]),
    ("r18_b.yaml#63", ["error code 507034", "compiler_depend.ts:526"]),
    ("r18_b.yaml#64", ["CANN error EH9999", "torch_npu error ERR00100", "runtime result 507048", "fftsplus timeout"]),
    ("r18_b.yaml#71", ["runtime result 107020", "NPUStream.cpp:365", "`rtDeviceSynchronize`"]),
])
def test_ascend_synchronisation_failures_name_codes_and_places(where, values):
    assert_names(ruled_diagnoses(where)[0], "device.ascend_npu_runtime_error", values)


def test_ipex_selecting_a_missing_xpu_names_the_call_and_warning():
    assert_names(ruled_diagnoses("r18_b.yaml#1")[0], "device.no_xpu_device",
                 ["`dpcppSetDevice`", "Device.cpp:167", "XPU Device count is zero!"])


def test_the_autograd_device_queue_assert_is_explained():
    assert_names(ruled_diagnoses("r18_b.yaml#2")[0], "device.autograd_device_queue",
                 ["engine.cpp:1451", "index is -1", "torch-directml"])


@pytest.mark.parametrize("where, values", [
    ("r18_b.yaml#17", ["`libcudnn_cnn_infer.so.8`", "`libcuda.so`", "--gpus all"]),
    ("r18_b.yaml#19", ["`libcuda.so`", "NVIDIA driver"]),
])
def test_the_missing_driver_library_is_named(where, values):
    assert_names(ruled_diagnoses(where)[0], "device.libcuda_not_found", values)


@pytest.mark.parametrize("text, rule", [
    # vladmandic/sdnext#539: cuDNN missing the runtime compiler, not the driver
    ("Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file: No such file "
     "or directory", "other.shared_library_missing"),
])
def test_other_missing_libraries_keep_their_rules(text, rule):
    assert explain_paste(text).rule == rule


def test_llama_cpp_missing_the_versioned_driver_library_is_not_claimed():
    import io

    from explainer.cli.explain import explain_stream

    found = explain_stream(io.StringIO(corpus_message("r10_b.yaml#31")))
    assert all(d.rule != "device.libcuda_not_found" for d in found)


def test_miopen_incorrect_params_names_both_places():
    assert_names(ruled_diagnoses("r18_b.yaml#25")[0], "device.miopen_error",
                 ["convolutionocl.cpp:831", "Forward Convolution cannot be executed due to incorrect params",
                  "sqlite_db.cpp:108", "open memvfs: unable to open database file"])


def test_directml_cpu_fallback_is_a_warning_naming_the_op():
    assert_names(ruled_diagnoses("r18_b.yaml#38")[0], "device.cpu_fallback_warning",
                 ["`aten::multinomial`", "torch-directml", "dml_cpu_fallback.cpp:16"])


@pytest.mark.parametrize("text, values", [
    (corpus_message("r18_b.yaml#39"), ["`dml_device->CreateOperator(...)`", "float64"]),
    # microsoft/DirectML#287: the GPU reset, with the plugin's source place
    ("[libprotobuf FATAL D:\\a\\_work\\1\\s\\pytorch-directml\\caffe2\\dml\\dml_command_recorder.cc:392] CHECK failed: "
     "((((HRESULT)((dml_device_->GetDeviceRemovedReason()))) >= 0)) == (true):",
     ["`dml_device_->GetDeviceRemovedReason(...)`", "dml_command_recorder.cc:392", "TDR"]),
])
def test_directml_hresult_checks_name_the_call(text, values):
    assert_names(explain_paste(text), "device.directml_hresult_check", values)


def test_lightning_without_tpu_devices_is_explained():
    assert_names(ruled_diagnoses("r18_b.yaml#51")[0], "device.lightning_accelerator_unavailable",
                 ["MisconfigurationException", "No TPU devices were found", "XRT_TPU_CONFIG"])


def test_npu_allocation_over_1eb_is_a_garbage_size():
    assert_names(ruled_diagnoses("r18_b.yaml#68")[0], "memory.allocation_over_1eb",
                 ["NPU allocator", "more than 1EB", "negative number"])


def test_a_real_npu_out_of_memory_stays_cuda_oom():
    assert ruled_diagnoses("r18_b.yaml#66")[0].rule == "memory.cuda_oom"


def test_mps_missing_kernel_names_the_dtype_pair():
    assert_names(ruled_diagnoses("r18_b.yaml#85")[0], "device.mps_kernel_function_missing",
                 ["`add_alpha_dense_cast_half_float`", "casts half and float"])


@pytest.mark.parametrize("where, rule, values", [
    ("r18_b.yaml#22", "device.device_assert",
     ["`THCudaCheck FAIL file=THCGeneral.c line=844 error=59`", "`function_attributes()`", "`cudaFuncGetAttributes`"]),
    ("r15_b.yaml#22", "device.device_assert", ["`THCudaCheck FAIL file=THCTensorMath.cu line=26 error=59`"]),
    ("r18_b.yaml#4", "device.rocblas_tensile_library",
     ["`C:\\Program Files\\AMD\\ROCm\\6.1\\bin\\/rocblas/library/TensileLibrary.dat`"]),
    ("r18_b.yaml#9", "memory.windows_paging_file", ["caffe2_detectron_ops_gpu.dll"]),
    ("r18_b.yaml#32", "device.rocm_memory_access_fault", ["GPU node-2", "Agent handle 0x55fea5592860"]),
    ("r18_b.yaml#35", "device.xpu_native_api", ["`_has_fp64_dtype`", "PI_ERROR_UNINITIALIZED", "could not initialise"]),
])
def test_widened_rules_name_the_values_they_missed(where, rule, values):
    assert_names(ruled_diagnoses(where)[0], rule, values)


def test_a_tensorrt_engine_from_another_gpu_names_both_capabilities():
    assert_names(ruled_diagnoses("r18_a.yaml#50")[0], "device.tensorrt_engine_device",
                 ["expecting compute 8.6 got compute 7.5", "runtime.cpp::deserializeCudaEngine::50", "Error Code 4"])


def test_a_tensorrt_engine_from_another_version_stays_compile():
    text = ("The engine plan file is not compatible with this version of TensorRT, expecting library version 8.2.4 got "
            "8.2.3, please rebuild.")
    assert explain_paste(text).rule == "compile.tensorrt_engine_version"
