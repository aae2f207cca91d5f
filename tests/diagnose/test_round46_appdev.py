"""Round-46 wordings from applications built on PyTorch, 2023-2026 (voice and TTS apps, transcription tools on
faster-whisper / CTranslate2, comic and manga translators, photo managers): cuDNN 9 sub-libraries and CTranslate2's cuBLAS
that cannot be loaded, Windows' Event Viewer crash records naming a torch or CUDA DLL, an app's own GPU check, and the
app context (the model file, the loading call, the downloaded voice, faulthandler's frames) of known torch errors. Each
corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it
holds named the way the coverage judge reads them; other wordings of the same families (from the threads cited) are
claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r46_c.yaml#14", "other.cudnn9_sublibrary_unloadable", ["libcudnn_ops.so.9", "cudnnCreateTensorDescriptor"]),
    ("r46_c.yaml#28", "other.cudnn9_sublibrary_unloadable", ["libcudnn_ops.so.9", "cudnnCreateTensorDescriptor"]),
    ("r46_c.yaml#38", "other.ctranslate2_library_not_found", ["cublas64_12.dll"]),
    ("r46_c.yaml#27", "other.windows_native_module_fault", ["torch_cpu.dll", "0xc0000094"]),
    ("r46_c.yaml#46", "other.windows_native_module_fault", ["cudnn64_8.dll", "0xc0000409"]),
    ("r46_c.yaml#23", "device.manga_translator_gpu_unavailable", ["--use-cuda"]),
    ("r46_c.yaml#21", "device.no_cuda_build", ["anime-manga-big-lama.pt"]),
    ("r46_c.yaml#53", "device.no_kernel_image", ["from_pretrained", "no kernel image"]),
    ("r46_c.yaml#54", "device.numpy_cuda", ["cuda:0", "Tensor.cpu()", "af_heart.pt"]),
    ("r46_c.yaml#58", "other.native_fpe", ["Floating point exception", 'conv.py", line 456', 'places365.py", line 140']),
    ("r46_c.yaml#78", "other.custom_class_missing", ["torch.classes", "__path__._path", "torch::class_"]),
    # read as `device` when round 46 was opened (devmem#102 was a control): CTranslate2's cuBLAS refusal
    ("r46_c.yaml#48", "device.ctranslate2_cublas_not_supported", ["CUBLAS_STATUS_NOT_SUPPORTED"]),
    ("devmem.yaml#102", "device.ctranslate2_cublas_not_supported", ["CUBLAS_STATUS_NOT_SUPPORTED", 'transcribe.py", line 1719']),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_readings_the_corpus_messages_hold():
    # the abort after cuDNN's message, and the caller: CTranslate2's cuDNN 9 build
    diagnosis = explain_paste(corpus_message("r46_c.yaml#28"))
    assert_names(diagnosis, "other.cudnn9_sublibrary_unloadable", ["SIGABRT", "ctranslate2 4.5"])
    assert "ctranslate2==4.4.0" in " ".join(diagnosis.fixes)
    # CUDA 12's cuBLAS, asked for by a ctranslate2 4.x on a CUDA 11.8 setup; 3.24.0 is the CUDA 11 release
    diagnosis = explain_paste(corpus_message("r46_c.yaml#38"))
    assert_names(diagnosis, "other.ctranslate2_library_not_found", ["CUDA 12", "ctranslate2 4.0"])
    assert "ctranslate2==3.24.0" in " ".join(diagnosis.fixes)
    # an integer division by zero in torch's CPU kernels; a fail-fast exit of CTranslate2's bundled cuDNN
    assert_names(explain_paste(corpus_message("r46_c.yaml#27")), "other.windows_native_module_fault",
                 ["STATUS_INTEGER_DIVIDE_BY_ZERO", "part of PyTorch itself"])
    assert_names(explain_paste(corpus_message("r46_c.yaml#46")), "other.windows_native_module_fault",
                 ["fail-fast", "bundled with CTranslate2", "Buzz.exe"])
    # a CPU-only wheel, not a missing CUDA toolkit
    assert_names(explain_paste(corpus_message("r46_c.yaml#23")), "device.manga_translator_gpu_unavailable",
                 ["CPU-only build", "`--use-cuda`"])
    # faulthandler's innermost frame is torch's convolution, the app's own frames under it
    fixes = " ".join(explain_paste(corpus_message("r46_c.yaml#58")).fixes)
    assert "`_conv_forward` at conv.py:456" in fixes and "wideresnet.py:95 in forward" in fixes


@pytest.mark.parametrize("text, rule, values", [
    # cuDNN 9's convolution sub-library (OpenNMT/CTranslate2#1806), and its Windows wording (ddean2009/MoneyPrinterPlus#91,
    # Uberi/speech_recognition#835)
    ("Unable to load any of {libcudnn_cnn.so.9.1.0, libcudnn_cnn.so.9.1, libcudnn_cnn.so.9, libcudnn_cnn.so}\n"
     "Invalid handle. Cannot load symbol cudnnCreateConvolutionDescriptor",
     "other.cudnn9_sublibrary_unloadable", ["libcudnn_cnn.so.9", "cudnnCreateConvolutionDescriptor"]),
    ("Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!\n"
     "Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor",
     "other.cudnn9_sublibrary_unloadable", ["cudnn_ops64_9.dll", "cudnnCreateTensorDescriptor", "PATH"]),
    ("INFO:faster_whisper:Processing audio with duration 00:02.368\n"
     "Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!\n"
     "Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor",
     "other.cudnn9_sublibrary_unloadable", ["cudnn_ops64_9.dll", "`faster_whisper` is in this output"]),
    # zsh's report of the abort (petermg/Chatterbox-TTS-Extended#28), fish's (QuentinFuxa/WhisperLiveKit#271)
    ("Unable to load any of {libcudnn_cnn.so.9.1.0, libcudnn_cnn.so.9.1, libcudnn_cnn.so.9, libcudnn_cnn.so}\n"
     "Invalid handle. Cannot load symbol cudnnCreateConvolutionDescriptor\n"
     "[1]    67900 IOT instruction (core dumped)  python Chatter.py",
     "other.cudnn9_sublibrary_unloadable", ["libcudnn_cnn.so.9", "SIGABRT"]),
    ("Simulstreaming will use Faster Whisper for the encoder.\n"
     "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}\n"
     "Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor\n"
     "fish: Job 1, 'whisperlivekit-server --host 0.…' terminated by signal SIGABRT (Abort)",
     "other.cudnn9_sublibrary_unloadable", ["libcudnn_ops.so.9", "SIGABRT"]),
    # the graph sub-library as a thread's title, on one line (modelscope/ms-swift#3390)
    ("Unable to load any of {libcudnn_graph.so.9.1.0, libcudnn_graph.so.9.1, libcudnn_graph.so.9, libcudnn_graph.so} "
     "Invalid handle. Cannot load symbol cudnnCreate",
     "other.cudnn9_sublibrary_unloadable", ["libcudnn_graph.so.9"]),
    # CTranslate2's cuBLAS loader as apps re-raise it (jhj0517/Whisper-WebUI#102, kimjammer/Neuro#2,
    # dmMaze/BallonsTranslator#404), the CUDA 11 build's (jianchang512/stt#52, Purfview/whisper-standalone-win#169), and on
    # Linux (rhasspy/wyoming-faster-whisper#30)
    ("Error: Library cublas64_12.dll is not found or cannot be loaded", "other.ctranslate2_library_not_found",
     ["cublas64_12.dll", "CUDA 12", "where cublas64_12.dll"]),
    ("ERROR:root:Unhandled exeption in _realtime_worker: Library cublas64_12.dll is not found or cannot be loaded",
     "other.ctranslate2_library_not_found", ["cublas64_12.dll"]),
    ("  File \"C:\\Users\\simon\\Desktop\\BallonsTranslator_dev_src_with_gitpython\\modules\\translators\\trans_sugoi.py\", "
     "line 25, in _translate\n"
     "    tokenized_translated = self.translator.translate_batch(tokenized_text)\n"
     "RuntimeError: Library cublas64_12.dll is not found or cannot be loaded",
     "other.ctranslate2_library_not_found", ["cublas64_12.dll", "`sugoi` is in this output"]),
    ("Library cublas64_11.dll is not found or cannot be loaded", "other.ctranslate2_library_not_found",
     ["cublas64_11.dll", "CUDA 11", "ctranslate2 3.x"]),
    ("  File \"faster_whisper\\transcribe.py\", line 814, in encode\n"
     "RuntimeError: Library cublas64_11.dll is not found or cannot be loaded\n"
     "[8080] Failed to execute script '__main__' due to unhandled exception!",
     "other.ctranslate2_library_not_found", ["cublas64_11.dll", "nvidia-cublas-cu11"]),
    ("On trying to use CUDA I get the Error: RuntimeError: Library libcublas.so.12 is not found",
     "other.ctranslate2_library_not_found", ["libcublas.so.12", "LD_LIBRARY_PATH", "ctranslate2==3.24.0"]),
    # torch's CPU library faulting with an access violation (lllyasviel/FramePack#400)
    ("Faulting application name: python.exe, version: 3.10.6150.1013, time stamp: 0x62e84c21\n"
     "Faulting module name: torch_cpu.dll, version: 0.0.0.0, time stamp: 0x67943a5c\n"
     "Exception code: 0xc0000005\n"
     "Fault offset: 0x0000000006046edb\n"
     "Faulting process id: 0xE48\n"
     "Faulting application start time: 0x1DBB85EB52C686D\n"
     "Faulting application path: C:\\Users\\Lolo\\Downloads\\framepack_cu126_torch26\\system\\python\\python.exe\n"
     "Faulting module path: C:\\Users\\Lolo\\Downloads\\framepack_cu126_torch26\\system\\python\\lib\\site-packages\\torch"
     "\\lib\\torch_cpu.dll",
     "other.windows_native_module_fault", ["torch_cpu.dll", "0xc0000005", "STATUS_ACCESS_VIOLATION", "--force-reinstall"]),
    # manga-image-translator's guard in its older and newer wordings (zyddnys/manga-image-translator#406, #138, #712)
    ("CUDA compatible device could not be found whilst --use-cuda args was set...",
     "device.manga_translator_gpu_unavailable", ["--use-cuda"]),
    ("Exception: CUDA compatible device could not be found while --use_cuda args was set...",
     "device.manga_translator_gpu_unavailable", ["--use_cuda"]),
    ("CUDA or Metal compatible device could not be found in torch whilst --use-gpu args was set.",
     "device.manga_translator_gpu_unavailable", ["--use-gpu", "torch.backends.mps.is_available()"]),
    # comic-translate's log of lama-cleaner's loader, with the line before it (ogkalu2/comic-translate#258)
    ("2025-04-23 09:03:32.310 | INFO     | modules.utils.inpainting:load_jit_model:110 - Loading model from: "
     "C:\\Users\\Lenovo\\Downloads\\Programs\\comic-translate\\models\\inpainting\\anime-manga-big-lama.pt\n"
     "2025-04-23 09:03:33.052 | ERROR    | modules.utils.inpainting:handle_error:97 - Failed to load model "
     "C:\\Users\\Lenovo\\Downloads\\Programs\\comic-translate\\models\\inpainting\\anime-manga-big-lama.pt,please submit an "
     "issue at https://github.com/Sanster/lama-cleaner/issues and include a screenshot of the error:\n"
     "Torch not compiled with CUDA enabled\n"
     "An error occurred:\n"
     "SystemExit: -1",
     "device.no_cuda_build", ["anime-manga-big-lama.pt", "GPU option off"]),
    # the same voice pack in another report of the Kokoro node (stavsap/comfyui-kokoro#25)
    ("got prompt\n"
     "Downloading https://huggingface.co/hexgrad/Kokoro-82M/resolve/main/voices/af_heart.pt\n"
     "!!! Exception during processing !!! can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
     "tensor to host memory first.",
     "device.numpy_cuda", ["af_heart.pt", "map_location"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


def test_an_app_that_names_its_loading_call_is_read_for_a_blackwell_gpu():
    # Chatterbox-TTS-Server's engine on two RTX PRO 6000 (devnen/Chatterbox-TTS-Server#101)
    diagnosis = explain_paste(corpus_message("r46_c.yaml#53"))
    assert_names(diagnosis, "device.no_kernel_image", ["`from_pretrained`", "cu128"], " ".join(diagnosis.fixes))
    # an app's other wording names no loading call: the plain reading (Xerophayze/TTS-Story#21)
    text = ("\"Failed to initialize model on CUDA: CUDA error: no kernel image is available for execution on the device "
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
            "be incorrect. For debugging consider passing CUDA_LAUNCH_BLOCKING=1 Compile with `TORCH_USE_CUDA_DSA` to "
            "enable device-side assertions. . Try setting device='cpu' or check CUDA installation.\"")
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "device.no_kernel_image"
    assert "moving the weights" not in " ".join(diagnosis.fixes)


@pytest.mark.parametrize("text, not_rule", [
    # cuDNN 8 looking for cuBLAS (SYSTRAN/faster-whisper#575): neither cuDNN's own parts nor CTranslate2's loader
    ("Could not locate cublasLt64_12.dll. Please make sure it is in your library path!",
     "other.cudnn9_sublibrary_unloadable"),
    ("Could not locate cublasLt64_12.dll. Please make sure it is in your library path!",
     "other.ctranslate2_library_not_found"),
    # cuDNN 8's own wording on Linux (daswer123/xtts-finetune-webui#18); its Windows wording ("Could not load library
    # cudnn_ops_infer64_8.dll. Error code 126", SYSTRAN/faster-whisper#85) is the rule's since round 56's reading
    ("Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: "
     "No such file or directory\nAborted (core dumped)", "other.cudnn9_sublibrary_unloadable"),
    # another program's crash record, in a Windows DLL (airsdk/Adobe-Runtime-Support#3367)
    ("Faulting application name: -----.exe, version: 0.0.0.0, time stamp: 0x63ee6355\n"
     "Faulting module name: MSCTF.dll, version: 10.0.22621.3527, time stamp: 0x0498c0ce\n"
     "Exception code: 0xc0000005\n"
     "Fault offset: 0x000000000001f949", "other.windows_native_module_fault"),
    # another comic translator's device check, through YOLO's (ogkalu2/comic-translate#210)
    ("ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA device(s) if available, i.e. "
     "'device=0' or 'device=0,1,2,3' for Multi-GPU.", "device.manga_translator_gpu_unavailable"),
    # faulthandler's stack of another signal in the same app (LibrePhotos/librephotos#1070)
    ("Fatal Python error: Illegal instruction\n\n"
     "Current thread 0x00007fa83b20a040 (most recent call first):\n"
     "  File \"/usr/local/lib/python3.11/dist-packages/face_recognition/api.py\", line 165 in <listcomp>\n"
     "  File \"/usr/local/lib/python3.11/dist-packages/face_recognition/api.py\", line 165 in _raw_face_landmarks\n"
     "  File \"/usr/local/lib/python3.11/dist-packages/face_recognition/api.py\", line 213 in face_encodings\n"
     "  File \"/code/service/face_recognition/main.py\", line 25 in create_face_encodings", "other.native_fpe"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
