"""Round 33's readings and the shared changes its writers asked for: a CUDA program's own "Cuda failure" check stays
unclaimed, the DataLoader iterator's missing `.next()` is answered by the data rule, and a stack error whose second
entry was cut from the paste is still read. Corpus messages verbatim from the opened rounds."""

from __future__ import annotations

from conftest import claimed_by, corpus_message, explain_paste


def test_a_cuda_programs_own_check_is_not_claimed():
    assert claimed_by(corpus_message("r33_c.yaml#69")) == []


def test_torchs_own_no_kernel_image_is_still_claimed_after_that_change():
    pasted = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    assert explain_paste(pasted).rule == "device.no_kernel_image"


def test_the_dataloader_iterators_missing_next_is_the_data_rules():
    for where in ("r33_c.yaml#60", "r33_c.yaml#61", "r33_c.yaml#62"):
        assert explain_paste(corpus_message(where)).rule == "data.dataloader_iter_next"


def test_a_stack_error_cut_after_the_second_size_is_still_read():
    diagnosis = explain_paste(corpus_message("r33_c.yaml#68"))
    assert diagnosis.rule == "shape.stack_sizes"
    assert "entry 0 is [3, 48, 48]" in diagnosis.summary and "is [3, 47, 43]" in diagnosis.summary
    assert "its index cut from the paste" in diagnosis.summary


def test_a_whole_stack_error_still_names_both_entries():
    pasted = ("RuntimeError: stack expects each tensor to be equal size, but got [3, 48, 48] at entry 0 and "
              "[3, 47, 43] at entry 5")
    assert "entry 5 is [3, 47, 43]" in explain_paste(pasted).summary


def test_an_extension_not_compiled_with_gpu_names_its_library_or_a_cut_ops_name():
    diagnosis = explain_paste(corpus_message("r33_a.yaml#14"))
    assert diagnosis.rule == "other.extension_not_compiled_gpu"
    assert "`RROIAlign_forward` (" in diagnosis.summary and "_C.cpython-36m-x86_64-linux-gnu.so" in diagnosis.summary
    assert "`ROIAlign_forward`" in explain_paste(corpus_message("r33_a.yaml#16")).summary
