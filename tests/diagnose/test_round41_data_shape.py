"""Round-41 wordings for data and shape (model inputs, tokenizers, datasets, workers): each corpus message (verbatim
from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named; other
wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r41_a.yaml#21", "data.autotrain_column_missing", ["autotrain_prompt", "train_vlm_generic.py:13",
                                                        "prompt_text_column"]),
    ("r41_a.yaml#51", "shape.vlm_image_tokens_mismatch", ["image tokens is 0", "model is 2"]),
    ("r41_a.yaml#56", "data.vlm_image_smaller_than_patch_factor", ["height:16", "factor:28", "glm4v"]),
    ("r41_a.yaml#64", "shape.clip_tokenize_too_long", ["context length 77", "clip.py:260", "truncate=True"]),
    ("r41_a.yaml#66", "shape.tokenizer_max_length", ["400", "up to 77 tokens", "CLIP"]),
    ("r41_a.yaml#70", "shape.vlm_image_tokens_mismatch", ["256", "2048", "torch.Size([256, 896])",
                                                          "torch.Size([2048, 896])", "max_seq_length"]),
    ("r41_a.yaml#90", "data.webdataset_missing_keys", ["['jpg', 'png']", "worker process 7"]),
    ("r41_b.yaml#2", "data.worker_unpickle_new_args", ["_ForkingPickler.loads", "__new__()", "'maxx'",
                                                       "worker.py:260", "__getnewargs__"]),
    ("r41_b.yaml#11", "shape.kornia_ransac_keypoints_shape", ["kp1", "Nx2", "torch.Size([314, 2, 2])",
                                                              "line segments"]),
    ("r41_b.yaml#13", "shape.einsum_operands", ["abcd,fghi,bf,eg,ch,di->aecd", "(32, 32, 9, 9)", "names 6 operands",
                                                "5 were passed"]),
    ("r41_b.yaml#19", "dtype.to_pil_image_dtype", ["uint16", "to_pil_image"]),
    ("r41_b.yaml#21", "data.legacy_state_dict_copy_mismatch", ["conv1.0.weight", "torch.Size([32, 6, 3, 3])",
                                                               "torch.Size([32, 8, 3, 3])", "input channels"]),
    ("r41_b.yaml#25", "data.libshm_interrupted_system_call", ["libshm/core.cpp:99", "rebuild_storage_filename",
                                                              "_shutdown_workers", "EINTR"]),
    ("r41_b.yaml#30", "data.torchgeo_query_not_found", ["949825.5421264209", "957522.953588916",
                                                        "949998.3973081404", "past the dataset's x end"]),
    ("r41_b.yaml#47", "shape.permute_dims", ["permute(sparse_coo)", "input.dim() = 4", "len(dims) = 3"]),
    ("r41_b.yaml#49", "shape.legacy_expected_matrix", ["torch.tril", "diagonal=-1", "THCTensorMathPairwise.cu:174",
                                                       "torch 1.1"]),
    ("r41_c.yaml#84", "data.tensor_list_non_tensor", ["NoneType", "element 0", "worker_function"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # LLaVA's legacy check with the placeholders expanded by a newer processor (hiyouga/LlamaFactory#5344), and the
    # title of magic-research/PLLaVA#32 (a tokenizer whose <image> id is not the config's)
    (" File \"/root/miniconda3/lib/python3.10/site-packages/transformers/models/llava/modeling_llava.py\", line 339, in "
     "_merge_input_ids_with_image_features\n    raise ValueError(\nValueError: The input provided to the model are "
     "wrong. The number of image tokens is 576 while the number of image given to the model is 1. This prevents "
     "correct indexing and breaks batch generation.", "shape.vlm_image_tokens_mismatch",
     ["image tokens is 576", "model is 1", "different transformers versions"]),
    ("ValueError: The input provided to the model are wrong. The number of image tokens is 0 while the number of image "
     "given to the model is 1. This prevents correct indexing and breaks batch generation.",
     "shape.vlm_image_tokens_mismatch", ["image tokens is 0", "model is 1", "image_token_index"]),
    # InternVL's warning with fewer context tokens than features (OpenGVLab/InternVL#185)
    ("warning: The size of tensor a (2017) must match the size of tensor b (3328) at non-singleton dimension 0, "
     "input_embeds[selected].shape=torch.Size([2017, 2048]), vit_embeds.shape=torch.Size([3328, 2048])",
     "shape.vlm_image_tokens_mismatch", ["2017", "3328", "max_seq_length"]),
    # diffusers' truncation log after the tokenizer's warning (huggingface/diffusers#5890), on one line
    # (Tencent-Hunyuan/HunyuanVideo#154), and alone (pharmapsychotic/clip-interrogator#65)
    ("Token indices sequence length is longer than the specified maximum sequence length for this model (82 > 77). "
     "Running this sequence through the model will result in indexing errors\nThe following part of your input was "
     "truncated because CLIP can only handle sequences up to 77 tokens: ['cartilaginous support']",
     "shape.tokenizer_max_length", ["82", "up to 77 tokens"]),
    ("Token indices sequence length is longer than the specified maximum sequence length for this model (123 > 77). "
     "Running this sequence through the model will result in indexing errors. The following part of your input was "
     "truncated because CLIP can only handle sequences up to 77 tokens: ", "shape.tokenizer_max_length",
     ["123", "up to 77 tokens"]),
    ("The following part of your input was truncated because CLIP can only handle sequences up to 77 tokens: "
     "['of people']", "shape.tokenizer_max_length", ["up to 77 tokens", "Nothing fails"]),
    # openai/CLIP#212's title: the text itself left out
    ("RuntimeError: Input is too long for context length 77", "shape.clip_tokenize_too_long",
     ["context length 77", "truncate=True"]),
    # to_pil_image's refusal of a float64 array (kohakus/KITTI-TorchLoader#2) and of a ComfyUI IMAGE's float32 array,
    # in ComfyUI's error report (SeanScripts/ComfyUI-PixtralLlamaMolmoVision#14)
    ("raise TypeError(f\"Input type {npimg.dtype} is not supported\")\nTypeError: Input type float64 is not supported",
     "dtype.to_pil_image_dtype", ["float64", "uint8"]),
    ("## Error Details\n- **Node Type:** PixtralGenerateText\n- **Exception Type:** TypeError\n- **Exception Message:** "
     "Input type float32 is not supported", "dtype.to_pil_image_dtype", ["float32", "ComfyUI IMAGE"]),
    # libshm's EINTR in another user's shutdown (pytorch/pytorch#14343)
    ("Exception ignored in: <bound method _DataLoaderIter.__del__ of <torch.utils.data.dataloader._DataLoaderIter "
     "object at 0x114accb70>>\nTraceback (most recent call last):\n  File \"/Users/powerz/anaconda3/lib/python3.6/"
     "site-packages/torch/utils/data/dataloader.py\", line 399, in __del__\n    self._shutdown_workers()\n  File "
     "\"/Users/powerz/anaconda3/lib/python3.6/site-packages/torch/utils/data/dataloader.py\", line 378, in "
     "_shutdown_workers\n    self.worker_result_queue.get()\n  File \"/Users/powerz/anaconda3/lib/python3.6/"
     "multiprocessing/queues.py\", line 337, in get\n    return _ForkingPickler.loads(res)\n  File \"/Users/powerz/"
     "anaconda3/lib/python3.6/site-packages/torch/multiprocessing/reductions.py\", line 167, in "
     "rebuild_storage_filename\n    storage = cls._new_shared_filename(manager, handle, size)\nRuntimeError: "
     "Interrupted system call at /Users/soumith/miniconda2/conda-bld/pytorch_1532623076075/work/torch/lib/libshm/"
     "core.cpp:99", "data.libshm_interrupted_system_call", ["libshm/core.cpp:99", "_shutdown_workers"]),
    # torchgeo's older wording, a query in another CRS (torchgeo/torchgeo#2028)
    ("IndexError: query: BoundingBox(minx=-3351139.6764310533, maxx=-3335779.6764310533, miny=4378501.30259927, "
     "maxy=4393861.30259927, mint=0.0, maxt=9.223372036854776e+18) not found in index with bounds: "
     "BoundingBox(minx=657285.0, maxx=888015.0, miny=3558885.0, maxy=3789615.0, mint=0.0, maxt=9.223372036854776e+18)",
     "data.torchgeo_query_not_found", ["-3351139.6764310533", "657285.0", "entirely outside", "CRS"]),
    # TH's CPU check on an empty matrix (pytorch/pytorch#15016)
    (">>> torch.ones(0, 3).tril(0)\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n"
     "RuntimeError: invalid argument 1: expected a matrix at ../aten/src/TH/generic/THTensorMoreMath.cpp:1255",
     "shape.legacy_expected_matrix", ["THTensorMoreMath.cpp:1255", "size 0"]),
    # "The number of dimensions" in some releases' permute (OpenGVLab/CaFo#11)
    ("RuntimeError: permute(sparse_coo): The number of dimensions in the tensor input does not match the length of the "
     "desired ordering of dimensions i.e. input.dim() = 4 is not equal to len(dims) = 2", "shape.permute_dims",
     ["input.dim() = 4", "len(dims) = 2"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # the same unpickling failure outside any DataLoader (grantjenks/python-diskcache#267)
    ("Traceback (most recent call last):\n  File \"/flashprofits/flashprofits/debug_helpers.py\", line 165, in "
     "make_transaction_traceable\n    cached_tx = disk_cache.get(cache_key)\n  File \"/venv/lib/python3.9/site-packages/"
     "diskcache/core.py\", line 1173, in get\n    value = self._disk.fetch(mode, filename, db_value, read)\n  File "
     "\"/venv/lib/python3.9/site-packages/diskcache/core.py\", line 283, in fetch\n    return pickle.load(reader)\n"
     "TypeError: __new__() missing 1 required positional argument: 'type_str'", "data.worker_unpickle_new_args"),
    # ollama's Go port of smart_resize panicking (ollama/ollama#11297): not a Python program
    ("panic: height:27 or width:257 must be larger than factor:28", "data.vlm_image_smaller_than_patch_factor"),
    # a user's own column missing from AutoTrain's data, not a reserved autotrain_* name (huggingface/autotrain-advanced#226)
    ("KeyError: 'text'", "data.autotrain_column_missing"),
    # Python 2's own EINTR, no libshm in it (pytorch/pytorch#7364)
    ("IOError: [Errno 4] Interrupted system call", "data.libshm_interrupted_system_call"),
    # another "is not supported" of torch's (lllyasviel/Fooocus#970)
    ("Device type privateuseone is not supported for torch.Generator() api.", "dtype.to_pil_image_dtype"),
    # the legacy matmul's check (pytorch/pytorch#5388)
    ("RuntimeError: matrices expected, got 3D, 2D tensors at /pytorch/aten/src/TH/generic/THTensorMath.cpp:935",
     "shape.legacy_expected_matrix"),
    # kornia's metrics check of two shapes (kornia/kornia#454's wording): shape.kornia_same_shape's
    ("`ValueError: Inputs input and target must have the same shape. Got: torch.Size([4, 7, 256, 360])`",
     "shape.kornia_ransac_keypoints_shape"),
    # a plain broadcast error of a model's own addition stays shape.broadcast's (jeonsworld/ViT-pytorch#3)
    ("RuntimeError: The size of tensor a (5) must match the size of tensor b (197) at non-singleton dimension 1",
     "shape.vlm_image_tokens_mismatch"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
