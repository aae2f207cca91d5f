"""Round-47 wordings of desktop users on Windows and macOS (DLL and dylib loading, pip over a running torch, long
paths and reserved characters in file names, rendezvous on Windows, Triton and xFormers on Windows, processes killed
for memory, builds with MSVC and Apple's clang): each corpus message (verbatim from the opened rounds) is claimed,
from its text alone, by the right rule with the values it holds named the way the coverage judge reads them; other
wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r47_c.yaml#3", "other.dll_load_failed", ['deform_conv.py", line 10', "_C"]),
    ("r47_c.yaml#5", "other.dylib_incompatible_arch", ["libtorch_global_deps.dylib", "arm64", "x86_64h"]),
    ("r47_c.yaml#6", "other.dylib_incompatible_arch", ["libtorch_global_deps.dylib", "x86_64", "arm64"]),
    ("r47_c.yaml#7", "other.nvcc_unsupported_host_compiler", ["C1189", "host_config.h", "ms_deform_attn_cuda.cu", "nvcc"]),
    ("r47_c.yaml#12", "other.hub_checkpoint_name_too_long", ['shutil.py", line 121', ".cache\\\\torch\\\\hub\\\\checkpoints"]),
    ("r47_c.yaml#14", "other.pip_torch_file_locked", ["5", "asmjit.dll", "1.6.0"]),
    ("r47_c.yaml#18", "other.dll_load_failed", ["torch_imports.py", "torch._C"]),
    ("r47_c.yaml#31", "data.checkpoint_name_reserved_char",
     ['BasicModule.py", line 33', "checkpoints/CNN_epoch1_1107_19:31:57.pth"]),
    ("r47_c.yaml#37", "distributed.no_rendezvous_handler", ["env://", 'rendezvous.py", line 82', 'train.py", line 299']),
    ("r47_c.yaml#38", "distributed.no_rendezvous_handler", ["tcp://", 'rendezvous.py", line 82']),
    ("r47_c.yaml#40", "other.xformers_not_built", ["XFORMERS_MORE_DETAILS"]),
    ("r47_c.yaml#44", "compile.triton_libtriton_dll", ["libtriton", 'compiler.py", line 2']),
    ("r47_c.yaml#45", "compile.triton_libtriton_dll", ["libtriton", '__init__.py", line 12']),
    ("r47_c.yaml#50", "memory.process_killed", ["9", "33551", "15/20"]),
    ("r47_c.yaml#55", "dtype.mps_unsupported_dtype", ["Float8_e4m3fn", 'test.py", line 234', "2.7.0"]),
    ("r47_c.yaml#56", "shape.conv_channels", ["[1152, 3, 14, 14]", "[1, 4, 384, 384]", "0027.jpg"]),
    ("r47_c.yaml#57", "other.clang_openmp_unsupported", ["-fopenmp", "example-app.cpp.o"]),
    ("r31_b.yaml#20", "other.pip_torch_file_locked", ["_C.cp312-win_amd64.pyd"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # torch 1.7 on Windows knew only file://, and NCCL is Linux-only
    diagnosis = explain_paste(corpus_message("r47_c.yaml#37"))
    assert_names(diagnosis, "distributed.no_rendezvous_handler", ["file://", "backend='nccl'", "1.8"])
    assert any("gloo" in fix for fix in diagnosis.fixes)
    # an arm64 torch in an Intel process, and the reverse
    assert_names(explain_paste(corpus_message("r47_c.yaml#5")), "other.dylib_incompatible_arch", ["Intel (x86_64)"])
    assert_names(explain_paste(corpus_message("r47_c.yaml#6")), "other.dylib_incompatible_arch", ["Rosetta"])
    # pip's `~orch` is the old torch half removed
    assert_names(explain_paste(corpus_message("r47_c.yaml#14")), "other.pip_torch_file_locked", ["`~orch`", "torch 1.6.0"])
    # a clock time written with colons in the checkpoint's name
    assert_names(explain_paste(corpus_message("r47_c.yaml#31")), "data.checkpoint_name_reserved_char",
                 ["`19:31:57`", "%H:%M:%S"])
    # the name from the URL alone is 217 characters
    assert_names(explain_paste(corpus_message("r47_c.yaml#12")), "other.hub_checkpoint_name_too_long",
                 ["217 characters", "MAX_PATH"])
    # MSVC's error code for an #error directive
    assert_names(explain_paste(corpus_message("r47_c.yaml#7")), "other.nvcc_unsupported_host_compiler",
                 ["C1189 is MSVC's code", "line 153"])
    # an old Visual C++ runtime next to python.exe
    assert_names(explain_paste(corpus_message("r47_c.yaml#45")), "compile.triton_libtriton_dll",
                 ["vcruntime140.dll", "_load_module"])
    # macOS's bash names the signal
    assert_names(explain_paste(corpus_message("r47_c.yaml#50")), "memory.process_killed", ["SIGKILL", "macOS"])
    # 4 channels against 3: an image with an alpha channel
    diagnosis = explain_paste(corpus_message("r47_c.yaml#56"))
    assert any("RGBA" in fix and "0027.jpg" in fix for fix in diagnosis.fixes), diagnosis.fixes
    # libtorch's CMake package brings the flag into the tutorial's example-app
    assert_names(explain_paste(corpus_message("r47_c.yaml#57")), "other.clang_openmp_unsupported",
                 ["`example-app.cpp.o`", "libtorch's CMake package"])
    # detectron2's own extension, not torch's core
    assert_names(explain_paste(corpus_message("r47_c.yaml#3")), "other.dll_load_failed", ["`from detectron2 import _C`"])


def test_an_ipython_frame_with_spaces_in_its_path_is_the_location():
    # IPython 7's "~\\Documents\\Fast AI\\...\\torch_imports.py in <module>()" (pytorch/pytorch#574)
    diagnosis = explain_paste(corpus_message("r47_c.yaml#18"))
    assert diagnosis.location is not None
    assert diagnosis.location.file.endswith("torch_imports.py") and diagnosis.location.line == 2


@pytest.mark.parametrize("text, rule, values", [
    # tcp:// under mp.spawn in HigherHRNet's dist_train.py (HRNet/HigherHRNet-Human-Pose-Estimation#114)
    ('  File "D:\\anaconda\\envs\\HHRnet\\lib\\site-packages\\torch\\multiprocessing\\spawn.py", line 19, in _wrap\n'
     '    fn(i, *args)\n'
     '  File "D:\\kinect\\HigherHRNet-Human-Pose-Estimation-master\\HigherHRNet-Human-Pose-Estimation-master\\tools\\'
     'dist_train.py", line 156, in main_worker\n'
     '    dist.init_process_group(\n'
     '  File "D:\\anaconda\\envs\\HHRnet\\lib\\site-packages\\torch\\distributed\\distributed_c10d.py", line 433, in '
     'init_process_group\n'
     '    rendezvous_iterator = rendezvous(\n'
     '  File "D:\\anaconda\\envs\\HHRnet\\lib\\site-packages\\torch\\distributed\\rendezvous.py", line 82, in rendezvous\n'
     '    raise RuntimeError("No rendezvous handler for {}://".format(result.scheme))\n'
     'RuntimeError: No rendezvous handler for tcp://',
     "distributed.no_rendezvous_handler", ["tcp://", "rendezvous.py:82", "file://"]),
    # a one-line report in a Chinese thread (RangiLyu/nanodet#280)
    ("win10系统 pytorch1.7.1GPU RTX2070，model_size为0.5x，报错：No rendezvous handler for env://",
     "distributed.no_rendezvous_handler", ["env://"]),
    # macOS 12's parenthesised architectures, arm64e (vscodenpa/testissues#6139)
    ("`OSError: dlopen(/Users/iris/Library/Python/3.8/lib/python/site-packages/torch/lib/libtorch_global_deps.dylib, "
     "0x000A): tried: '/Users/iris/Library/Python/3.8/lib/python/site-packages/torch/lib/libtorch_global_deps.dylib' "
     "(mach-o file, but is an incompatible architecture (have (x86_64), need (arm64e)))`",
     "other.dylib_incompatible_arch", ["libtorch_global_deps.dylib", "x86_64", "arm64e"]),
    # the same locked asmjit.dll under an app's installer (gitmylo/audio-webui#205)
    ("ERROR: Could not install packages due to an OSError: [WinError 5] Access is denied: 'K:\\\\Users\\\\CRCODE22\\\\"
     "pinokio\\\\api\\\\audio-webui.pinokio.git\\\\audio-webui\\\\venv\\\\Lib\\\\site-packages\\\\~orch\\\\lib\\\\asmjit.dll'"
     "\nCheck the permissions.",
     "other.pip_torch_file_locked", ["asmjit.dll", "WinError 5", "`~orch`"]),
    # torch.compile's wrapper around the import (woct0rdho/triton-windows#58)
    ("!!! Exception during processing !!! backend='inductor' raised:\nImportError: DLL load failed while importing "
     "libtriton: A dynamic link library (DLL) initialization routine failed.\n\nSet TORCH_LOGS=\"+dynamo\" and "
     "TORCHDYNAMO_VERBOSE=1 for more information",
     "compile.triton_libtriton_dll", ["libtriton", "'inductor'", "vcruntime140.dll"]),
    # the same time stamps in torch 0.4's serialization frames, wrapped by the console (chenyuntc/pytorch-book#95)
    ('  File "C:\\Python36\\lib\\site-packages\\torch\\serialization.py", line 209, in save\n\n    return '
     '_with_file_like(f, "wb", lambda f: _save(obj, f, pickle_module, pickl\ne_protocol))\n  File "C:\\Python36\\lib\\'
     'site-packages\\torch\\serialization.py", line 132, in _wit\nh_file_like\n    f = open(f, mode)\nOSError: [Errno 22] '
     "Invalid argument: 'checkpoints/squeezenet_0921_10:14:29.pth'",
     "data.checkpoint_name_reserved_char", ["squeezenet_0921_10:14:29.pth", "`10:14:29`"]),
    # a library's default name (dreamquark-ai/tabnet#90), a '|' (d-ailin/GDN#67), str(datetime.now()) (nshaud/DeepHyperX#16)
    ("OSError: [Errno 22] Invalid argument: './DreamQuarkTabNet_13-03-2020_12:47:25.pt'",
     "data.checkpoint_name_reserved_char", ["DreamQuarkTabNet_13-03-2020_12:47:25.pt", "`:`"]),
    ("OSError: [Errno 22] Invalid argument: './pretrained//best_04|18-23:10:14.pt'",
     "data.checkpoint_name_reserved_char", ["best_04|18-23:10:14.pt", "`|`"]),
    ("OSError: [Errno 22] Invalid argument: './checkpoints/hamida_et_al/PaviaU/2020-07-03 10:52:46.094626_epoch2_0.78.pth'",
     "data.checkpoint_name_reserved_char", ["2020-07-03 10:52:46.094626_epoch2_0.78.pth"]),
    # the loader's own exception, from inside a source checkout (facebookresearch/xformers#1057)
    ('(venv) PS G:\\f\\xformers_cu124_nightly_py312_08-06-24> $env:XFORMERS_MORE_DETAILS=1\n(venv) PS '
     'G:\\f\\xformers_cu124_nightly_py312_08-06-24> python -m xformers.info\nWARNING[XFORMERS]: Need to compile C++ '
     'extensions to use all xFormers features.\n    Please install xformers properly (see https://github.com/'
     'facebookresearch/xformers#installing-xformers)\n  Memory-efficient attention, SwiGLU, sparse and more won\'t be '
     'available.\nTraceback (most recent call last):\n  File "G:\\f\\xformers_cu124_nightly_py312_08-06-24\\xformers\\'
     '_cpp_lib.py", line 138, in <module>\n    _build_metadata = _register_extensions()\n                      '
     '^^^^^^^^^^^^^^^^^^^^^^\n  File "G:\\f\\xformers_cu124_nightly_py312_08-06-24\\xformers\\_cpp_lib.py", line 123, in '
     '_register_extensions\n    raise xFormersWasNotBuiltException()\nxformers._cpp_lib.xFormersWasNotBuiltException: '
     'Need to compile C++ extensions to use all xFormers features.\n    Please install xformers properly (see '
     'https://github.com/facebookresearch/xformers#installing-xformers)\n  Memory-efficient attention, SwiGLU, sparse '
     'and more won\'t be available.',
     "other.xformers_not_built", ["xFormersWasNotBuiltException", "source checkout"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # another project's own dylib (RWKV/rwkv.cpp#59)
    ("OSError: dlopen(/my/path/rwkv.cpp/librwkv.dylib, 0x0006): tried: '/my/path/rwkv.cpp/librwkv.dylib' (mach-o file, "
     "but is an incompatible architecture (have 'x86_64', need 'arm64')), '/System/Volumes/Preboot/Cryptexes/OS/my/path/"
     "rwkv.cpp/librwkv.dylib' (no such file), '/my/path/rwkv.cpp/librwkv.dylib' (mach-o file, but is an incompatible "
     "architecture (have 'x86_64', need 'arm64'))", "*"),
    # other packages' files locked during pip installs (melMass/comfy_mtb#80, glucauze/sd-webui-faceswaplab#79,
    # seruva19/kubin#158)
    ("ERROR: Could not install packages due to an OSError: [WinError 5] Access is denied: 'C:\\\\Users\\\\mc_ta\\\\"
     "Downloads\\\\StabilityMatrix-win-x64\\\\Data\\\\Packages\\\\ComfyUI\\\\venv\\\\Lib\\\\site-packages\\\\onnxruntime\\\\"
     "capi\\\\onnxruntime_providers_shared.dll'", "*"),
    ("ERROR: Could not install packages due to an OSError: [WinError 5] Access is denied: 'D:\\\\Automatic 1111\\\\venv\\\\"
     "Lib\\\\site-packages\\\\cv2\\\\cv2.pyd'", "*"),
    ("ERROR: Could not install packages due to an OSError: [WinError 5] Access is denied: 'D:\\\\Tests\\\\kubin\\\\venv\\\\"
     "Lib\\\\site-packages\\\\~ydantic_core\\\\_pydantic_core.cp310-win_amd64.pyd'", "*"),
    # the binary-analysis Triton, whose module is also named triton (JonathanSalwan/Triton#899)
    ("ImportError: DLL load failed while importing triton: The specified module could not be found.",
     "compile.triton_libtriton_dll"),
    # a memory tracker's log with the same time stamp, not a checkpoint (Oldpan/Pytorch-Memory-Utils#20)
    ("OSError: [Errno 22] Invalid argument: '04-Oct-22-14:23:54-gpu_mem_track.txt'", "*"),
    # an installer's sudo binary killed, not a Python run (yeongpin/cursor-free-vip#857)
    ("./install.sh: line 86:  9774 Killed: 9               sudo \"${binary_path}\"", "*"),
    # the other xFormers warning: a library that is there, built for another torch (invoke-ai/InvokeAI#4788)
    ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch 2.0.1+cu118 with "
     "CUDA 1108 (you have 2.0.1+cpu)\n    Python  3.10.11 (you have 3.10.11)\n  Please reinstall xformers (see "
     "https://github.com/facebookresearch/xformers#installing-xformers)\n  Memory-efficient attention, SwiGLU, sparse "
     "and more won't be available.\n  Set XFORMERS_MORE_DETAILS=1 for more details", "other.xformers_not_built"),
    # a hub repository's file missing from an ordinary path (ultralytics/yolov5#5729)
    ("FileNotFoundError: [Errno 2] No such file or directory: 'C:\\\\Users\\\\montg/.cache\\\\torch\\\\hub\\\\"
     "ultralytics_yolov5_master\\\\hubconf.py'", "other.hub_checkpoint_name_too_long"),
    # the env:// handler ran and found a variable missing (torch's own message, fixtures/distributed)
    ("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but "
     "not set", "distributed.no_rendezvous_handler"),
    # a bare TLS failure with no torch.hub frame, as in a TensorFlow repository (igormq/ctc_tensorflow_example#17)
    ("urllib.error.URLError: <urlopen error [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed (_ssl.c:749)>", "*"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
