"""Round-34 wordings of `other`, part B (3D vision and PyTorch's own trackers): MinkowskiEngine's assertions and its
coordinate hash map, PyTorch3D's bin overflow, Open3D-ML's crashing torch version check, torchvision built without
an image codec or with its image extension missing, TorchServe workers killed by a handler's argparse,
HfArgumentParser's leftover arguments and the copy-construct warning. Each corpus message (verbatim from the opened
rounds) is claimed, from its text alone, by the right rule with its values named; other wordings from the threads
cited are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r34_a.yaml#13", "other.minkowski_engine_assertion",
     ["src/coords_kernelmaps.hpp:50", "1681692777", "592599417076398501", "existsCoordsKey(in_coords_key)"]),
    ("r34_a.yaml#14", "other.minkowski_engine_assertion", ["robin_hood::map overflow", "MinkowskiConvolution.py:170"]),
    ("r34_a.yaml#15", "other.minkowski_engine_assertion", ["convolution_gpu.cu:85", "in_feat size 0", "5296"]),
    ("r34_a.yaml#42", "other.open3d_ml_torch_unavailable",
     ["open3d/ml/torch/__init__.py:38", "sequence item 0"]),
    ("r34_a.yaml#48", "other.pytorch3d_bin_overflow", ["max_faces_per_bin", "max_points_per_bin", "bin_size"]),
    ("r34_a.yaml#49", "other.pytorch3d_bin_overflow", ["max_faces_per_bin", "bin_size"]),
    ("r34_b.yaml#15", "other.torchvision_image_codec_missing",
     ["decodeJPEG", "libjpeg", "torch.ops.image.decode_jpeg"]),
    ("r34_b.yaml#16", "other.torchvision_ops_missing", ["image::decode_jpeg", "serializers.py:111"]),
    ("r34_b.yaml#19", "other.torchserve_handler_argparse",
     ["--sock-type unix", "mymodel1", "WorkerThread.java:188"]),
    ("r34_b.yaml#61", "other.tensor_copy_construct_warning",
     ["torch.tensor(value, device=device, dtype=torch.float)", "sourceTensor.clone().detach()"]),
    ("r34_c.yaml#27", "other.hf_argparser_unused_args", ["--save_safetensors"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # MinkowskiEngine 0.4's other assertions: a missing coordinate key (MinkowskiEngine#214), a missing kernel map in
    # backward (MinkowskiEngine#251)
    ("*** RuntimeError: src/coordsmap.cpp:661, assertion (iter_out != out_coords_map.end()) faild. Key not found:  "
     "[0, 2672, 2048, 2544] : (line8)", "other.minkowski_engine_assertion",
     ["src/coordsmap.cpp:661", "Key not found", "coordinate manager"]),
    ("RuntimeError: src/convolution.cpp:144, assertion (p_coords_manager->d_in_maps.find(map_key) != "
     "p_coords_manager->d_in_maps.end()) faild. The in-out map doesn't exist for backward.",
     "other.minkowski_engine_assertion", ["src/convolution.cpp:144", "The in-out map doesn't exist for backward"]),
    # PyTorch3D's warning with a prefix of the project that printed it (bg-triangle#1)
    ("Error:Bin size was too small in the coarse rasterization phase. This caused an overflow, meaning output may be "
     "incomplete. To solve, try increasing max_faces_per_bin / max_points_per_bin, decreasing bin_size, or setting "
     "bin_size to 0 to use the naive rasterization.", "other.pytorch3d_bin_overflow", ["`bin_size=0`"]),
    # Open3D 0.16 on arm64 (https://github.com/isl-org/Open3D-ML/issues/588)
    ('Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
     '  File "/root/anaconda3/envs/open3d/lib/python3.8/site-packages/open3d/ml/torch/__init__.py", line 38, in <module>\n'
     "    match_torch_ver = '.'.join(_o3d_torch_version.release[:2] + ('*',))\n"
     "TypeError: sequence item 0: expected str instance, int found", "other.open3d_ml_torch_unavailable",
     ["open3d/ml/torch/__init__.py:38"]),
    # torchvision's GPU decoder built without nvJPEG (jetson-containers#446)
    ('  File "/usr/local/lib/python3.8/dist-packages/torchvision/io/image.py", line 168, in decode_jpeg\n'
     "    output = torch.ops.image.decode_jpeg_cuda(input, mode.value, device)\n"
     '  File "/usr/local/lib/python3.8/dist-packages/torch/_ops.py", line 502, in __call__\n'
     "    return self._op(*args, **kwargs or {})\n"
     "RuntimeError: decode_jpeg_cuda: torchvision not compiled with nvJPEG support",
     "other.torchvision_image_codec_missing", ["decode_jpeg_cuda", "nvJPEG"]),
    # the TorchServe worker's line alone (serve#3299)
    ("model_service_worker.py: error: unrecognized arguments: --sock-type unix --sock-name /tmp/.ts.sock.9000",
     "other.torchserve_handler_argparse", ["--sock-name /tmp/.ts.sock.9000", "argparse"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # another server's own command line refused (mxnet-serving#2): not a TorchServe worker
    ("mxnet-model-server: error: unrecognized arguments: --service mxnet_vision_service.py --port=8080",
     "other.torchserve_handler_argparse"),
    # the same TypeError from another project's own join (diffConvNet#6 has Open3D's, this is the bare line)
    ("TypeError: sequence item 0: expected str instance, int found", "other.open3d_ml_torch_unavailable"),
    # torchvision's image extension not loaded at all: the operator is missing, not built without a codec
    ("AttributeError: '_OpNamespace' 'image' object has no attribute 'read_file'", "other.torchvision_image_codec_missing"),
    # torch's profiler assert: an INTERNAL ASSERT, not MinkowskiEngine's ASSERT
    ('RuntimeError: stack.size() INTERNAL ASSERT FAILED at\n"/opt/conda/conda-bld/pytorch_1682343967769/work/torch/'
     'csrc/autograd/profiler_python.cpp":963,\nplease report a bug to PyTorch. Python replay stack is empty',
     "other.minkowski_engine_assertion"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)
