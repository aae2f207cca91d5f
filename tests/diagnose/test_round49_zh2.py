"""Round-49 wordings from threads written in Chinese or Japanese, part 2 (a tqdm bar's loss=nan, a checkpoint loader's
bare path assert, kohya sd-scripts' text-encoder unpacking, mmdeploy's child-process report, an ONNX export value,
torchaudio's FFmpeg extension, FunASR's registry, a converted shard, CosyVoice's model yaml): each corpus message
(verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named the
way the coverage judge reads them; other wordings of the same families (from the threads cited) are claimed too, and
near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r49_c.yaml#43", "numerics.loss_nan_log", ["loss=nan", "92679"]),
    ("r49_c.yaml#45", "data.checkpoint_path_assert", ['utils.py", line 66', "checkpoint_path", 'webui.py", line 380']),
    ("r49_c.yaml#47", "other.kohya_text_conds_unpack", ['sdxl_train_network.py", line 160', "3", "1"]),
    ("r49_c.yaml#48", "other.kohya_text_conds_unpack", ['strategy_sd3.py", line 70', "3", "2"]),
    ("r49_c.yaml#49", "compile.mmdeploy_call_failed", ["torch2onnx", "pipeline_manager.py", "nms.py:258"]),
    ("r49_c.yaml#51", "compile.onnx_unsupported_use", ["Unfold", "onnx::Pad", "381"]),
    ("r49_c.yaml#59", "other.torchaudio_ffmpeg_not_found", ["FFmpeg", "['6', '5', '4', '']"]),
    ("r49_c.yaml#61", "other.funasr_model_not_registered", ["FunASRNano", "model"]),
    ("r49_c.yaml#63", "data.hf_checkpoint_unreadable", ["pytorch_model-00000-of-00041.bin", "from_tf=True"]),
    ("r49_c.yaml#75", "data.cosyvoice_model_yaml_missing", ["cosyvoice.yaml", 'cosyvoice.py", line 144']),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # the progress bar's count is the step the loss became nan at
    assert_names(explain_paste(corpus_message("r49_c.yaml#43")), "numerics.loss_nan_log", ["iteration 92679 of 5900000"])
    # the call that handed the path to the loader, and Bert-VITS2's config
    assert_names(explain_paste(corpus_message("r49_c.yaml#45")), "data.checkpoint_path_assert",
                 ["utils.load_checkpoint(model_path, net_g, None, skip_optimizer=True)", "infer.py:98"])
    # SD-Trainer's own script next to its vendored sd-scripts
    assert_names(explain_paste(corpus_message("r49_c.yaml#47")), "other.kohya_text_conds_unpack",
                 ["scripts\\stable\\sdxl_train_network.py", "vendor\\sd-scripts"])
    # CLIP-L, CLIP-G and T5-XXL, and the placeholder the current code passes for the cached T5-XXL
    assert_names(explain_paste(corpus_message("r49_c.yaml#48")), "other.kohya_text_conds_unpack",
                 ["T5-XXL", "text_encoders[0:2] + [None]"])
    # the exported graph reached its outputs; the Windows onnxruntime import
    assert_names(explain_paste(corpus_message("r49_c.yaml#49")), "compile.mmdeploy_call_failed",
                 ["return (%dets, %labels)", "mmdet.models.detectors.rtmdet.RTMDet", "import onnxruntime"])
    # Xinference's worker prefix
    assert_names(explain_paste(corpus_message("r49_c.yaml#59")), "other.torchaudio_ffmpeg_not_found",
                 ["0.0.0.0:45470", "FFmpeg 7"])
    # the relative remote_code path
    assert_names(explain_paste(corpus_message("r49_c.yaml#61")), "other.funasr_model_not_registered",
                 ["./model.py", "app.utils.model_loader"])
    # the model folder is CosyVoice2's, loaded by Xinference's bundled code
    assert_names(explain_paste(corpus_message("r49_c.yaml#75")), "data.cosyvoice_model_yaml_missing",
                 ["CosyVoice2-0.5B", "cosyvoice2.yaml", "cosyvoice.py:72"])


@pytest.mark.parametrize("text, rule, values", [
    # so-vits-svc's copy of VITS's load_checkpoint (innnky/so-vits-svc#151)
    ("Traceback (most recent call last):\n"
     "  File \"F:\\music\\so-vits-svc-32k\\inference_main.py\", line 19, in <module>\n"
     "    svc_model = Svc(model_path, config_path)\n"
     "  File \"F:\\music\\so-vits-svc-32k\\inference\\infer_tool.py\", line 166, in __init__\n"
     "    self.load_model()\n"
     "  File \"F:\\music\\so-vits-svc-32k\\inference\\infer_tool.py\", line 184, in load_model\n"
     "    _ = utils.load_checkpoint(self.net_g_path, self.net_g_ms, None)\n"
     "  File \"F:\\music\\so-vits-svc-32k\\utils.py\", line 89, in load_checkpoint\n"
     "    assert os.path.isfile(checkpoint_path)\n"
     "AssertionError",
     "data.checkpoint_path_assert", ["utils.py:89", "checkpoint_path", "so-vits-svc"]),
    # NVIDIA tacotron2's warm start (NVIDIA/tacotron2#402)
    ("`\nTraceback (most recent call last):\n  File \"train.py\", line 290, in <module>\n"
     "    args.warm_start, args.n_gpus, args.rank, args.group_name, hparams)\n"
     "  File \"train.py\", line 194, in train\n    checkpoint_path, model, hparams.ignore_layers)\n"
     "  File \"train.py\", line 85, in warm_start_model\n    assert os.path.isfile(checkpoint_path)\nAssertionError\n`",
     "data.checkpoint_path_assert", ["train.py:85", "warm_start_model"]),
    # the same sd-scripts error without Python 3.11's carets (kohya-ss/sd-scripts#1725)
    ("Traceback (most recent call last):\n"
     "  File \"D:\\pinokio\\api\\ajfluxlora\\sd-scripts-3.5\\sd3_train_network.py\", line 426, in <module>\n"
     "    trainer.train(args)\n"
     "  File \"D:\\pinokio\\api\\ajfluxlora\\sd-scripts-3.5\\train_network.py\", line 1161, in train\n"
     "    encoded_text_encoder_conds = text_encoding_strategy.encode_tokens(\n"
     "  File \"D:\\pinokio\\api\\ajfluxlora\\sd-scripts-3.5\\library\\strategy_sd3.py\", line 70, in encode_tokens\n"
     "    clip_l, clip_g, t5xxl = models\n"
     "ValueError: not enough values to unpack (expected 3, got 2)",
     "other.kohya_text_conds_unpack", ["strategy_sd3.py:70", "expected 3", "2 models"]),
    # mmdeploy 1.x's report alone (open-mmlab/mmdeploy#2361) and 0.x's assert (open-mmlab/mmdeploy#845)
    ("mmengine - ERROR - C:\\Users\\pc\\Desktop\\thq\\MMDeploy\\mmdeploy\\apis\\core\\pipeline_manager.py - pop_mp_output "
     "- 80 - `mmdeploy.apis.pytorch2onnx.torch2onnx` with Call id: 0 failed. exit.",
     "compile.mmdeploy_call_failed", ["torch2onnx", "pipeline_manager.py", "line 80"]),
    ("    ret = self.get_caller(func_name).pop_mp_output(call_id)\n"
     "  File \"D:\\Anaconda3\\envs\\mmdeploy\\lib\\site-packages\\mmdeploy\\apis\\core\\pipeline_manager.py\", line 79, "
     "in pop_mp_output\n    assert call_id in self._mp_dict, \\\n"
     "AssertionError: `mmdeploy.apis.pytorch2onnx.torch2onnx` with Call id: 0 failed.",
     "compile.mmdeploy_call_failed", ["torch2onnx", "Call id 0"]),
    # torio's message with no Xinference prefix, FFmpeg 7.1 installed (livepeer/comfystream#44)
    ("> ImportError: Failed to intialize FFmpeg extension. Tried versions: ['6', '5', '4', '']. Enable DEBUG logging to "
     "see more details about the error.",
     "other.torchaudio_ffmpeg_not_found", ["['6', '5', '4', '']", "FFmpeg 7"]),
    # FunASR's assert in a plain traceback (modelscope/FunASR#2754)
    ("Traceback (most recent call last):\n"
     "  File \"/home/qf/lyn/asr_benchmark/./models/funasr_nano.py\", line 22, in <module>\n"
     "    model = AutoModel(\n"
     "  File \"/home/qf/.conda/envs/asr_benchmark/lib/python3.10/site-packages/funasr/auto/auto_model.py\", line 125, "
     "in __init__\n    model, kwargs = self.build_model(**kwargs)\n"
     "  File \"/home/qf/.conda/envs/asr_benchmark/lib/python3.10/site-packages/funasr/auto/auto_model.py\", line 264, "
     "in build_model\n    assert model_class is not None, f'{kwargs[\"model\"]} is not registered'\n"
     "AssertionError: FunASRNano is not registered",
     "other.funasr_model_not_registered", ["FunASRNano", "auto_model.py:264", "install FunASR from source"]),
    # CosyVoice2 class of an older checkout on a new download (KevinLeung611/CosyVoice2#1)
    ("Traceback (most recent call last):\n"
     "  File \"/Users/xx/Demo/CosyVoice/CosyVoice2/webui.py\", line 166, in <module>\n"
     "    cosyvoice = CosyVoice2('pretrained_models/CosyVoice2-0.5B')\n"
     "                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "  File \"/Users/xx/Demo/CosyVoice/CosyVoice2/cosyvoice/cli/cosyvoice.py\", line 135, in __init__\n"
     "    with open('{}/cosyvoice.yaml'.format(model_dir), 'r') as f:\n"
     "         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "FileNotFoundError: [Errno 2] No such file or directory: 'pretrained_models/CosyVoice2-0.5B/cosyvoice.yaml'",
     "data.cosyvoice_model_yaml_missing", ["cosyvoice.py:135", "cosyvoice.yaml", "CosyVoice2-0.5B"]),
    # the current loader's own check, on a CosyVoice 3 folder (QwenAudio/CosyVoice#1689)
    ("  File \"/media/data/hys/CosyVoice-v3/runtime/python/grpc/../../../cosyvoice/cli/cosyvoice.py\", line 36, in "
     "__init__\n    raise ValueError('{} not found!'.format(hyper_yaml_path))\n"
     "ValueError: ../../../pretrained_models/CosyVoice3-0.5B/cosyvoice.yaml not found!",
     "data.cosyvoice_model_yaml_missing", ["CosyVoice3-0.5B", "cosyvoice3.yaml"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a path check with a message of its own, which names the path (cypw/PyTorch-MFNet#2)
    ("File \"evaluate_video_ucf101_split1.py\", line 107, in <module>\n    net.load_checkpoint(epoch=args.load_epoch)\n"
     "  File \"../train/model.py\", line 62, in load_checkpoint\n"
     "    assert os.path.exists(load_path), \"Failed to load: {} (file not exist)\".format(load_path)\n"
     "AssertionError: Failed to load: ./../exps/<your_tesk_name>_ep-0000.pth (file not exist)",
     "data.checkpoint_path_assert"),
    # the web UI's Lora extension splitting a key: an unpacking error outside sd-scripts
    # (AUTOMATIC1111/stable-diffusion-webui#13354)
    ("Traceback (most recent call last):\n"
     "  File \"C:\\Users\\dmesg\\diffusion\\automatic1111\\webui\\extensions-builtin\\Lora\\networks.py\", line 155, in "
     "load_network\n    key_network_without_network_parts, network_part = key_network.split(\".\", 1)\n"
     "ValueError: not enough values to unpack (expected 2, got 1)",
     "other.kohya_text_conds_unpack"),
    # Fun-ASR's example importing its model code as a top-level module (QwenAudio/Fun-ASR#95): an import error
    ("Traceback (most recent call last):\n"
     "  File \"/mnt/workspace/AudioPipeline/es_pipeline/test_funasr_nano.py\", line 1, in <module>\n"
     "    from model import FunASRNano\nModuleNotFoundError: No module named 'model'",
     "other.funasr_model_not_registered"),
    # GLM-4-Voice's decoder folder never downloaded (zai-org/GLM-4-Voice#18): not CosyVoice's yaml name
    ("  File \"/root/GLM-4-Voice/flow_inference.py\", line 23, in __init__\n    with open(config_path, 'r') as f:\n"
     "FileNotFoundError: [Errno 2] No such file or directory: './glm-4-voice-decoder/config.yaml'",
     "data.cosyvoice_model_yaml_missing"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
