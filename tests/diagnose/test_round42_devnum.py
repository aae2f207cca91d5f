"""Round-42 wordings for device, numerics, autograd and distributed (edge and YOLO training logs, classic NLP libraries,
diffusion trainers and their xformers/bitsandbytes builds), and three controls: each corpus message (verbatim from the
opened rounds) is claimed, from its text alone, by the right rule with the values it holds named; other wordings of the
same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import (assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste, raised,
                      rules_of)


CORPUS_CASES = [
    # Ultralytics' own AMP check, logged with no error (the emoji lost: "checks failed .")
    ("r42_a.yaml#62", "numerics.ultralytics_amp_check_failed", ["AMP", "NaN"]),
    # YOLOv5's guard printed on its progress bar: the epoch and the batch named
    ("r42_a.yaml#87", "numerics.loss_nan_stop", ["nan", "16/999", "23/27"]),
    # PyTorch-YOLOv3's loss terms: conf finite beside nan box and class terms
    ("r42_a.yaml#88", "numerics.loss_nan_log", ["nan", "323/1313", "conf 0.755184"]),
    # DLLogger's run of halved loss scales, then average_loss : nan
    ("r42_b.yaml#76", "numerics.amp_overflow_skip", ["average_loss", "nan", "1.4210854715202004e-14"]),
    # yanmtt's bare "step loss" lines, and the checkpoint saved after the first nan
    ("r42_b.yaml#77", "numerics.loss_nan_log", ["76980", "nan", "Saving the model"]),
    # TurboMind's check: a full stop and two spaces before the place
    ("r42_a.yaml#82", "device.cuda_runtime_error", ["PTX", "memory_utils.cu:32"]),
    ("r42_b.yaml#8", "device.simpletransformers_use_cuda", ["use_cuda", "use_cuda=False"]),
    ("r42_b.yaml#10", "device.no_cuda_build", ["_cuda_setDevice", "torch.cuda.set_device"]),
    ("r42_c.yaml#14", "device.xformers_cpu_inputs", ["torch.float32", "cpu", "k=40"]),
    ("r42_c.yaml#38", "device.autocast_unsupported_device", ["mps", "torch 2.5"]),
    ("r42_c.yaml#64", "autograd.inference_tensor", ["9.2GB", "14.5GB"]),
    ("r42_c.yaml#67", "distributed.address_in_use", ["29500", "main_process_port"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("where, rule, values", [
    # the warning's place, read from a line the paste broke after "autocast_mode.py:141:"
    ("r42_b.yaml#12", "device.amp_cuda_unavailable", ["autocast_mode.py:141", "cuda"]),
    # faulthandler's dump under the kernel's assertion: the script's innermost frame
    ("r42_b.yaml#65", "device.device_assert", ["Indexing.cu:1146", "srcIndex < srcSelectDimSize",
                                               'train_redpajama.py", line 166']),
    # bitsandbytes' own check under torch.utils.checkpoint's warning: the error is the answer, not the warning
    ("r42_c.yaml#26", "device.no_kernel_image", ["ops.cu", "167"]),
])
def test_corpus_message_is_explained_where_it_shows(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("where", [
    # a deprecation warning above a FileNotFoundError it does not lead to (diffusion-pipe-ui#31)
    "r42_c.yaml#11",
    # pip still building the wheel: its spinner, not a failure (VideoLLaMB#9)
    "r42_c.yaml#18",
    # xFormers' import-time probe, caught and logged with its traceback (LoRA_Easy_Training_Scripts#228), and the older
    # two-line form of the same probe
    "r42_c.yaml#45",
    "r32_a.yaml#35",
    "r32_a.yaml#36",
])
def test_controls_stay_unclaimed(where):
    assert_left_alone(corpus_message(where), "*")


def test_a_warning_that_leads_to_the_error_still_answers():
    # bitsandbytes' CPU library warning above the ValueError it leads to (r20_a#64): not a deprecation, still the answer
    assert explain_paste(corpus_message("r20_a.yaml#64")).rule == "other.bnb_cpu_library_loaded"


@pytest.mark.parametrize("text, rule, values", [
    # YOLO11n's check failing on Colab (ultralytics#16585), yolov7's copy of yolov5's (yolov7#834)
    ("AMP: running Automatic Mixed Precision (AMP) checks with YOLO11n...\nAMP: checks failed ❌. Anomalies were detected "
     "with AMP on your system that may lead to NaN losses or zero-mAP results, so AMP will be disabled during training.",
     "numerics.ultralytics_amp_check_failed", ["YOLO11n", "NaN"]),
    ("AMP: checks failed X, disabling Automatic Mixed Precision.", "numerics.ultralytics_amp_check_failed",
     ["checks failed"]),
    # the same DLLogger lines earlier in the thread (DeepLearningExamples#543)
    ("DLL 2020-05-30 07:35:01.358301 - PARAMETER loss_scale : 3.725290298461914e-09 \n"
     "DLL 2020-05-30 07:35:53.788120 - PARAMETER loss_scale : 1.862645149230957e-09 \n"
     "DLL 2020-05-30 07:36:46.038493 - PARAMETER loss_scale : 9.313225746154785e-10 ",
     "numerics.amp_overflow_skip", ["3.725290298461914e-09", "9.313225746154785e-10"]),
    # rpunct building an NERModel without the flag, the two sentences joined (rpunct#1)
    ("**File \"app.py\", line 3, in <module>\n    rpunct = RestorePuncts()\n  File \"/home/beck/miniconda3/envs/"
     "restore_punctuation/lib/python3.7/site-packages/rpunct/punctuate.py\", line 18, in __init__\n    args={\"silent\": "
     "True, \"max_seq_length\": 512})\n  File \"/home/beck/miniconda3/envs/restore_punctuation/lib/python3.7/site-packages/"
     "simpletransformers/ner/ner_model.py\", line 212, in __init__\n    \"'use_cuda' set to True when cuda is unavailable.\"\n"
     "ValueError: 'use_cuda' set to True when cuda is unavailable.Make sure CUDA is available or set use_cuda=False.**",
     "device.simpletransformers_use_cuda", ["rpunct", "punctuate.py:18", "ner/ner_model.py:212"]),
    # torch.cuda.set_device on the CPU wheel (pytorch#13718)
    ("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n  File \"/nfs/vnx-home/dnewman/tmp/"
     "torch_bug/lib/python3.5/site-packages/torch/cuda/__init__.py\", line 262, in set_device\n    "
     "torch._C._cuda_setDevice(device)\nAttributeError: module 'torch._C' has no attribute '_cuda_setDevice'",
     "device.no_cuda_build", ["_cuda_setDevice", "CPU-only"]),
    # the same bitsandbytes check at another line, from MiniGPT-4's Windows install (MiniGPT-4#156)
    ("Error no kernel image is available for execution on the device at line 479 in file D:\\ai\\tool\\bitsandbytes\\csrc"
     "\\ops.cu", "device.no_kernel_image", ["479", "ops.cu"]),
    # LTX-Video's node entering autocast with "mps" (ComfyUI-LTXVideo#90), speechbrain's index (speechbrain#2881)
    ("File \"/Users/mac/ComfyUI/custom_nodes/ComfyUI-LTXVideo/model.py\", line 169, in wrapped_transformer\n    "
     "context_manager = torch.autocast(\"mps\", dtype=torch.bfloat16)\n                      "
     "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/Users/mac/Desktop/_SD_Lib/____VENV/.venv/lib/python3.11/"
     "site-packages/torch/amp/autocast_mode.py\", line 241, in __init__\n    raise RuntimeError(\nRuntimeError: User "
     "specified an unsupported autocast device_type 'mps'",
     "device.autocast_unsupported_device", ["model.py:169", "torch.autocast(\"mps\", dtype=torch.bfloat16)"]),
    ("RuntimeError: User specified an unsupported autocast device_type '0'", "device.autocast_unsupported_device",
     ["'0'", "device.type"]),
    # accelerate's check without backticks around the port (diffusers#9856)
    ("ConnectionError: Tried to launch distributed communication on port 29401, but another process is utilizing it. "
     "Please specify a different port (such as using the --main_process_port flag or specifying a different "
     "main_process_port in your config file) and rerun your script. To automatically use the next open port (on a single "
     "node), you can set this to 0.", "distributed.address_in_use", ["29401", "main_process_port"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_set_device_on_a_cpu_only_torch_live():
    # the installed torch raises it itself where it is a CPU-only build (torch.cuda.set_device calls torch._C directly)
    import torch

    import explainer

    if torch.version.cuda is not None or torch.version.hip is not None:
        pytest.skip("needs a CPU-only torch")
    diagnosis = explainer.explain(raised(lambda: torch.cuda.set_device(0)))
    assert_names(diagnosis, "device.no_cuda_build", ["set_device", "CPU-only"])


def test_bitsandbytes_check_under_a_warning_is_the_answer():
    # the same paste in another kohya_ss thread (kohya_ss#99): the checkpoint warning goes under the error
    text = ("F:\\koya\\kohya_ss\\venv\\lib\\site-packages\\torch\\utils\\checkpoint.py:25: UserWarning: None of the inputs "
            "have requires_grad=True. Gradients will be None\n  warnings.warn(\"None of the inputs have requires_grad=True. "
            "Gradients will be None\")\nError no kernel image is available for execution on the device at line 167 in file "
            "D:\\ai\\tool\\bitsandbytes\\csrc\\ops.cu")
    assert rules_of(text)[0] == "device.no_kernel_image", rules_of(text)


def test_xformers_probe_logged_by_rich_is_not_a_failure():
    # rich's log handler prints the place at the end of the warning line (LoRA_Easy_Training_Scripts#287)
    text = ("WARNING  A matching Triton is not available, some optimizations will not be enabled   __init__.py:61\n"
            "Traceback (most recent call last):\n  File \"D:\\AI\\Packages\\Training\\Kohya_ss\\LoRA_Easy_Training_Scripts\\"
            "backend\\sd_scripts\\venv\\Lib\\site-packages\\xformers\\__init__.py\", line 57, in _is_triton_available\n"
            "    import triton  # noqa\n    ^^^^^^^^^^^^^\nModuleNotFoundError: No module named 'triton'")
    assert_left_alone(text, "*")


@pytest.mark.parametrize("text, not_rule", [
    # the AMP check passing (ultralytics#5294)
    ("AMP: running Automatic Mixed Precision (AMP) checks with YOLOv8n... AMP: checks passed.",
     "numerics.ultralytics_amp_check_failed"),
    # triton missing with no xFormers probe around it (LoRA_Easy_Training_Scripts#287's error line alone): a failure
    ("ModuleNotFoundError: No module named 'triton'", "other.not_failure_xformers_triton_probe"),
    # MPS autocast present but given a dtype it does not take: a warning of torch >= 2.5 (AutoForge#55)
    (".venv/lib/python3.11/site-packages/autoforge/auto_forge.py:682: UserWarning: In MPS autocast, but the target dtype "
     "is not supported. Disabling autocast.\nMPS Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
     "device.autocast_unsupported_device"),
    # a private torch._C name a newer library calls on an older torch: not the CPU wheel (efficientdensenet_crnn#7)
    ("AttributeError: module 'torch._C' has no attribute '_cudnn_batch_norm_forward'", "device.no_cuda_build"),
    # xFormers' old dispatcher on a CUDA device: the GPU's kernels, not the CPU (sd_dreambooth_extension#262)
    ("NotImplementedError: No operator found for this attention: AttentionOpDispatch(dtype=torch.float32, "
     "device=device(type='cuda', index=0), k=160, has_dropout=False, attn_bias_type=<class 'NoneType'>, kv_len=64, "
     "q_len=64, kv=160, batch_size=16, num_heads=1, has_custom_scale=False, requires_grad=True)",
     "device.xformers_cpu_inputs"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
