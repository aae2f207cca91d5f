"""Leftovers of rounds 24 and 25, written in round 41: each corpus message (verbatim from the opened rounds) is claimed,
from its text alone, by the right rule with the values it holds named; other wordings of the same families (from the
threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r24_a.yaml#5", "other.xformers_build_mismatch", ["2.0.1+cu118", "2.0.1+cpu", "3.10.11"]),
    ("r24_a.yaml#10", "distributed.colossalai_run_failed", ["--nproc_per_node=4", "127.0.0.1:29500", "train.py"]),
    ("r24_a.yaml#12", "other.extension_build_failed", ["cpu_adam"]),
    ("r24_a.yaml#13", "data.checkpoint_save_failed", ["inline_container.cc:325", "pos 128", "mz_zip_writer_add_mem_ex_v2"]),
    ("r24_a.yaml#17", "device.mismatch", ["cuda:0", "torch.mul_", "einops.py(32): _product"]),
    ("r24_a.yaml#29", "data.monai_applying_transform", ["<monai.transforms.compose.Compose object at 0x7f566c30a2c0>"]),
    ("r24_a.yaml#30", "data.worker_error", ["worker process 0", "442.02576912"]),
    ("r24_a.yaml#35", "other.ray_task_error", ["RayTaskError(AttributeError)", "ray::TrainALL.train()",
                                              "TrainALL_4c552_00000"]),
    ("r24_a.yaml#53", "other.comfyui_sampler_key_zero", ["KSampler", "execution.py:151"]),
    ("r24_a.yaml#61", "other.domain_library_cuda_mismatch", ["CUDA Version=9.0", "CUDA Version=10.0"]),
    ("r24_a.yaml#66", "other.sglang_warmup_http_status", ["<Response [502]>", "server.py:621", "Killed"]),
    ("r24_a.yaml#70", "other.peft_lora_bias_not_implemented", ["mark_only_lora_as_trainable", "lora.py:263",
                                                               "NotImplementedError"]),
    ("r24_a.yaml#77", "other.lavis_model_not_registered", ["from_pretrained", "NoneType", "blip2-t5"]),
    ("r24_a.yaml#78", "other.torch_attribute_missing", ["cholesky", "module 'torch'"]),
    ("r24_a.yaml#80", "other.espnet_installer_torch_changed", ["Makefile:203", "fairscale.done", "Error 1"]),
    ("r24_a.yaml#83", "other.allennlp_configuration_error", ["optimizer", "params.py:258"]),
    ("r24_a.yaml#109", "distributed.optuna_distributed_trial_argument", ["optuna.trial.Trial", "Rank 0",
                                                                         "pytorch_distributed.py:141"]),
    ("r24_a.yaml#115", "data.torchio_batch_data_missing", ["'data'", 'b["img"][torchio.DATA]']),
    ("r24_a.yaml#119", "other.torchtune_cli_shadowed", ["tune run", "Usage: tune [OPTIONS] COMMAND [ARGS]..."]),
    ("r24_a.yaml#126", "data.bark_checkpoint_model_args", ["vocab_size", "generation.py:228", "text.pt"]),
    ("r24_b.yaml#12", "other.simsiam_byol_unfinished", ["update_moving_average", "byol.py:75"]),
    ("r24_b.yaml#63", "other.k2_check_failed", ["tokens = tokens.to(device)"]),
    ("r25_a.yaml#27", "numerics.distribution_value_support", ["(64, 16)", "MultivariateNormal",
                                                              "torch.Size([16, 16])", "Real()"]),
    ("r25_a.yaml#35", "device.no_cuda_device", ["training-images", "computing latents"]),
    ("r25_a.yaml#40", "device.input_weight_type", ["torch.FloatTensor", "torch.cuda.FloatTensor", "F.conv2d"]),
    ("r25_a.yaml#49", "other.torchvision_ops_missing", ["torchvision::nms", "HiggsAudioV2TokenizerModel"]),
    ("r25_a.yaml#60", "device.xla_check_failed", ["pjrt_computation_client.cc:108", "tpu_status.ok()", "xla_model.py"]),
    ("r25_b.yaml#12", "other.test_expected_exception_not_raised", ["MisconfigurationException",
                                                                   "'No supported gpu backend found!'"]),
    ("r25_b.yaml#15", "memory.cuda_oom", ["46.00 MiB", "11.92 GiB", "efficientnet_b4.D0"]),
    ("r25_b.yaml#16", "distributed.test_process_exit_codes", ["test_nccl_errors_blocking_clean_exit",
                                                              "AssertionError: 11", "common_distributed.py:231"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_the_half_built_cpu_adam_is_shown_with_the_failed_build():
    # the AttributeError DeepSpeedCPUAdam's __del__ raises after its op failed to build is one failure with that build
    diagnosis = explain_paste(corpus_message("r24_a.yaml#12"))
    parts = diagnosis.facts.get("printed_with", [])
    assert [p["rule"] for p in parts] == ["other.deepspeed_cpu_op_not_built"], parts
    assert "ds_opt_adam" in parts[0]["summary"]


@pytest.mark.parametrize("text, rule, values", [
    # peft >= 0.6 names the value (huggingface/peft#1361)
    ("NotImplementedError: Requested bias: None, is not implemented.", "other.peft_lora_bias_not_implemented",
     ["bias=None"]),
    # Ray's re-raise of a Train worker's error, and Ray < 1.0's spelling of the remote call (ray-project/ray#36537,
    # ray-project/tutorial#171)
    ("ray.exceptions.RayTaskError(AttributeError): ray::_Inner.train() (pid=2876, ip=10.0.2.31, "
     "actor_id=e7d8e3dbf3bf04375da73b4a02000000, repr=TransformersTrainer)", "other.ray_task_error",
     ["AttributeError", "ray::_Inner.train()", "pid=2876"]),
    ("ray.exceptions.RayTaskError(TuneError): ray_WrappedTrackFunc:train() (pid=1561, ip=172.28.0.2)",
     "other.ray_task_error", ["TuneError", "ray_WrappedTrackFunc:train()"]),
    # LAVIS's registry lookup in a script (amazon-science/mm-cot#64)
    ('File "/home/hiccup/Desktop/mm-cot-main/extract_caption.py", line 10, in <module>\n'
     '    model, vis_processors, _ = load_model_and_preprocess(name="blip2_vicuna_instruct", model_type="vicuna7b", '
     'is_eval=True, device=device)\n'
     '  File "/home/hiccup/app/miniconda/lib/python3.9/site-packages/lavis/models/__init__.py", line 195, in '
     'load_model_and_preprocess\n    model = model_cls.from_pretrained(model_type=model_type)\n'
     "AttributeError: 'NoneType' object has no attribute 'from_pretrained'", "other.lavis_model_not_registered",
     ["blip2_vicuna_instruct", "vicuna7b"]),
    # ColossalAI 0.2.x adds the exception (hpcaitech/ColossalAI#2642)
    ("Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 --rdzv_backend=c10d "
     "--rdzv_endpoint=127.0.0.1:29500 --rdzv_id=colossalai-default-job seq2seq_colossalai_PromptCLUE_Finetuning.py "
     "--config config.py --optimizer lamb on 127.0.0.1, is localhost: True, exception: Encountered a bad command exit "
     "code!", "distributed.colossalai_run_failed",
     ["seq2seq_colossalai_PromptCLUE_Finetuning.py", "Encountered a bad command exit code!"]),
    # another sampler node's dialog, and the whole traceback of ComfyUI-Advanced-ControlNet (Chan-0312/ComfyUI-IPAnimate#7,
    # Comfy-Org/ComfyUI#5167)
    ('Error occurred when executing KSampler //Inspire:\n\n0\n\nFile "C:\\Users\\luna\\Documents\\'
     'ComfyUI_windows_portable\\ComfyUI\\execution.py", line 151, in recursive_execute\n'
     "output_data, output_ui = get_output_data(obj, input_data_all)", "other.comfyui_sampler_key_zero",
     ["KSampler //Inspire"]),
    ('  File "F:\\ComfyUI_windows_portable\\ComfyUI\\custom_nodes\\ComfyUI-Advanced-ControlNet\\adv_control\\utils.py", '
     'line 824, in control_merge_inject\n    x = control_output[i]\n        ~~~~~~~~~~~~~~^^^\nKeyError: 0',
     "other.comfyui_sampler_key_zero", ["control_merge_inject", "utils.py:824"]),
    # SGLang's newer warmup, in a Chinese locale (sgl-project/sglang#16855)
    ("[2026-01-10 13:23:27] Initialization failed. warmup error: Traceback (most recent call last):\n"
     '  File "/data/home/zhizhehui/dev/app/minconda/envs/SGLang/lib/python3.11/site-packages/sglang/srt/entrypoints/'
     'http_server.py", line 1434, in _execute_server_warmup\n'
     '    assert res.status_code == 200, f"{res=}, {res.text=}"\n           ^^^^^^^^^^^^^^^^^^^^^^\n'
     "AssertionError: res=<Response [502]>, res.text=''\n\n已杀死", "other.sglang_warmup_http_status",
     ["<Response [502]>", "已杀死", "_execute_server_warmup"]),
    # the bare KeyError of an older AllenNLP (allenai/allennlp#300)
    ('Traceback (most recent call last):\n  File "/Users/michaels/hack/allenai/allennlp/allennlp/common/params.py", '
     "line 78, in pop\n    value = self.params.pop(key)\nKeyError: 'optimizer'", "other.allennlp_configuration_error",
     ['Params.pop("optimizer")', "params.py:78"]),
    # k2's error in an issue title (k2-fsa/k2#1214)
    ("y = k2.RaggedTensor(y).to(device) RuntimeError: Some bad things happened. Please read the above error messages "
     "and stack", "other.k2_check_failed", ["[F]"]),
    # the harness's later wording (pytorch/pytorch#48500)
    ("Nov 26 23:08:31 AssertionError: False is not true : Expected zero exit code but got -11",
     "distributed.test_process_exit_codes", ["-11", "signal 11"]),
    # the other rank's side of TorchDistributedTrial's check (optuna 3.1's pytorch_distributed.py)
    ("Non-rank 0 node is supposed to recieve None as the trial argument.", "distributed.optuna_distributed_trial_argument",
     ["must pass None"]),
    # the widened rules' other wordings: the torchvision pair (deforum/deforum-stable-diffusion#348), the xformers
    # wheel whose torch differs but whose Python is the same (facebookresearch/xformers#874), a Weibull's parameters
    # (JosephKJ/OWOD#114) and another MONAI transform (Project-MONAI/tutorials#844)
    ("RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. PyTorch has "
     "CUDA Version=12.1 and torchvision has CUDA Version=11.8. Please reinstall the torchvision that matches your "
     "PyTorch install.", "other.domain_library_cuda_mismatch", ["CUDA Version=12.1", "CUDA Version=11.8"]),
    ("```\nWARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
     "    PyTorch 2.0.1 (you have 2.1.0+cu121)\n    Python  3.11.5 (you have 3.11.5)\n"
     "  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)\n"
     "  Memory-efficient attention, SwiGLU, sparse and more won't be available.\n"
     "  Set XFORMERS_MORE_DETAILS=1 for more details\n```", "other.xformers_build_mismatch", ["Python 3.11.5"]),
    ("ValueError: Expected value argument (Tensor of shape (100,)) to be within the support "
     "(GreaterThan(lower_bound=0.0)) of the distribution Weibull(scale: 3.6472277641296387, concentration: "
     "2.517430067062378), but found invalid values:\ntensor([-5.6482, -5.6381, -5.6280, -5.6179, -5.6078, -5.5977, "
     "-5.5876, -5.5775,", "numerics.distribution_value_support",
     ["Weibull(scale: 3.6472277641296387, concentration: 2.517430067062378)"]),
    ("RuntimeError: applying transform <monai.transforms.croppad.dictionary.SpatialPadd object at 0x7f2c3619d790>",
     "data.monai_applying_transform", ["<monai.transforms.croppad.dictionary.SpatialPadd object at 0x7f2c3619d790>"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # another click program's unknown command (returntocorp/bento#75)
    ('Usage: bento [OPTIONS] COMMAND [ARGS]...\nTry "bento --help" for help.\n\n\nError: No such command "help\u201d.',
     "other.torchtune_cli_shadowed"),
    # TorchDistributedTrial's broadcast over NCCL, a device problem (optuna/optuna-examples#101)
    ("RuntimeError: Tensors must be CUDA and dense", "distributed.optuna_distributed_trial_argument"),
    # another ComfyUI sampler's message of its own (LucianoCirino/efficiency-nodes-comfyui#243)
    ("Error occurred when executing KSampler (Efficient):\n\n'sigmas'", "other.comfyui_sampler_key_zero"),
    # one rank's own NCCL error in such a test (pytorch/pytorch#32505)
    ("Jan 22 20:25:11 RuntimeError: NCCL error: unhandled system error, NCCL version 2.4.8",
     "distributed.test_process_exit_codes"),
    # the shell's Killed after loading a model, no warmup before it (chatchat-space/Langchain-Chatchat#35)
    ("Explicitly passing a `revision` is encouraged when loading a model with custom code to ensure no malicious code "
     "has been contributed in a newer revision.\nLoading checkpoint shards:  38%|\u2588\u2588\u2588\u2588\u2588\u2588"
     "\u258a           | 3/8 [00:02<00:03,  1.28it/s]Killed", "other.sglang_warmup_http_status"),
    # a Ray actor that died, not an exception raised in it (ray-project/ray#18586)
    ("ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.", "other.ray_task_error"),
    # the bare AttributeError with no LAVIS frame (SunzeY/AlphaCLIP#15)
    ("AttributeError: 'NoneType' object has no attribute 'from_pretrained'", "other.lavis_model_not_registered"),
    # k2's fatal line alone, the process aborted (k2-fsa/k2#977)
    ("[F] /home/runner/work/k2/k2/k2/csrc/device_guard.h:66:static int32_t k2::DeviceGuard::GetDevice() Don't call me",
     "other.k2_check_failed"),
    # the worker's own error in a ColossalAI log (hpcaitech/ColossalAI#5890)
    ("RuntimeError: Stop_waiting response is expected", "distributed.colossalai_run_failed"),
    # a vocabulary KeyError of another program (ryankiros/skip-thoughts#55)
    ("    d[word_idict[i]] = ff\nKeyError: 176", "data.bark_checkpoint_model_args"),
    # ESPnet's installer log of a step that went through (espnet/espnet#5556)
    ("touch fairscale.done\n. ./activate_python.sh && ./installers/install_torch_optimizer.sh\n"
     "[INFO] torch_version=2.1.0+cu121", "other.espnet_installer_torch_changed"),
    # a KeyError of a config dict, not a TorchIO batch (allenai/allennlp#3228)
    ('Traceback (most recent call last):\n  File "/home/lyriccoder/anaconda3/lib/python3.6/site-packages/allennlp/common/'
     "params.py\", line 258, in pop\n    value = self.params.pop(key)\nKeyError: 'optimizer'",
     "data.torchio_batch_data_missing"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_the_failed_test_of_a_shared_memory_error_is_named():
    # pytest's summary under a build log's prefix: the test that ran out of shared memory (r25_b#52 also lists a test
    # that failed with a CalledProcessError, a failure of its own)
    assert_names(explain_paste(corpus_message("r25_b.yaml#52")), "memory.triton_shared_memory",
                 ["test_flash_attention.py::test_op[True-True-dtype0-2-4-512-128]"])
