"""Round-41 wordings for builds, installs, versions, compiled extensions and device availability (vision-language
models, physical sciences, the newest threads): each corpus message (verbatim from the opened rounds) is claimed, from its
text alone, by the right rule with the values it holds named; other wordings of the same families (from the threads
cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste, rules_of


CORPUS_CASES = [
    ("r41_a.yaml#16", "other.extension_name_not_defined", ["'_C'", "_C.ms_deform_attn_forward"]),
    ("r41_a.yaml#17", "other.extension_op_on_torch_c", ["torch._C", "ms_deform_attn_forward"]),
    ("r41_a.yaml#43", "device.bnb_quant_state_not_initialized", ["LinearFP4"]),
    ("r41_a.yaml#47", "other.was_blip_transformers_pin", ["transformers==4.26.1", "BLIP"]),
    ("r41_a.yaml#62", "other.torchvision_video_backend_unavailable", ["video_reader"]),
    ("r41_a.yaml#86", "device.cuda_runtime_error", ["ms_deformable_im2col_cuda", "PTX", "cudaErrorUnsupportedPtxVersion"]),
    ("r41_b.yaml#10", "other.module_has_no_attribute", ["kornia", "HomographyWarper"]),
    ("r41_b.yaml#57", "other.import_name_missing", ["SamplePadding", "kornia/__init__.py"]),
    ("r41_b.yaml#58", "other.import_name_missing", ["`pad`", "kornia.geometry.transform.pyramid"]),
    ("r41_b.yaml#83", "device.mkl_fft_error", ["MKL", "DFTI", "Inconsistent configuration parameters"]),
    ("r41_c.yaml#11", "other.msvc_python_lib_missing", ["python314.lib", "LNK1104", "3.14t", "python314t.lib"]),
    ("r41_c.yaml#26", "device.torch_memory_saver_driver_error",
     ["torch_memory_saver.cpp", "result=1", "`resume`", "line=214", "CUDA_ERROR_INVALID_VALUE"]),
    ("r41_c.yaml#31", "device.driver_too_old", ["error (35)", "THCGeneral.cpp:74"]),
    ("r41_c.yaml#52", "other.cmake_torch_version_rejected", ["2.1.0", "Torch 2.0", "CMakeLists.txt:27"]),
    ("r41_c.yaml#53", "other.xformers_build_mismatch", ["2.0.1", "2.1.0+cu121"]),
    ("r41_c.yaml#85", "device.rocm_hsa_invalid_isa", ["HSA_STATUS_ERROR_INVALID_ISA", "0x100f", "rocdevice.cpp:3018"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("where, rule, file_end, line", [
    # an IPython frame kept as a markdown link (JupyterLab / VS Code): the extension's call
    ("r41_a.yaml#17", "other.extension_op_on_torch_c", "ms_deform_attn.py", 53),
    # Colab's frame, under a torch.utils.checkpoint warning that is context, not the answer
    ("r41_a.yaml#16", "other.extension_name_not_defined", "ms_deform_attn.py", 53),
    # VS Code's notebook of 2022 ("homography.ipynb Cell 11' in <cell line: 2>()"), its lines as markdown links
    ("r41_b.yaml#10", "other.module_has_no_attribute", "homography.ipynb Cell 11", 2),
    # a traceback run together on one line, with frames whose file a web page ate (File "", line 1023, in exec_module)
    ("r41_b.yaml#58", "other.import_name_missing", "pyramid_blending.py", 7),
])
def test_corpus_message_is_placed_where_it_failed(where, rule, file_end, line):
    diagnosis = explain_paste(corpus_message(where))
    assert diagnosis.rule == rule, diagnosis.rule
    assert diagnosis.location is not None and diagnosis.location.file.endswith(file_end), diagnosis.location
    assert diagnosis.location.line == line, diagnosis.location


@pytest.mark.parametrize("text, rule, values", [
    # the error line alone, as the thread's title gives it (GroundingDINO#188)
    ("AttributeError: module 'torch._C' has no attribute 'ms_deform_attn_forward'", "other.extension_op_on_torch_c",
     ["ms_deform_attn_forward", "torch._C"]),
    # bitsandbytes' notice quoted in transformers#23895, and as its logger prints it (unsloth-zoo#1132)
    ("`FP4 quantization state not initialized. Please call .cuda() or .to(device) on the LinearFP4 layer first.`",
     "device.bnb_quant_state_not_initialized", ["LinearFP4"]),
    ("[bitsandbytes.nn.modules|WARNING] FP4 quantization state not initialized. Please call .cuda() or .to(device) on "
     "the LinearFP4 layer first.", "device.bnb_quant_state_not_initialized", ["LinearFP4", "bitsandbytes.nn.modules"]),
    # the notice without its backticks (was-node-suite-comfyui#369)
    ("WAS Node Suite Error: transformers==4.26.1 is required for BLIP models. Please run the C:\\Work\\SD-ComfyUI\\"
     "ComfyUI\\custom_nodes\\was-node- suite-comfyui\\requirements.txt through ComfyUI's ptyhon executable.",
     "other.was_blip_transformers_pin", ["transformers==4.26.1", "BLIP"]),
    # torchvision 0.5's warning (VMZ#130), the GPU decoder's refusal (vision#8166), VideoReader's (vision#2934's title)
    ("/home/richardkxu/anaconda3/envs/csn/lib/python3.7/site-packages/torchvision/__init__.py:64: UserWarning: "
     "video_reader video backend is not available\n  warnings.warn(\"video_reader video backend is not available\")",
     "other.torchvision_video_backend_unavailable", ["video_reader"]),
    ("RuntimeError: cuda video backend is not available.", "other.torchvision_video_backend_unavailable",
     ["`cuda` video backend", "Video Codec SDK"]),
    ("\"RuntimeError: Not compiled with video_reader support\" raises when I use the new fine-grained VideoReader API",
     "other.torchvision_video_backend_unavailable", ["video_reader"]),
    # deformable convolution's and attention's own launch check with other runtime errors (FairMOT#53, PDVC#6, DCNv2#34)
    ("error in modulated_deformable_im2col_cuda: invalid device function", "device.cuda_runtime_error",
     ["modulated_deformable_im2col_cuda", "invalid device function"]),
    ("error in ms_deformable_im2col_cuda: invalid device function", "device.cuda_runtime_error",
     ["ms_deformable_im2col_cuda", "cudaErrorInvalidDeviceFunction"]),
    ("\"error in deformable_col2im_cuda: too many resources requested for launch\"", "device.cuda_runtime_error",
     ["deformable_col2im_cuda", "too many resources requested for launch"]),
    # MKL's FFT refusals in torch's own threads: oneMKL's name (pytorch#154477), an empty dim list (pytorch#120986),
    # and libtorch's uncaught copy (pytorch#117252)
    ("`RuntimeError: MKL FFT error: Intel oneMKL DFTI ERROR: Inconsistent configuration parameters`.",
     "device.mkl_fft_error", ["oneMKL", "Inconsistent configuration parameters", "MKL 2024.1"]),
    ("RuntimeError: MKL FFT error: Intel MKL DFTI ERROR: Invalid configuration parameters", "device.mkl_fft_error",
     ["Invalid configuration parameters", "dim=[]"]),
    ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  MKL FFT error: Intel MKL DFTI "
     "ERROR: Invalid configuration parameters\nAborted (core dumped)", "device.mkl_fft_error",
     ["Invalid configuration parameters"]),
    # the linker's line in an insightface build under ComfyUI's portable Python (ComfyUI-ReActor#198), a free-threaded
    # build's (nanobind#1077), a Debug build's (Pangolin#570)
    ("      LINK : fatal error LNK1104: cannot open file 'python313.lib'", "other.msvc_python_lib_missing",
     ["python313.lib", "LNK1104"]),
    ("LINK : fatal error LNK1104: cannot open file 'python313t.lib' [D:\\a\\SHARPlib\\SHARPlib\\build\\cp313-cp313-"
     "win_amd64\\src\\nanobind\\calc.vcxproj]", "other.msvc_python_lib_missing", ["python313t.lib", "free-threaded"]),
    ("`fatal error LNK1104: cannot open file 'python36_d.lib' `", "other.msvc_python_lib_missing",
     ["python36_d.lib", "Release"]),
    # one line of the same report (torch_memory_saver#35)
    ("[torch_memory_saver.cpp] CUresult error  result=1 file=csrc/torch_memory_saver.cpp func=resume line=214",
     "device.torch_memory_saver_driver_error", ["result=1", "resume", "line=214"]),
    # ROCm's abort with the MIOpen kernel it was running (TheRock#3044), and an issue title (legacy-rocm-build#3054)
    ("Kernel Name: miopenSp3AsmConvFury_v2_4_1_gfx11_1024vgprs_fp16_fp16acc_f2x3_c16_stride1\n"
     "VGPU=0x493b4330 SWq=0x74b6496e0000, HWq=0x74b60c100000, id=1\n"
     "\tDispatch Header =0xb02 (type=2, barrier=1, acquire=1, release=1), setup=0\n"
     "\tgrid=[4608, 1, 1], workgroup=[384, 1, 1]\n"
     "\tprivate_seg_size=0, group_seg_size=65536\n"
     "\tkernel_obj=0x74b60e2a0f80, kernarg_address=0x0x74b4fe41fe80\n"
     "\tcompletion_signal=0x74b60fdf4780, correlation_id=0\n"
     "\trptr=1111, wptr=1112\n"
     ":0:rocdevice.cpp            :3756: 8633521827 us:  Callback: Queue 0x74b60c100000 aborting with error : "
     "HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid. code: 0x100f\nAborted (core dumped)",
     "device.rocm_hsa_invalid_isa",
     ["HSA_STATUS_ERROR_INVALID_ISA", "miopenSp3AsmConvFury_v2_4_1_gfx11_1024vgprs_fp16_fp16acc_f2x3_c16_stride1"]),
    ("[Issue]: rocm 6.1.0 with wheel pytorch at rx7600xt and running stable diffusion => HSA_STATUS_ERROR_INVALID_ISA: "
     "The instruction set architecture is invalid. code: 0x100f", "device.rocm_hsa_invalid_isa",
     ["HSA_STATUS_ERROR_INVALID_ISA", "0x100f"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("where, rule", [
    # a warning above an error no rule explains stays the answer (bitsandbytes' CPU library, then a bare ValueError)
    ("r20_a.yaml#64", "other.bnb_cpu_library_loaded"),
    # spawn's header above the child's error is not a warning: the paste read whole keeps its rule
    ("r31_b.yaml#23", "distributed.spawn_process_raised"),
])
def test_a_paste_read_whole_keeps_its_answer(where, rule):
    assert explain_paste(corpus_message(where)).rule == rule


def test_a_warning_above_an_explained_error_is_context():
    # torch.utils.checkpoint's warning printed while GroundingDINO ran (Grounded-Segment-Anything#171): under the error
    rules = rules_of(corpus_message("r41_a.yaml#16"))
    assert rules[0] == "other.extension_name_not_defined", rules
    assert "autograd.checkpoint_no_grad_inputs" not in rules, rules


@pytest.mark.parametrize("text, not_rule", [
    # torch's own private op missing from a release (efficientdensenet_crnn#7), and a project's own `_C` found without
    # the op (PSROIAlign-Multi-Batch-PyTorch#1)
    ("AttributeError: module 'torch._C' has no attribute '_cudnn_batch_norm_forward'", "other.extension_op_on_torch_c"),
    ("AttributeError: module 'model._C' has no attribute 'ps_roi_pool_forward'", "other.extension_op_on_torch_c"),
    # unsloth's own error on such a layer (unsloth-zoo#1132)
    ("RuntimeError: Unsloth: a 4-bit layer holds a packed uint8 weight of shape (15728640, 1) with no quant_state, so it "
     "cannot be dequantized or matmul'd.", "device.bnb_quant_state_not_initialized"),
    # LAVIS's report in words (LAVIS#624)
    ("It appears that the BLIP model requires Transformers version <= 4.27, but the requirement.txt file specifies "
     "Transformers version == 4.33.2.", "other.was_blip_transformers_pin"),
    # PySlowFast's loader giving up (SlowFast#438)
    ("Failed to decode by torchvision with exception: No such operator video_reader::probe_video_from_memory\n"
     "RuntimeError: Failed to fetch video after 10 retries.", "other.torchvision_video_backend_unavailable"),
    # the same launch check with an illegal memory access (Open-GroundingDino#18): another rule's reading
    ("error in ms_deformable_im2col_cuda: an illegal memory access was encountered", "device.cuda_runtime_error"),
    # the mkl_fft package under NumPy (mkl_fft#57)
    ("ValueError: Internal error occurred: b'Intel MKL DFTI ERROR: Inconsistent configuration parameters'",
     "device.mkl_fft_error"),
    # boost.python's import library, not Python's (btoa#1)
    ("LINK : fatal error LNK1104: cannot open file 'C:\\db\\build\\S\\VS1564R\\Release\\boost\\lib\\boost_python311-vc142"
     "-mt-x64-1_82.lib' [C:\\Users\\hoske\\Documents\\GitHub\\btoa\\btoa\\source\\build\\plugins\\render_delegate\\"
     "hdArnold.vcxproj]", "other.msvc_python_lib_missing"),
    # out of memory in the memory saver (torch_memory_saver#4): memory.torch_memory_saver_oom's
    ("[torch_memory_saver.cpp] CUresult error  result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=103 (5)",
     "device.torch_memory_saver_driver_error"),
    # another HSA status from ROCm's queue callback (hip#2344)
    ("Device::callbackQueue aborting with error : HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION:  The agent attempted to execute an "
     "illegal shader instruction. code: 0x2a", "device.rocm_hsa_invalid_isa"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
