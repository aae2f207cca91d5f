"""Round-41 wordings for other: library APIs and configs (vision-language models and their LLaVA-style code,
transformers' Auto classes and attention checks, the Hugging Face Hub, nequip and PINA configs, LightningCLI, LeRobot,
NVIDIA Warp, torch's own factory, sparse and TorchScript messages): each corpus message (verbatim from the opened
rounds) is claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same
families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r41_a.yaml#8", "other.hf_auto_class_unrecognized_config", ["Florence2LanguageConfig", "AutoModelForCausalLM"]),
    ("r41_a.yaml#71", "other.llava_vision_tower_no_image_size", ["vision_tower_image_size", "llava_arch.py, line 199"]),
    ("r41_a.yaml#76", "data.hf_token_type_ids_required", ["token_type_ids"]),
    ("r41_a.yaml#84", "data.llava_mm_projector_missing", ["mm_projector.bin"]),
    ("r41_a.yaml#85", "data.llava_mm_projector_missing", ["model.mm_projector.0.weight", "LlavaLlamaForCausalLM"]),
    ("r41_b.yaml#31", "other.full_arguments", ["full()", "(int, int, dtype=torch.dtype)", "tuple of ints size"]),
    ("r41_b.yaml#33", "other.pytorch3d_bin_overflow", ["max_faces_per_bin", "bin_size"]),
    ("r41_b.yaml#34", "other.nequip_build_failed", ["dataset", "ASEDataset"]),
    ("r41_b.yaml#35", "data.nequip_restart_config_changed", ["model_builders", "trainer.pth"]),
    ("r41_b.yaml#36", "data.nequip_too_little_data", ["n_train", "n_val", "trainer.py, line 1164"]),
    ("r41_b.yaml#42", "data.pina_points_not_sampled", ["['D']", "discretise_domain"]),
    ("r41_b.yaml#59", "other.lightning_cli_config_check_failed",
     ["datamodule", "GenericNonGeoPixelwiseRegressionDataModule", "'partition'"]),
    ("r41_b.yaml#60", "other.file_format_version_mismatch", ["inline_container.cc:222", "wb97m_gas_0/version"]),
    ("r41_b.yaml#66", "other.warp_gradient_array_incompatible", ["gradient array"]),
    ("r41_b.yaml#84", "data.hf_hub_entry_not_found", ["404", "aurora-0.25-v1.5.ckpt", "microsoft/aurora"]),
    ("r41_b.yaml#88", "other.lightning_not_lightningmodule", ["_IncompatibleKeys", "LightningModule"]),
    ("r41_c.yaml#59", "compile.torchscript_deprecated_warning", ["torch.jit.script", "base.py:65"]),
    ("r41_c.yaml#65", "other.hf_model_no_flash_attention",
     ["EuroBertModel", "Flash Attention 2", "jinaai/jina-embeddings-v5-text-nano"]),
    ("r41_c.yaml#69", "other.lerobot_policy_repo_id_missing", ["policy.repo_id", "configs/train.py, line 120"]),
    ("r41_c.yaml#86", "other.sparse_layout_unsupported", ["sparse_mask_sparse_csr", "mask", "sparse csr"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # transformers' Auto classes: a vision-language model through AutoModelForCausalLM (Visual-RFT#83), a LLaVA config
    # AutoModel did not map (HunyuanVideo#133), and the AutoTokenizer wording (spacepxl/ComfyUI-Florence-2#23)
    ("ValueError: Unrecognized configuration class <class 'transformers.models.qwen2_vl.configuration_qwen2_vl."
     "Qwen2VLConfig'> for this kind of AutoModel: AutoModelForCausalLM.",
     "other.hf_auto_class_unrecognized_config", ["Qwen2VLConfig", "AutoModelForCausalLM", "vision-language"]),
    ("ValueError: Unrecognized configuration class <class 'transformers.models.llava.configuration_llava.LlavaConfig'>"
     " for this kind of AutoModel: AutoModel.", "other.hf_auto_class_unrecognized_config", ["LlavaConfig", "AutoModel"]),
    ("Error loading model or tokenizer: Unrecognized configuration class <class 'transformers_modules.base."
     "configuration_florence2.Florence2Config'> to build an AutoTokenizer.",
     "other.hf_auto_class_unrecognized_config", ["Florence2Config", "AutoTokenizer", "4.49.0"]),
    # transformers' Flash Attention check in its other releases' wordings (transformers#43352, #28383,
    # huggingface-gemma-recipes#14: a model loaded from no hub path)
    ("Error: NemotronHForCausalLM does not support Flash Attention 2.0 yet. Please request to add support where the "
     "model is hosted, on its model hub page: https://huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16/"
     "discussions/new or in the Transformers GitHub repo: https://github.com/huggingface/transformers/issues/new",
     "other.hf_model_no_flash_attention",
     ["NemotronHForCausalLM", "Flash Attention 2.0", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"]),
    ("ValueError: QWenLMHeadModel does not support Flash Attention 2.0 yet. Please open an issue on GitHub to request "
     "support for this architecture: https://github.com/huggingface/transformers/issues/new",
     "other.hf_model_no_flash_attention", ["QWenLMHeadModel", "Flash Attention 2.0"]),
    ("ValueError: TimmWrapperModel does not support Flash Attention 2.0 yet. Please request to add support where the "
     "model is hosted, on its model hub page: https://huggingface.co//discussions/new or in the Transformers GitHub "
     "repo: https://github.com/huggingface/transformers/issues/new",
     "other.hf_model_no_flash_attention", ["TimmWrapperModel", "flash_attention_2"]),
    # LLaVA-style projectors: stage-1 files never produced (V2Xum-LLM#1, MMFM-Challenge#3), a plain LLM as the
    # checkpoint (LLaVA-Rad#25), and a projector of another type than the checkpoint's (LLaVA#550)
    ("FileNotFoundError: [Errno 2] No such file or directory: 'checkpoints/llava-vicuna-v1-5-7b-stage1/"
     "mm_projector.bin'.", "data.llava_mm_projector_missing",
     ["checkpoints/llava-vicuna-v1-5-7b-stage1/mm_projector.bin"]),
    ('  File "/opt/conda/envs/MMFM-Challenge/lib/python3.10/site-packages/torch/serialization.py", line 252, in '
     "__init__\n    super().__init__(open(name, mode))\nFileNotFoundError: [Errno 2] No such file or directory: "
     "'./lib/LLaVA/checkpoints/llava-v1.5-13b-pretrain/mm_projector.bin'", "data.llava_mm_projector_missing",
     ["./lib/LLaVA/checkpoints/llava-v1.5-13b-pretrain/mm_projector.bin"]),
    ("Some weights of LlavaLlamaForCausalLM were not initialized from the model checkpoint at "
     "/media/ubuntu/data/share/vicuna-7b-v1.5 and are newly initialized: ['model.mm_projector.0.bias', "
     "'model.mm_projector.2.bias', 'model.mm_projector.0.weight', 'model.mm_projector.2.weight']",
     "data.llava_mm_projector_missing", ["model.mm_projector.0.bias", "/media/ubuntu/data/share/vicuna-7b-v1.5"]),
    ("Some weights of the model checkpoint at /root/szd/LLaVA/ckpt/llava-7b-1.5 were not used when initializing "
     "LlavaLlamaForCausalLM: ['model.mm_projector.0.weight', 'model.mm_projector.2.weight', "
     "'model.mm_projector.0.bias', 'model.mm_projector.2.bias']\n- This IS expected if you are initializing "
     "LlavaLlamaForCausalLM from the checkpoint of a model trained on another task or with another architecture (e.g. "
     "initializing a BertForSequenceClassification model from a BertForPreTraining model).\n- This IS NOT expected if "
     "you are initializing LlavaLlamaForCausalLM from the checkpoint of a model that you expect to be exactly identical "
     "(initializing a BertForSequenceClassification model from a BertForSequenceClassification model).\nSome weights "
     "of LlavaLlamaForCausalLM were not initialized from the model checkpoint at /root/szd/LLaVA/ckpt/llava-7b-1.5 and "
     "are newly initialized: ['model.mm_projector.bias', 'model.mm_projector.weight']",
     "data.llava_mm_projector_missing", ["model.mm_projector.0.weight", "model.mm_projector.bias", "mm_projector_type"]),
    # Gemma 3's check under a distributed launcher's prefixes (NVIDIA-NeMo/Automodel#1203)
    ('[rank0]:   File "/opt/venv/lib/python3.12/site-packages/transformers/models/gemma3/modeling_gemma3.py", line '
     '780, in create_causal_mask_mapping\n[rank0]:     raise ValueError("`token_type_ids` is required as a model input '
     'when training")\n[rank0]: ValueError: `token_type_ids` is required as a model input when training',
     "data.hf_token_type_ids_required", ["token_type_ids", "modeling_gemma3.py, line 780"]),
    # nequip's wrapper quoted with and without backticks (nequip#370, nequip#410)
    ("RuntimeError: Failed to build object with prefix `dataset` using builder `NpzDataset`",
     "other.nequip_build_failed", ["dataset", "NpzDataset"]),
    ("RuntimeError Failed to build object with prefix dataset using builder NPZDataset.",
     "other.nequip_build_failed", ["dataset", "NPZDataset"]),
    # the Hub's 404 for a file: a renamed weights file (MaGGIe#5), a repository not in diffusers format
    # (huggingface.js#2119), a tree listing of the API (mokuro#149)
    ("huggingface_hub.utils._errors.EntryNotFoundError: 404 Client Error. (Request ID: Root=1-66b2f90a-5eec8e485c06b72d"
     "4108ba77;4cd4e6b7-8bd8-4568-b8a8-9efba1a4ad89)\n\nEntry Not Found for url: https://huggingface.co/chuonghm/maggie-"
     "image-him50k-cvpr24/resolve/main/pytorch_model.bin.", "data.hf_hub_entry_not_found",
     ["chuonghm/maggie-image-him50k-cvpr24", "pytorch_model.bin", "main", "404"]),
    ("RemoteEntryNotFoundError: 404 Client Error. (Request ID: Root=1-69e9d36e-4366049329e10fe37dedde86;d6ea4adb-8228-"
     "4817-8ba7-fccf5cc99212)\n\nEntry Not Found for url: https://huggingface.co/Lightricks/LTX-2.3/resolve/main/"
     "model_index.json.", "data.hf_hub_entry_not_found", ["Lightricks/LTX-2.3", "model_index.json", "diffusers"]),
    ("huggingface_hub.errors.RemoteEntryNotFoundError: 404 Client Error. (Request ID: Root=1-696f697d-5d65157645a892e7"
     "6aa49a91;1d4d2351-4c45-4f21-9a44-2b6295805f0f)\n\nEntry Not Found for url: https://huggingface.co/api/models/"
     "kha-white/manga-ocr-base/tree/main/additional_chat_templates?recursive=false&expand=false.\n"
     "additional_chat_templates does not exist on \"main\"", "data.hf_hub_entry_not_found",
     ["kha-white/manga-ocr-base", "additional_chat_templates"]),
    # the TorchScript deprecation as a collection error (lance#5762), as pytest's warning summary (torchgeo#3798), and
    # its Python 3.14 wording (heat#2453)
    ("E   DeprecationWarning: `torch.jit.script` is deprecated. Please switch to `torch.compile` or `torch.export`.\n"
     "__________ ERROR collecting python/tests/torch_tests/test_distance.py __________",
     "compile.torchscript_deprecated_warning", ["torch.jit.script", "filterwarnings"]),
    (".venv/lib/python3.12/site-packages/torch/jit/_script.py:1488: 43 warnings\n  /Users/Adam/torchgeo/.venv/lib/"
     "python3.12/site-packages/torch/jit/_script.py:1488: DeprecationWarning: `torch.jit.script` is deprecated. Please "
     "switch to `torch.compile` or `torch.export`.\n    warnings.warn(", "compile.torchscript_deprecated_warning",
     ["torch.jit.script", "A warning only"]),
    ("DeprecationWarning: `torch.jit.script` is not supported in Python 3.14+ and may break. Please switch to "
     "`torch.compile` or `torch.export`.", "compile.torchscript_deprecated_warning", ["torch.jit.script", "3.14"]),
    # LeRobot's check as other reports quote it (lerobot#1497, #1641)
    ("ValueError: 'policy.repo_id' argument missing. Please specify it to push the model to the hub.",
     "other.lerobot_policy_repo_id_missing", ["policy.repo_id"]),
    ("ValueError: 'policy.repo_id' argument missing. Please specify it to push the model to the hub",
     "other.lerobot_policy_repo_id_missing", ["policy.repo_id"]),
    # jsonargparse's older wording of an init argument the class does not take (pytorch-lightning#10859)
    ("usage: NBSS.py [-h] [--config CONFIG] [--print_config [={comments,skip_null}+]] {fit,validate,test,predict,tune}"
     " ...\nNBSS.py: error: Parser key \"model.arch\": Problem with given class_path \"models.arch.fc2_sa1.FC2_SA1\":\n"
     "  - 'Configuration check failed :: No action for destination key \"dropout\" to check its value.'",
     "other.lightning_cli_config_check_failed", ["model.arch", "models.arch.fc2_sa1.FC2_SA1", "dropout"]),
    # torch.full with a Tensor fill value under ONNX export (pyg#10327)
    ("TypeError: full() received an invalid combination of arguments - got (size=tuple, fill_value=Tensor, "
     "device=torch.device, dtype=torch.dtype, ), but expected one of:\n * (tuple of ints size, Number fill_value, *, "
     "tuple of names names, torch.dtype dtype, torch.layout layout, torch.device device, bool pin_memory, bool "
     "requires_grad)\n * (tuple of ints size, Number fill_value, *, Tensor out, torch.dtype dtype, torch.layout "
     "layout, torch.device device, bool pin_memory, bool requires_grad)", "other.full_arguments",
     ["full()", "fill_value=Tensor", ".item()"]),
    # sparse_mask's other refusal before pytorch#107777: a CSR mask with dense dimensions (pytorch#107373)
    ('Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\nRuntimeError: sparse_mask_sparse_csr '
     "expects self to be 2D", "other.sparse_layout_unsupported", ["sparse_mask_sparse_csr", "self", "2D"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # transformers' report of a head meant to be trained: a negative control of round 40 (SoulX-FlashHead#79)
    ("Some weights of Wav2Vec2Model were not initialized from the model checkpoint at models/wav2vec2-base-960h and "
     "are newly initialized: ['masked_spec_embed']", "*"),
    # a tensor record missing from a torch.load archive: a damaged file, not a newer writer (pytorch#57805)
    ("RuntimeError: [enforce fail at inline_container.cc:222] . file not found: archive/data/94308821128336",
     "other.file_format_version_mismatch"),
    # the fix of LeRobot's check spelled with Python's capital: draccus's own refusal (lerobot#1420)
    ("draccus.utils.DecodingError: `push_to_hub`: Couldn't parse 'False' into a bool",
     "other.lerobot_policy_repo_id_missing"),
    # LLaVA's builder not knowing a vision tower's name (LLaVA-NeXT#188)
    ("ValueError: Unknown vision tower: google/siglip-so400m-patch14-384", "other.llava_vision_tower_no_image_size"),
    # the Hub not reachable and nothing cached: another huggingface_hub error (MoneyPrinterTurbo#156)
    ("huggingface_hub.utils._errors.LocalEntryNotFoundError: An error happened while trying to locate the files on the "
     "Hub and we cannot find the appropriate snapshot folder for the specified revision on the local disk. Please check "
     "your internet connection and try again.", "data.hf_hub_entry_not_found"),
    # Flash Attention's dtype check, not the model class's support (transformers#28052)
    ("ValueError: Flash Attention 2.0 only supports torch.float16 and torch.bfloat16 dtypes. You passed torch.float32, "
     "this might lead to unexpected behaviour.", "other.hf_model_no_flash_attention"),
    # nequip refusing to overwrite a run: not a changed config of a restart, nor a failed builder (nequip#343)
    ("RuntimeError: Training instance exists at /path_to_traning_dir; either set append to True or use a different "
     "root or runname", "data.nequip_restart_config_changed"),
    ("RuntimeError: Training instance exists at /path_to_traning_dir; either set append to True or use a different "
     "root or runname", "other.nequip_build_failed"),
    # a key LightningCLI itself does not know, with no class_path around it (pytorch-lightning#18183)
    ("error: 'Configuration check failed :: No action for destination key \"trainer.precision\" to check its value.'",
     "other.lightning_cli_config_check_failed"),
    # a bare int where newer torch names the argument: other.argument_type's (keras#19877)
    ("TypeError: tile(): argument 'dims' must be tuple of ints, not int", "other.full_arguments"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
