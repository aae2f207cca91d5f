"""Round-36 wordings for other, second wave, part two (restoration and face libraries, pose and tracking code, old
torch and NumPy releases, compiled extensions, seq2seq transformers): each corpus message (verbatim from the opened
rounds) is claimed, from its text alone, by the right rule with the values it holds named; other wordings of the same
families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r36_c.yaml#39", "other.reduction_keepdim_before_torch_0_2", ["sum", "dim=int", "keepdim=bool", "(int dim)"]),
    ("r36_c.yaml#42", "other.numpy_unravel_index_dims", ["dims", "SimpleHRNet.py:184", "_predict_single"]),
    ("r36_c.yaml#49", "other.registry_object_not_found", ["CodeFormer_basicsr", "'arch'", "registry.py:71"]),
    ("r36_c.yaml#55", "other.extension_deprecated_type_dispatch",
     ["const at::DeprecatedTypeProperties", "c10::ScalarType"]),
    ("r36_c.yaml#57", "other.seq2seq_decoder_inputs_missing", ["decoder_input_ids", "decoder_inputs_embeds"]),
    ("r36_c.yaml#66", "other.opencv_findcontours_unpack", ["test.py:285", "cv2.findContours", "expected 3", "got 2"]),
    ("r36_c.yaml#67", "other.torchvision_functional_tensor_deprecated",
     ["torchvision.transforms.functional_tensor", "torchvision.transforms.v2.functional"]),
    ("r36_c.yaml#83", "other.facenet_mtcnn_no_face", ["mtcnn.py:408", "select_boxes", "len(boxes)"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # fvcore's registry in a detectron2 project (AdelaiDet#186), BasicSR's in HAT (#87)
    ("KeyError: \"No object named 'BlendMask' found in 'META_ARCH' registry!\"", "other.registry_object_not_found",
     ["BlendMask", "'META_ARCH'"]),
    ("KeyError: \"No object named 'HAT' found in 'arch' registry!\"", "other.registry_object_not_found", ["HAT"]),
    # nvcc's wording without backticks (SLAM3R#45), gcc's with typographic quotes (SMILe-FSOD#3)
    ('error: no suitable conversion function from "const at::DeprecatedTypeProperties" to "c10::ScalarType" exists',
     "other.extension_deprecated_type_dispatch", ["const at::DeprecatedTypeProperties", "c10::ScalarType"]),
    ("error: cannot convert \u2018const at::DeprecatedTypeProperties\u2019 to \u2018c10::ScalarType\u2019",
     "other.extension_deprecated_type_dispatch", ["const at::DeprecatedTypeProperties", "c10::ScalarType"]),
    # older seq2seq code's name for the decoder ids (t5-pegasus-pytorch#17)
    ("ValueError: You have to specify either decoder_inputs or decoder_inputs_embeds",
     "other.seq2seq_decoder_inputs_missing", ["decoder_inputs", "decoder_inputs_embeds"]),
    # a script's own frame (image.title#10), IPython's arrow (learnopencv#328), Python 2's wording (ContadorObjetos#3)
    ('Traceback (most recent call last):\n  File "image2article_cleaned.py", line 42, in <module>\n'
     "    (_, contours, _) = cv2.findContours(im_bw,cv2.RETR_EXTERNAL,cv2.CHAIN_APPROX_SIMPLE)\n"
     "ValueError: not enough values to unpack (expected 3, got 2)", "other.opencv_findcontours_unpack",
     ["image2article_cleaned.py:42", "expected 3", "got 2"]),
    ("---> 10     _, contours, _ = cv2.findContours(mapMask, cv2.RETR_TREE, cv2.CHAIN_APPROX_SIMPLE)\n     11 \n\n"
     "ValueError: not enough values to unpack (expected 3, got 2)", "other.opencv_findcontours_unpack",
     ["cv2.findContours", "expected 3"]),
    ("__, cnts, _ = cv2.findContours(FrameThresh.copy(), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)\n"
     "ValueError: need more than 2 values to unpack", "other.opencv_findcontours_unpack", ["cv2.findContours", "2"]),
    # the warning with torchvision's own frame (SlowFast#672)
    ("/home/liusir/miniconda3/envs/slowfast/lib/python3.10/site-packages/torchvision/transforms/functional_tensor.py:5: "
     "UserWarning: The torchvision.transforms.functional_tensor module is deprecated in 0.15 and will be **removed in "
     "0.17**. Please don't rely on it. You probably just need to use APIs in torchvision.transforms.functional or in "
     "torchvision.transforms.v2.functional.", "other.torchvision_functional_tensor_deprecated",
     ["torchvision.transforms.functional_tensor", "0.17"]),
    # the probability selection on an empty box array (DFGC_Detection#3)
    ('File "extract_video_celeb_df_v2.py", line 57, in extract_video\n    method="probability")\n'
     '  File "/usr/local/lib/python3.6/dist-packages/facenet_pytorch/models/mtcnn.py", line 436, in select_boxes\n'
     "    box = boxes[box_order][[0]]\nIndexError: index 0 is out of bounds for axis 0 with size 0",
     "other.facenet_mtcnn_no_face", ["mtcnn.py:436", "select_boxes"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # torch 0.3's list has keepdim; dim is a tuple (Gradient-Centralization#2)
    ("TypeError: mean received an invalid combination of arguments - got (keepdim=bool, dim=tuple, ), but expected one "
     "of:\n * no arguments\n * (int dim)\n * (int dim, bool keepdim)\n      didn't match because some of the arguments "
     "have invalid types: (dim=tuple, keepdim=bool, )", "other.reduction_keepdim_before_torch_0_2"),
    # OpenMMLab's registry wording (CMCDNet#3) and BasicSR registering twice (Wave-Mamba#19)
    ("KeyError: 'CMCD is not in the models registry'", "other.registry_object_not_found"),
    ("AssertionError: An object named 'WaveMamba' was already registered in 'arch' registry!",
     "other.registry_object_not_found"),
    # the encoder's input missing (transformers#10646), both decoder inputs given (transformers#39542)
    ("ValueError: You have to specify either input_ids or inputs_embeds", "other.seq2seq_decoder_inputs_missing"),
    ("ValueError: You cannot specify both decoder_input_ids and decoder_inputs_embeds at the same time",
     "other.seq2seq_decoder_inputs_missing"),
    # the same unpack error of another call (Signature-Verification#6)
    ("---> 27         aspect_ratio, bounding_rect_area, convex_hull_area, contours_area =             "
     "get_contour_features(preprocessed_image.copy(), display=False)\n     28 \n"
     "ValueError: not enough values to unpack (expected 3, got 2)", "other.opencv_findcontours_unpack"),
    # the import error after the removal (BasicSR#533): torchvision_module_version's
    ("ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'",
     "other.torchvision_functional_tensor_deprecated"),
    # a mixed batch under NumPy 1.24+ (facenet-pytorch#224)
    ('> venv/lib/python3.12/site-packages/facenet_pytorch/models/mtcnn.py", line 444, in select_boxes\n'
     ">     selected_boxes = np.array(selected_boxes)\n>                      ^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "> ValueError: setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 "
     "dimensions. The detected shape was (316,) + inhomogeneous part.", "other.facenet_mtcnn_no_face"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
