"""Round-42 wordings for export and exported-model runtimes (TorchScript, ONNX export warnings, TensorRT engine builds
and loads, OpenVINO, CoreML, onnx2tf, OpenCV DNN reading exported ONNX models, Triton's LLVM lowering, Dynamo's
"Observed exception"): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right
rule with the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and
near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, corpus_message, explain_paste


CORPUS_CASES = [
    ("r42_a.yaml#3", "compile.tensorrt_build_failed",
     ["pluginV2DynamicExtRunner.cpp::execute::115", "enginePtr != nullptr", "__enter__"]),
    ("r42_a.yaml#12", "compile.openvino_frontend_failed", ["frontends/common/src/frontend.cpp:54", "Converting input model"]),
    ("r42_a.yaml#19", "compile.coreml_script_object_constant", ["__torch__.torch.classes.xnnpack.Conv2dOpContext"]),
    ("r42_a.yaml#21", "compile.opencv_dnn_onnx", ["blob.type() == 5", "populateNet", 'predict_from_onnx.py", line 28']),
    ("r42_a.yaml#22", "compile.opencv_dnn_onnx", ["getMatFromTensor", "onnx_importer.cpp:112"]),
    ("r42_a.yaml#23", "compile.opencv_dnn_onnx", ["OpenCV(4.1.1)", "getMatFromTensor"]),
    ("r42_a.yaml#24", "compile.opencv_dnn_onnx", ["shape_utils.hpp:171", "cv::dnn::dnn4_v20210608::total"]),
    ("r42_a.yaml#25", "compile.opencv_dnn_onnx", ["permute_layer.cpp:124", "inputs.size() > 0", "getMemoryShapes"]),
    ("r42_a.yaml#26", "compile.opencv_dnn_onnx", ["CV_32S", "CV_32FC1", "ONNXImporter::populateNet"]),
    ("r42_a.yaml#28", "compile.onnx2tf_conversion_failed", ["/model.10/Resize", "yolov8n.onnx"]),
    ("r42_a.yaml#29", "compile.onnx2tf_conversion_failed", ["MaxPool.py", "calc_tf_pooling_pads", "NoneType"]),
    ("r42_a.yaml#39", "compile.tensorrt_engine_version",
     ["43", "96", "create_execution_context", 'yolov5_trt.py", line 88']),
    ("r42_a.yaml#40", "compile.tensorrt_engine_version", ["239", "237", "yolo11n_640_FP16_dy-True.engine"]),
    ("r42_a.yaml#42", "compile.tensorrt_engine_corrupt", ["magicTag", "YoloS4000img.engine"]),
    ("r42_a.yaml#45", "compile.jit_load_not_torchscript",
     ["archive/constants.pkl", "inline_container.cc:222", "MobileNetV3_2.pt"]),
    ("r42_a.yaml#49", "compile.onnx_export_shape_inference_warning", ["prim::Constant", "onnx::Slice"]),
    ("r42_a.yaml#81", "compile.triton_passmanager", ["LLVMTranslationDialectInterface", "TritonGPU", "builtin.module"]),
    ("r42_b.yaml#73", "compile.jit_internal_assert", ["jit_type.h:142", "run_mod_and_filter_tensor_outputs"]),
    ("r42_b.yaml#82", "compile.graph_break", ["Observed exception", 'flex_attention.py", line 1364', "TORCHDYNAMO_VERBOSE=1"]),
    ("r42_c.yaml#88", "compile.tracer_warning", ["torch.as_tensor"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # transformers' TAPAS traced for ONNX export (pytorch#73388)
    ("/home/thiagofc/miniconda3/envs/dev1-cu113-py39/lib/python3.9/site-packages/transformers/models/tapas/modeling_tapas.py:1812: TracerWarning: torch.as_tensor results are registered as constants in the trace. You can safely ignore this warning if you use this function to create tensors out of constant variables that would be the same every time you call this function. In any other case, this might cause the trace to be incorrect.\n  torch.as_tensor([index.num_segments], dtype=torch.long),",
     "compile.tracer_warning", ["torch.as_tensor", "modeling_tapas.py:1812"]),
    # the same type-system assert in torch 1.0, from TensorBoard's add_graph (pytorch#18903)
    ("RuntimeError: r ASSERT FAILED at /pytorch/aten/src/ATen/core/jit_type.h:128, please report a bug to PyTorch. (expect at /pytorch/aten/src/ATen/core/jit_type.h:128)",
     "compile.jit_internal_assert", ["jit_type.h:128", "expect"]),
    # TensorRT 8.6's magic-tag check, no space before rt:: (NVIDIA/TensorRT#2915)
    ("ERROR: 1: [runtime.cpp::parsePlan::314] Error Code 1: Serialization (Serialization assertion plan->header.magicTag ==rt::kPLAN_MAGIC_TAG failed.)",
     "compile.tensorrt_engine_corrupt", ["kPLAN_MAGIC_TAG", "parsePlan::314"]),
    # the same check, then create_execution_context on the None engine (chequanghuy/TwinLiteNet#12)
    ("[02/27/2024-12:24:03] [TRT] [I] Loaded engine size: 2 MiB\n[02/27/2024-12:24:03] [TRT] [E] 1: [runtime.cpp::parsePlan::314] Error Code 1: Serialization (Serialization assertion plan->header.magicTag == rt::kPLAN_MAGIC_TAG failed.)\nTraceback (most recent call last):\n  File \"/home/bjku/TwinLiteNet/test_trt.py\", line 68, in <module>\n    trt=TRT('best.engine')\n  File \"/home/bjku/TwinLiteNet/test_trt.py\", line 45, in __init__\n    self.context = model.create_execution_context()\nAttributeError: 'NoneType' object has no attribute 'create_execution_context'",
     "compile.tensorrt_engine_corrupt", ["kPLAN_MAGIC_TAG", "test_trt.py:45"]),
    # TensorRT 8's magic tag, then the None engine (ultralytics#3080)
    ("[06/07/2023-14:30:53] [TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::30] Error Code 1: Serialization (Serialization assertion magicTagRead == magicTag failed.Magic tag does not match)\n[06/07/2023-14:30:53] [TRT] [E] 4: [runtime.cpp::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine deserialization failed.)\nTraceback (most recent call last):\n  File \"test_engine.py\", line 12, in <module>\n    context = engine.create_execution_context()\nAttributeError: 'NoneType' object has no attribute 'create_execution_context'\n",
     "compile.tensorrt_engine_corrupt", ["magicTagRead == magicTag", "test_engine.py:12"]),
    # TensorRT 7's magic tag for an ONNX file given as the engine, then `with None` (Tianxiaomo/pytorch-YOLOv4#166)
    ("Reading engine from file /opt/gits/pytorch-YOLOv4/yolov4_1_3_608_608.onnx\n[TensorRT] ERROR: coreReadArchive.cpp (31) - Serialization Error in verifyHeader: 0 (Magic tag does not match)\n[TensorRT] ERROR: INVALID_STATE: std::exception\n[TensorRT] ERROR: INVALID_CONFIG: Deserialize the cuda engine failed.\nTraceback (most recent call last):\n  File \"demo_trt.py\", line 192, in <module>\n    main(engine_path, image_path, image_size)\n  File \"demo_trt.py\", line 114, in main\n    with get_engine(engine_path) as engine, engine.create_execution_context() as context:\nAttributeError: __enter__\n",
     "compile.tensorrt_engine_corrupt", ["yolov4_1_3_608_608.onnx", "Magic tag does not match"]),
    # a ComfyUI node's engine of another TensorRT release, the file named before (yuvraj108c/ComfyUI-Upscaler-Tensorrt#34)
    ("Loading TensorRT engine: /home/k/comfy/models/tensorrt/upscaler/4x_foolhardy_Remacri.engine\n[W] 'colored' module is not installed, will not use colors when logging. To enable colors, please install the 'colored' module: python3 -m pip install colored\n[E] 1: [stdArchiveReader.cpp::stdArchiveReaderInitCommon::47] Error Code 1: Serialization (Serialization assertion stdVersionRead == kSERIALIZATION_VERSION failed.Version tag does not match. Note: Current Version: 228, Serialized Engine Version: 239)\n[!] Could not deserialize engine. See log for details.",
     "compile.tensorrt_engine_version", ["228", "239", "4x_foolhardy_Remacri.engine"]),
    # trtexec's build, stopped by a plugin (wenet-e2e/wenet#2206)
    ("[12/21/2023-12:58:57] [E] Error[2]: [pluginV2DynamicExtRunner.cpp::execute::115] Error Code 2: Internal Error (Assertion status == kSTATUS_SUCCESS failed. )\n[12/21/2023-12:58:57] [E] Error[2]: [builder.cpp::buildSerializedNetwork::751] Error Code 2: Internal Error (Assertion engine != nullptr failed. )\n[12/21/2023-12:58:57] [E] Engine could not be created from network\n[12/21/2023-12:58:57] [E] Building engine failed\n[12/21/2023-12:58:57] [E] Failed to create engine from model or file.\n[12/21/2023-12:58:57] [E] Engine set up failed",
     "compile.tensorrt_build_failed", ["pluginV2DynamicExtRunner.cpp::execute::115", "engine != nullptr"]),
    # TensorRT 6's builder error, then `with None as engine` (NVIDIA/TensorRT#457)
    ("[TensorRT] ERROR: (Unnamed Layer* 97) [Constant]: volume of dimensions is not consistent with weights size\n[TensorRT] ERROR: (Unnamed Layer* 97) [Constant]: volume of dimensions is not consistent with weights size\nTraceback (most recent call last):\n  File \"python/bert_builder.py\", line 403, in <module>\n    main(inputbase, B, S, bert_path, outputbase)\n  File \"python/bert_builder.py\", line 377, in main\n    with builder.build_engine(network, builder_config) as engine:\nAttributeError: __enter__",
     "compile.tensorrt_build_failed", ["__enter__", "volume of dimensions is not consistent with weights size", "build_engine"]),
    # a layer's shape check in dnn.cpp (opencv#16660)
    ("error: OpenCV(4.1.2) /io/opencv/modules/dnn/src/dnn.cpp:3873: error: (-215:Assertion failed) inputs.size() in function 'getMemoryShapes' ",
     "compile.opencv_dnn_onnx", ["OpenCV(4.1.2)", "dnn.cpp:3873", "getMemoryShapes"]),
    # a permute of a 3-D tensor exported from PyTorch (opencv#21211)
    ("Traceback (most recent call last):\n  File \"testFunction.py\", line 281, in <module>\n    print(\"$$$$$cv res$$$$: \", net.forward())\ncv2.error: OpenCV(4.5.3) C:\\Users\\runneradmin\\AppData\\Local\\Temp\\pip-req-build-c2l3r8zm\\opencv\\modules\\dnn\\src\\layers\\permute_layer.cpp:138: error: (-215:Assertion failed) (int)_numAxes == inputs[0].size() in function 'cv::dnn::PermuteLayerImpl::getMemoryShapes'",
     "compile.opencv_dnn_onnx", ["permute_layer.cpp:138", "(int)_numAxes == inputs[0].size()", "testFunction.py:281"]),
    # the same check as OpenCV's log prints it (opencv#23602)
    ("OpenCV(4.7.0-dev) Error: Assertion failed ((int)_numAxes == inputs[0].size()) in getMemoryShapes, file /home/abduragim/projects/opencv_proj/opencv/modules/dnn/src/layers/permute_layer.cpp, line 163",
     "compile.opencv_dnn_onnx", ["permute_layer.cpp:163", "getMemoryShapes"]),
    # the importer's handleNode wrapping a layer's failure (doleron/yolov5-opencv-cpp-python#19)
    ("terminate called after throwing an instance of 'cv::Exception'\n  what():  OpenCV(4.5.5) /home/sergey/opencv/modules/dnn/src/onnx/onnx_importer.cpp:928: error: (-2:Unspecified error) in function 'handleNode'\nNode [Identity@ai.onnx]:(onnx::Reshape_475) parse error: OpenCV(4.5.5) /home/sergey/opencv/modules/dnn/src/dnn.cpp:6017: error: (-215:Assertion failed) inputs.size() in function 'getMemoryShapes'\nAborted (core dumped)",
     "compile.opencv_dnn_onnx", ["handleNode", "onnx::Reshape_475", "getMemoryShapes"]),
    # shape_utils' total, in a Python traceback (opencv#20681)
    ("Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\ncv2.error: OpenCV(4.5.3) /private/var/folders/24/8k48jl6d249_n_qfxwsl6xvm0000gn/T/pip-req-build-xxsyexfp/opencv/modules/dnn/include/opencv2/dnn/shape_utils.hpp:171: error: (-215:Assertion failed) start <= (int)shape.size() && end <= (int)shape.size() && start <= end in function 'total'",
     "compile.opencv_dnn_onnx", ["shape_utils.hpp:171", "total"]),
    # onnx2tf's report for YOLO-World's Resize (AILab-CVC/YOLO-World#329)
    ("ERROR: input_onnx_file_path: work_dirs/yolo_world_v2_s_vlpan_bn_2e-4_80e_8gpus_mask-refine_finetune_coco_ep80-492dc329.onnx\nERROR: onnx_op_name: wa/baseModel/neck/upsample_layers.0/Resize\nERROR: Read this and deal with it. https://github.com/PINTO0309/onnx2tf#parameter-replacement",
     "compile.onnx2tf_conversion_failed", ["wa/baseModel/neck/upsample_layers.0/Resize"]),
    # Triton 2.0 leaving an unrealized_conversion_cast for bf16 (triton-lang/triton#1245)
    ("python/test/unit/operators/test_flash_attention.py .error: cannot be converted to LLVM IR: missing `LLVMTranslationDialectInterface` registration for dialect for op: builtin.unrealized_conversion_cast\nFailed to emit LLVM IR\nTranslate to LLVM IR failedLLVM ERROR: Failed to translate TritonGPU to LLVM IR.\nFatal Python error: Aborted",
     "compile.triton_passmanager", ["builtin.unrealized_conversion_cast", "TritonGPU"]),
    # YOLOv5's ONNX export (ultralytics/yolov5#6401)
    ("ONNX: starting export with onnx 1.8.204...\nWARNING: The shape inference of prim::Constant type is missing, so it may result in wrong shape inference for the exported graph. Please consider adding it in symbolic function.",
     "compile.onnx_export_shape_inference_warning", ["prim::Constant"]),
    # mmdeploy's custom op (OpenGVLab/InternImage#265)
    ("Warning: Constant folding - Only steps=1 can be constant folded for opset >= 10 onnx::Slice op. Constant folding not applied.\nWARNING: The shape inference of mmdeploy::grid_sampler type is missing, so it may result in wrong shape inference for the exported graph. Please consider adding it in symbolic function.",
     "compile.onnx_export_shape_inference_warning", ["mmdeploy::grid_sampler", "onnx::Slice"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_explained(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # OpenCV's TensorFlow importer: a TensorFlow graph (opencv#14799, opencv#18775)
    ("cv2.error: OpenCV(4.1.0) /io/opencv/modules/dnn/src/tensorflow/tf_importer.cpp:616: error: (-215:Assertion failed) const_layers.insert(std::make_pair(name, li)).second in function 'addConstNodes'",
     "compile.opencv_dnn_onnx"),
    ("OpenCV(4.5.0) /home/srinu/Documents/cpp_inference/opencv_4-5-0/opencv/modules/dnn/src/tensorflow/tf_importer.cpp:1025: error: (-215:Assertion failed) values.type() == CV_32FC1 in function 'populateNet'",
     "compile.opencv_dnn_onnx"),
    # onnx2tflite, another converter, failing on a node name (MPolaris/onnx2tflite#8)
    ("KeyError: 'onnx::Resize_448'",
     "compile.onnx2tf_conversion_failed"),
    # coremltools refusing a convolution's inputs, not a script object (ultralytics/yolov5#1649)
    ("CoreML export failure: unexpected number of inputs for node x.2 (_convolution): 13",
     "compile.coreml_script_object_constant"),
    # OpenVINO's TensorFlow frontend listing ops it cannot translate (openvinotoolkit/openvino#22076)
    ("openvino._pyopenvino.OpConversionFailure: Check 'is_conversion_successful' failed at src\\frontends\\tensorflow\\src\\frontend.cpp:429:\nFrontEnd API failed with OpConversionFailure:\n[TensorFlow Frontend] Internal error, no translator found for operation(s): Const of unknown type, LookupTableFindV2, LookupTableSizeV2",
     "compile.openvino_frontend_failed"),
    # the ONNX checker's warning about an ATen fallback node (onnx/onnx#3891)
    ("`Warning: Checker does not support models with experimental ops: ATen`",
     "compile.onnx_export_shape_inference_warning"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
