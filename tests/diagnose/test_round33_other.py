"""Round-33 wordings for the other family (computer-vision frameworks, pre-LLM speech and language toolkits, learners'
material): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule
with the values it holds named; other wordings of the same families (from the threads cited) are claimed too, and
near misses stay unclaimed. Live fixtures raise the errors and warnings this CPU torch can."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste, said


CORPUS_CASES = [
    ("r33_a.yaml#3", "other.openmmlab_already_registered", ["`ConvWS`", "`conv layer`", "mmcv"]),
    ("r33_a.yaml#8", "other.nvcc_not_found", ["/usr/local/cuda/bin/nvcc"]),
    ("r33_a.yaml#9", "other.extension_build_failed",
     ["src/deform_conv_cuda_kernel.cu(258)", "c10::ScalarType", "at::Type", "/usr/local/cuda/bin/nvcc"]),
    ("r33_a.yaml#27", "other.undefined_symbol", ["../../libs/_ext/__ext.so", "`state`", "torch.utils.ffi"]),
    ("r33_a.yaml#29", "other.ultralytics_model_format_unsupported", ["`.engine`", "'.engine'"]),
    ("r33_a.yaml#34", "other.scriptmodule_magic_method", ["`__contains__`", "forward_magic_method", "line 720"]),
    ("r33_a.yaml#72", "other.object_has_no_len", ["`int`"]),
    ("r33_a.yaml#86", "other.extension_name_not_defined", ["name '_C'", "`_C.ms_deform_attn_forward`"]),
    ("r33_b.yaml#12", "other.torchaudio_backend_unavailable",
     ["torchaudio.sox_effects.sox_effects.apply_effects_tensor", "SoX", "Windows"]),
    ("r33_b.yaml#21", "other.fairseq_lang_pair_not_in_dictionary", ["`en-fr`", "['language_pairs_small_models']"]),
    ("r33_b.yaml#53", "other.variable_legacy_attribute", ["`copy_`", "line 63", ".data.copy_"]),
    ("r33_b.yaml#55", "other.glibc_version_not_found", ["`GOMP_4.0`", "`libgomp.so.1`", "libwarpctc.so", "torch/lib"]),
    ("r33_b.yaml#63", "other.stft_return_complex_warning",
     ["`return_complex`", "functional.py:581", "SpectralOps.cpp:639"]),
    ("r33_c.yaml#26", "other.rnn_dropout_single_layer", ["`dropout=0.1`", "`num_layers=1`", "rnn.py:46"]),
    ("r33_c.yaml#40", "other.cuda_memory_stat_deprecated",
     ["`torch.cuda.reset_max_memory_allocated()`", "`torch.cuda.reset_peak_memory_stats()`", "memory.py:303"]),
    ("r33_c.yaml#53", "other.module_not_installed", ["PyTorch itself"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


def test_did_you_mean_of_a_module_attribute_is_named():
    diagnosis = explain_paste(corpus_message("r33_a.yaml#19"))
    assert_names(diagnosis, "other.module_has_no_attribute", ["`models`", "ICLIP_VITB16", "ACLIP_VITB16"],
                 text=said(diagnosis))


@pytest.mark.parametrize("text, rule, values", [
    # the registry's other names, with a space and without (mmdeploy#202, OccFormer#2, mmsegmentation#3711)
    ("E               KeyError: 'DistributedDataParallelWrapper is already registered in module wrapper'",
     "other.openmmlab_already_registered", ["`DistributedDataParallelWrapper`", "`module wrapper`"]),
    ("KeyError: 'MaskHungarianAssigner is already registered in bbox_assigner'",
     "other.openmmlab_already_registered", ["`MaskHungarianAssigner`", "`bbox_assigner`"]),
    # the same torchaudio wording for another SoX function (CosyVoice#65)
    ("RuntimeError: torchaudio.utils.sox_utils.set_buffer_size requires sox extension, but TorchAudio is not compiled "
     "with it. Please build TorchAudio with libsox support.", "other.torchaudio_backend_unavailable",
     ["torchaudio.utils.sox_utils.set_buffer_size"]),
    # ultralytics' other formats (ultralytics#738, #706)
    ("NotImplementedError: '.onnx' model loading not implemented", "other.ultralytics_model_format_unsupported",
     ["`.onnx`", "exported format"]),
    # fairseq's M2M-100 pair of another direction (fairseq#3044)
    ("ValueError: language pair en-ur contains languages that are not in the language dictionary; langs: "
     "['language_pairs_small_models']", "other.fairseq_lang_pair_not_in_dictionary", ["`en-ur`"]),
    # the dropout warning of other torch releases, one wrapped by a console (espnet#1780, yoruba-adr#13)
    ("/lib/python3.6/site-packages/torch/nn/modules/rnn.py:50: UserWarning: dropout option adds dropout after all but "
     "last recurrent layer, so non-zero dropout expects num_layers greater than 1, but got dropout=0.5 and num_layers=1",
     "other.rnn_dropout_single_layer", ["`dropout=0.5`", "rnn.py:50"]),
    ("/Users/iroro/anaconda3/lib/python3.6/site-packages/torch/nn/modules/rnn.py:46: \nUserWarning: dropout option adds "
     "dropout after all but last recurrent layer,\nso non-zero dropout expects num_layers greater than 1, \nbut got "
     "dropout=0.3 and num_layers=1 \"num_layers={}\".format(dropout, num_layers))",
     "other.rnn_dropout_single_layer", ["`dropout=0.3`"]),
    # the memory warning of a later torch (Whisper-WebUI#64), and the cached -> reserved rename
    (r"G:\Soft\Whisper-WebUI\venv\lib\site-packages\torch\cuda\memory.py:329: FutureWarning: "
     "torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, which resets /all/ peak "
     "memory stats.", "other.cuda_memory_stat_deprecated", ["memory.py:329"]),
    ("FutureWarning: `torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
     "other.cuda_memory_stat_deprecated", ["`torch.cuda.memory_cached`", "`torch.cuda.memory_reserved`"]),
    # Python 3's lazy map (DeepTTE#19)
    ("  File \"C:\\DeepTTE-master-2\\data_loader.py\", line 29, in __len__\n    return len(self.content)\n"
     "TypeError: object of type 'map' has no len()", "other.object_has_no_len", ["`map`", "lazy iterator"]),
    # setuptools' distutils wording for a missing nvcc, on another toolkit path
    ("error: '/usr/local/cuda-11.3/bin/nvcc' failed: No such file or directory: '/usr/local/cuda-11.3/bin/nvcc'",
     "other.nvcc_not_found", ["/usr/local/cuda-11.3/bin/nvcc"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # the registry's opposite mistake
    ("KeyError: 'CMCD is not in the models registry'", "other.openmmlab_already_registered"),
    # torch 2.0's error for the stft call is dtype.complex_view's, and the explicit-False warning is another
    ("RuntimeError: stft requires the return_complex parameter be given for real inputs, and will further require "
     "that return_complex=True in a future PyTorch release.", "other.stft_return_complex_warning"),
    ("/home/torch/functional.py:641: UserWarning: stft with return_complex=False is deprecated. In a future pytorch "
     "release, stft will return complex tensors for all inputs, and return_complex=False will raise an error.",
     "other.stft_return_complex_warning"),
    # the RNN modules' other warning
    ("/pytorch/aten/src/ATen/native/cudnn/RNN.cpp:1236: UserWarning: RNN module weights are not part of single "
     "contiguous chunk of memory. This means they need to be compacted at every call, possibly greatly increasing "
     "memory usage. To compact weights again call flatten_parameters().", "other.rnn_dropout_single_layer"),
    # None and an IterableDataset have their own rules
    ("indx = np.arange(len(self.hits), dtype=int)\nTypeError: object of type 'NoneType' has no len()",
     "other.object_has_no_len"),
    ("TypeError: object of type 'IterableDataset' has no len()", "other.object_has_no_len"),
    # a later ultralytics refusing to train an exported model
    ("TypeError: model='best.engine' should be a *.pt PyTorch model to run this method, but is a different format.",
     "other.ultralytics_model_format_unsupported"),
    # nn.Module's missing forward is not a ScriptModule's operator
    ('NotImplementedError: Module [ModuleList] is missing the required "forward" function',
     "other.scriptmodule_magic_method"),
    # libstdc++'s versions keep their own reading
    ("ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
     "/site-packages/torch/lib/libtorch_python.so)", "other.scriptmodule_magic_method"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_gomp_reading_stays_off_libstdcxx():
    diagnosis = explain_paste("ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not "
                              "found (required by /site-packages/torch/lib/libtorch_python.so)")
    assert diagnosis.rule == "other.glibc_version_not_found"
    assert "OpenMP" not in diagnosis.summary


@pytest.mark.parametrize("fixture, rule, values", [
    ("fixtures/other/rnn_dropout_single_layer.py", "other.rnn_dropout_single_layer",
     ["`dropout=0.1`", "`num_layers=1`"]),
    ("fixtures/other/cuda_memory_stat_deprecated.py", "other.cuda_memory_stat_deprecated",
     ["`torch.cuda.reset_max_memory_allocated()`", "`torch.cuda.reset_peak_memory_stats()`"]),
    ("fixtures/other/scriptmodule_magic_method.py", "other.scriptmodule_magic_method", ["`__contains__`"]),
])
def test_live_fixtures(fixture, rule, values):
    assert_names(explain_fixture(fixture), rule, values)
