"""Round-44 wordings for installs, shared libraries, imports, native crashes and serving tools (AWS Lambda functions,
Alpine's musl loader, uWSGI workers, TorchServe's model archiver, BentoML's lazy imports, cpuinfo in sandboxes, FFCV's
OpenCV build, TorchData's S3 datapipes, datasets' TorchCodec audio): each corpus message (verbatim from the opened
rounds) is claimed, from its text alone, by the right rule with the values it holds named the way the coverage judge
reads them; other wordings of the same families (from the threads cited) are claimed too, and near misses stay
unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r44_a.yaml#10", "other.bentoml_missing_dependency", ["tensorflow"]),
    ("r44_a.yaml#11", "other.uwsgi_worker_segfault", ["uWSGI", "14479"]),
    ("r44_a.yaml#12", "other.uwsgi_worker_segfault", ["uWSGI", "11199"]),
    ("r44_a.yaml#16", "other.aws_lambda_import_failed", ["lambda_function", "torch"]),
    ("r44_a.yaml#18", "other.aws_lambda_import_failed", ["handler", "torch"]),
    ("r44_a.yaml#19", "other.aws_lambda_import_failed", ["libcudart.so.9.0", "app"]),
    ("r44_a.yaml#20", "other.cpuinfo_sysfs_unreadable",
     ["/sys/devices/system/cpu/possible", "/sys/devices/system/cpu/present"]),
    ("r44_a.yaml#22", "other.aws_lambda_import_failed", ["libtorch_global_deps.so", "OSError"]),
    ("r44_a.yaml#23", "other.torch_on_musl_libc", ["ld-linux-x86-64.so.2", "_C.cpython-36m-x86_64-linux-gnu.so"]),
    ("r44_a.yaml#24", "other.torch_on_musl_libc",
     ["libgomp-a34b3233.so.1", "pthread_attr_setaffinity_np", "_load_global_deps"]),
    ("r44_a.yaml#45", "other.torch_model_archiver_arguments", ["--handler"]),
    ("r44_a.yaml#46", "other.torch_model_archiver_arguments", ["--config-file", "handler/model-config.yaml"]),
    ("r44_a.yaml#53", "other.libtorch_not_a_member", ["C2039", "'load'", "torch::jit"]),
    ("r44_a.yaml#75", "other.static_tls_exhausted", ["libgomp-d22c30c5.so.1", "_load_global_deps"]),
    ("r44_b.yaml#59", "other.opencv_library_not_found", ["opencv4"]),
    ("r44_b.yaml#60", "other.ffcv_setup_failed", ['setup.py", line 36', "ffcv._libffcv"]),
    ("r44_b.yaml#61", "other.opencv_library_not_found", ["libopencv_imgproc.so.405"]),
    ("r44_b.yaml#62", "other.ffcv_setup_failed", ["ffcv==0.0.3", "opencv4", 'setup.py", line 30']),
    ("r44_b.yaml#69", "other.torchcodec_load_failed", ["torchcodec", 'audio.py", line 172']),
    ("r44_b.yaml#70", "other.torchcodec_load_failed", ["torchcodec", "audio.py"]),
    ("r44_b.yaml#71", "other.torchcodec_load_failed", ["torchcodec"]),
    ("r44_b.yaml#79", "other.torchdata_s3_not_built", ["BUILD_S3=1", "TorchData"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # a CUDA build of torch in a Lambda package: Lambda has no CUDA runtime, the CPU wheel is the fix
    diagnosis = explain_paste(corpus_message("r44_a.yaml#19"))
    assert_names(diagnosis, "other.aws_lambda_import_failed", ["CPU-only", "download.pytorch.org/whl/cpu"],
                 " ".join([diagnosis.summary, *diagnosis.fixes]))
    # torch on an EFS mount installed for another platform: the package root is named, libtorch_global_deps.dylib
    assert_names(explain_paste(corpus_message("r44_a.yaml#22")), "other.aws_lambda_import_failed",
                 ["/mnt/my-mount-point/python_packages", "libtorch_global_deps.dylib"])
    # uWSGI's exit handlers under lazy-apps against libtorch's static destructors (pytorch/pytorch#42125)
    assert_names(explain_paste(corpus_message("r44_a.yaml#11")), "other.uwsgi_worker_segfault",
                 ["lazy-apps", "malloc(): unsorted double linked list corrupted"])
    # musl's loader: Alpine, and the glibc-only symbol of the libgomp torch bundles
    assert_names(explain_paste(corpus_message("r44_a.yaml#24")), "other.torch_on_musl_libc",
                 ["Alpine", "glibc", "torch/__init__.py, line 187"])
    # --config-file arrived with torch-model-archiver 0.8.0
    assert_names(explain_paste(corpus_message("r44_a.yaml#46")), "other.torch_model_archiver_arguments", ["0.8.0"])
    # MSVC's C2039: the header that declares torch::jit::load
    assert_names(explain_paste(corpus_message("r44_a.yaml#53")), "other.libtorch_not_a_member", ["<torch/script.h>"])
    # Triton's Python backend frames ("At:"): torch's preload, and the model being loaded
    assert_names(explain_paste(corpus_message("r44_a.yaml#75")), "other.static_tls_exhausted",
                 ["torch/__init__.py, line 154", "Triton", "users/e4fa979e-5a0e-40a8-8b07-82986e593aac"])
    # the soname 405 is OpenCV 4.5
    assert_names(explain_paste(corpus_message("r44_b.yaml#61")), "other.opencv_library_not_found", ["OpenCV 4.5"])
    # FFCV 0.0.2's setup.py: pkg-config's error words filed under the key None
    assert_names(explain_paste(corpus_message("r44_b.yaml#60")), "other.ffcv_setup_failed", ["`None`", "pkg-config"])
    # datasets 4.0 decodes audio through TorchCodec; 3.x used soundfile
    diagnosis = explain_paste(corpus_message("r44_b.yaml#69"))
    assert_names(diagnosis, "other.torchcodec_load_failed", ["datasets[audio]", "datasets<4"],
                 " ".join([diagnosis.summary, *diagnosis.fixes]))
    # the AWS Deep Learning Container's torchdata, and the SageMaker job
    assert_names(explain_paste(corpus_message("r44_b.yaml#79")), "other.torchdata_s3_not_built",
                 ["torchdata._torchdata", "<job-name>"])
    # the lazy loader's empty message is not part of the problem
    assert_names(explain_paste(corpus_message("r44_a.yaml#10")), "other.bentoml_missing_dependency",
                 ["pt-glm6b2p", "`None`"])


@pytest.mark.parametrize("text, rule, values", [
    # the third crash of the same uWSGI report, uWSGI's own backtrace (pytorch/pytorch#42125)
    ("!!! uWSGI process 11212 got Segmentation Fault !!!\n*** backtrace of 11212 ***\nuwsgi(uwsgi_backtrace+0x2e) "
     "[0x55632cfc3e7e]\nuwsgi(uwsgi_segfault+0x27) [0x55632cfc4267]\n/lib/x86_64-linux-gnu/libc.so.6(+0x46210) "
     "[0x7fb23bc85210]\n/lib/x86_64-linux-gnu/libc.so.6(+0x499f6) [0x7fb23bc889f6]\n/lib/x86_64-linux-gnu/libc.so.6("
     "on_exit+0) [0x7fb23bc88be0]\nuwsgi(+0x3c925) [0x55632cf77925]\nuwsgi(end_me+0x2b) [0x55632cfc0e2b]",
     "other.uwsgi_worker_segfault", ["11212", "lazy-apps"]),
    # cpuinfo on AWS Lambda with torch 1.0.0 (pytorch/cpuinfo#14), and torch 2.x on arm64 Lambda
    # (pytorch/pytorch#113568, pytorch/cpuinfo#143)
    ("`Error in cpuinfo: failed to parse the list of possible procesors in /sys/devices/system/cpu/possible`\n"
     "`Error in cpuinfo: failed to parse the list of present procesors in /sys/devices/system/cpu/present`",
     "other.cpuinfo_sysfs_unreadable", ["/sys/devices/system/cpu/possible", "sandbox"]),
    ("```\nError in cpuinfo: failed to parse the list of possible processors in /sys/devices/system/cpu/possible\n"
     "Error in cpuinfo: failed to parse the list of present processors in /sys/devices/system/cpu/present\n"
     "Error in cpuinfo: failed to parse both lists of possible and present processors\n```",
     "other.cpuinfo_sysfs_unreadable", ["arm64", "neither"]),
    ("Error in cpuinfo: failed to parse the list of possible processors in /sys/devices/system/cpu/possible\n"
     "Error in cpuinfo: failed to parse the list of present processors in /sys/devices/system/cpu/present\n"
     "Error in cpuinfo: failed to parse both lists of possible and present processors\n"
     "terminate called after throwing an instance of 'c10::Error'\n"
     "what():  [enforce fail at ThreadPool.cc:44] cpuinfo_initialize(). cpuinfo initialization failed",
     "other.cpuinfo_sysfs_unreadable", ["ThreadPool.cc:44", "arm64"]),
    # musl's loader in other Alpine images (pytorch/pytorch#1618, the second one wrapped in the paste;
    # microsoft/BitNet#187, fission/fission#2799)
    ("ImportError: Error loading shared library ld-linux-x86-64.so.2: No such file or directory (needed by /usr/\n"
     "lib/python3.5/site-packages/torch/_C.cpython-35m-x86_64-linux-gnu.so)",
     "other.torch_on_musl_libc", ["ld-linux-x86-64.so.2", "_C.cpython-35m-x86_64-linux-gnu.so", "Alpine"]),
    ("ImportError: Error relocating /usr/lib/python3.5/site-packages/torch/lib/libcudnn.so.6: __strtod_internal:\n"
     " symbol not found", "other.torch_on_musl_libc", ["__strtod_internal", "libcudnn.so.6"]),
    ("  File \"/usr/local/lib/python3.12/site-packages/torch/__init__.py\", line 195, in _load_global_deps\n"
     "    raise err\n"
     "  File \"/usr/local/lib/python3.12/site-packages/torch/__init__.py\", line 176, in _load_global_deps\n"
     "    ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL)\n"
     "  File \"/usr/local/lib/python3.12/ctypes/__init__.py\", line 379, in __init__\n"
     "    self._handle = _dlopen(self._name, mode)\n"
     "                   ^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "OSError: Error relocating /usr/local/lib/python3.12/site-packages/torch/lib/libgomp-a34b3233.so.1: "
     "pthread_attr_setaffinity_np: symbol not found",
     "other.torch_on_musl_libc", ["pthread_attr_setaffinity_np", "_load_global_deps"]),
    ("OSError: Error relocating /userfunc/deployarchive/torch/lib/libgomp-a34b3233.so.1: pthread_attr_setaffinity_np: "
     "symbol not found", "other.torch_on_musl_libc", ["libgomp-a34b3233.so.1", "musl"]),
    # the archiver of TorchServe 0.7.1 refusing -c/--config-file (pytorch/serve#2225), and its CI missing -v
    # (pytorch/serve#112)
    ("usage: torch-model-archiver [-h] --model-name MODEL_NAME [--serialized-file SERIALIZED_FILE] [--model-file "
     "MODEL_FILE] --handler HANDLER [--extra-files EXTRA_FILES] [--runtime {python,python3}] [--export-path "
     "EXPORT_PATH]\n                            [--archive-format {tgz,no-archive,default}] [-f] -v VERSION "
     "[-r REQUIREMENTS_FILE]\n"
     "torch-model-archiver: error: unrecognized arguments: --config-file model_config.yml",
     "other.torch_model_archiver_arguments", ["--config-file model_config.yml", "0.8.0"]),
    ("979 | torch-model-archiver: error: the following arguments are required: -v/--version",
     "other.torch_model_archiver_arguments", ["-v/--version"]),
    # the same FFCV setup.py failure under a system Python (libffcv/ffcv#239)
    ("Traceback (most recent call last):\n      File \"<string>\", line 1, in <module>\n      File "
     "\"/tmp/pip-install-bb88nk1n/ffcv/setup.py\", line 30, in <module>\n        extension_kwargs = "
     "pkgconfig('opencv4', extension_kwargs)\n      File \"/tmp/pip-install-bb88nk1n/ffcv/setup.py\", line 18, "
     "in pkgconfig\n        raise Exception()\n    Exception",
     "other.ffcv_setup_failed", ["opencv4", "setup.py:30", "opencv-python"]),
    # FFCV broken by a conda install that changed OpenCV (libffcv/ffcv-imagenet#7); other OpenCV sonames under
    # Python imports (ros-perception/vision_opencv#499 and a comment there)
    ("File \"/my_home/miniconda3/envs/test/lib/python3.9/site-packages/ffcv/libffcv.py\", line 5, in <module>\n"
     "    import ffcv._libffcv\nImportError: libopencv_imgproc.so.405: cannot open shared object file: No such file or "
     "directory", "other.opencv_library_not_found", ["ffcv._libffcv", "OpenCV 4.5"]),
    ("ImportError: libopencv_core.so.4.2: cannot open shared object file no such file or directory",
     "other.opencv_library_not_found", ["libopencv_core.so.4.2", "OpenCV 4.2"]),
    ("`ImportError: libopencv_imgproc.so.407: cannot open shared object file: No such file or directory`",
     "other.opencv_library_not_found", ["OpenCV 4.7"]),
    # datasets' check run before `pip install torchcodec` (meta-pytorch/torchcodec#795)
    ("  File \"/usr/local/lib/python3.12/dist-packages/datasets/features/audio.py\", line 172, in decode_example\n"
     "    raise ImportError(\"To support decoding audio data, please install 'torchcodec'.\")\n"
     "ImportError: To support decoding audio data, please install 'torchcodec'.",
     "other.torchcodec_load_failed", ["datasets/features/audio.py:172", "datasets` 4.0"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # a TensorFlow function's own package missing on Lambda (jacopotagliabue/tensorflow_to_lambda_serverless#1)
    ("Looks like: Unable to import module 'handler': No module named tensorflow", "other.aws_lambda_import_failed"),
    # the same loader error outside Lambda (iSEE-Laboratory/LLMDet#32)
    ("ImportError: libcudart.so.10.1: cannot open shared object file: No such file or directory",
     "other.aws_lambda_import_failed"),
    # a TensorFlow model's crash under uWSGI on ROCm (unbit/uwsgi#1921)
    ('!!! uWSGI process 3851 got Segmentation Fault !!!\n'
     '*** backtrace of 3851 ***\n'
     'uwsgi(uwsgi_backtrace+0x2a) [0x56549203f8ea]\n'
     'uwsgi(uwsgi_segfault+0x23) [0x56549203fcd3]\n'
     '/lib/x86_64-linux-gnu/libc.so.6(+0x3ef20) [0x7f35b11c6f20]\n'
     '/opt/rocm/hsa/lib/libhsa-runtime64.so.1(+0x22dd9) [0x7f35728fedd9]\n'
     '/opt/rocm/hsa/lib/libhsa-runtime64.so.1(+0x31228) [0x7f357290d228]\n'
     '/opt/rocm/hcc/bin/../lib/libmcwamp_hsa.so(_ZN10HSABarrier12enqueueAsyncEN6Kalmar5enums12me'
     'mory_scopeE+0xd62) [0x7f3561aef6e2]\n'
     '/opt/rocm/hcc/bin/../lib/libmcwamp_hsa.so(_ZN6Kalmar8HSAQueue27EnqueueMarkerWithDependency'
     'EiPSt10shared_ptrINS_13KalmarAsyncOpEENS_5enums12memory_scopeE+0x109a) [0x7f3561ad56fa]\n'
     '/opt/rocm/lib/libhip_hcc.so(_ZNK2hc16accelerator_view13create_markerEN6Kalmar5enums12memor'
     'y_scopeE+0xb8) [0x7f3572be6b78]\n'
     '/opt/rocm/lib/libhip_hcc.so(_ZN12ihipStream_t18locked_recordEventEP11ihipEvent_t+0x5c) [0x7f3572be6a8c]\n'
     '/opt/rocm/lib/libhip_hcc.so(hipEventRecord+0x42e) [0x7f3572c618be]\n'
     '/home/xiu/.local/lib/python3.6/site-packages/tensorflow/python/_pywrap_tensorflow_internal'
     '.so(+0x5fcd046) [0x7f357926a046]', "other.uwsgi_worker_segfault"),
    # util-linux's report of the same missing sysfs file (google/gvisor#91), and torch 2.5.0's SVE probe
    ("lscpu: failed to determine number of CPUs: /sys/devices/system/cpu/possible: No such file or directory",
     "other.cpuinfo_sysfs_unreadable"),
    ("Error in cpuinfo: prctl(PR_SVE_GET_VL) failed", "other.cpuinfo_sysfs_unreadable"),
    # musl's loader refusing other programs' glibc binaries (MatthiasLohr/docker-f5fpc#26, rexray/rexray#719)
    ("Error loading shared library ld-linux-x86-64.so.2: No such file or directory (needed by /usr/local/bin/f5fpc)",
     "other.torch_on_musl_libc"),
    ("Error relocating ./drv_cfg: backtrace_symbols: symbol not found\n"
     "Error relocating ./drv_cfg: pthread_attr_setaffinity_np: symbol not found", "other.torch_on_musl_libc"),
    # glibc's loader on a glibc system (pytorch/pytorch#625)
    ("ImportError: /home/guismay/anaconda2/lib/python2.7/site-packages/torch/lib/libTH.so.1: undefined symbol: "
     "GOMP_parallel", "other.torch_on_musl_libc"),
    # MXNet Model Server's CLI (deepinsight/mxnet-serving#2) and a TorchServe worker's argparse clash
    # (pytorch/serve#3299)
    ("mxnet-model-server: error: unrecognized arguments: --service mxnet_vision_service.py --port=8080",
     "other.torch_model_archiver_arguments"),
    ("model_service_worker.py: error: unrecognized arguments: --sock-type unix --sock-name /tmp/.ts.sock.9000",
     "other.torch_model_archiver_arguments"),
    # another library's keyword check (towhee-io/towhee#2082)
    ("TypeError: keywords must be strings", "other.ffcv_setup_failed"),
    # a Go build's cgo asking pkg-config (hybridgroup/gocv#427), a C++ program's loader (easymodo/qimgv#549)
    ("# pkg-config --cflags opencv4\nPackage opencv4 was not found in the pkg-config search path.\nPerhaps you should "
     "add the directory containing `opencv4.pc'\nto the PKG_CONFIG_PATH environment variable\nNo package 'opencv4' "
     "found\npkg-config: exit status 1", "other.opencv_library_not_found"),
    ("qimgv: error while loading shared libraries: libopencv_imgproc.so.409: cannot open shared object file: No such "
     "file or directory", "other.opencv_library_not_found"),
    # AWS's older S3 plugin missing its own compiled module (aws/amazon-s3-plugin-for-pytorch#7)
    ("ModuleNotFoundError: No module named '_pywrap_s3_io'", "other.torchdata_s3_not_built"),
    # a BentoML module of another release (bentoml/BentoML#4738)
    ("ModuleNotFoundError: No module named 'bentoml.frameworks'", "other.bentoml_missing_dependency"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
