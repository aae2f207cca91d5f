"""Round 34's readings and the shared changes of its writing: a frame line whose function markdown ate (`line 14, in`
and nothing after it, between curly quotes), a rich traceback's frame line pasted without its box, diffusers' log that
it falls back to pickle (a control) apart from transformers' missing weights, a log level in brackets not taken for
the program's own words before a cuDNN Frontend error, and torch 2.13's checkpoint error for a recomputation that saves
more tensors than the forward pass. Corpus messages verbatim from the opened rounds; the checkpoint error raised live."""

from __future__ import annotations

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, place, rules_of

from explainer.diagnose.textframes import RichBox, frame_match


def test_a_frame_whose_function_markdown_ate_is_still_a_frame():
    # text-generation-webui#1205: `<module>` taken for an HTML tag, curly quotes from the editor
    line = "File “/home/murillo/text-generation-webui/modules/GPTQ_loader.py”, line 14, in"
    frame = frame_match(line)
    assert (frame.file, frame.line, frame.func) == ("/home/murillo/text-generation-webui/modules/GPTQ_loader.py", 14, "")
    diagnosis = explain_paste(corpus_message("r34_c.yaml#22"))
    assert_names(diagnosis, "other.module_not_installed", ["llama_inference_offload"])
    assert place(diagnosis.location)[:2] == ("GPTQ_loader.py", 14)


def test_a_rich_frame_line_pasted_without_its_box_places_the_error():
    # FastChat#576: "FastChat/fastchat/serve/inference.py:132 in load_model" with the box's edges gone
    diagnosis = explain_paste(corpus_message("r34_c.yaml#33"))
    assert diagnosis.rule == "device.meta_tensor_copy"
    assert (*place(diagnosis.location)[:2], diagnosis.location.function) == ("inference.py", 132, "load_model")


def test_a_log_line_naming_a_file_and_line_in_prose_is_not_a_frame():
    # Dynamo's log (modern.yaml#66): "... Restarting analysis due to _dynamo/symbolic_convert.py:146 in f" is prose
    line = next(line for line in corpus_message("modern.yaml#66").splitlines() if "Restarting analysis" in line)
    assert line.endswith("symbolic_convert.py:146 in fail_and_restart_analysis")
    assert RichBox().unbox(line) is None
    # r34_c#33's first line (FastChat#576), as pasted
    assert RichBox().unbox("FastChat/fastchat/serve/inference.py:132 in load_model ") == \
        '  File "FastChat/fastchat/serve/inference.py", line 132, in load_model'


def test_diffusers_fallback_log_is_not_a_missing_weights_failure():
    assert set(rules_of(corpus_message("r34_c.yaml#66"))) <= {None}
    assert_names(explain_paste(corpus_message("r12_b.yaml#41")), "data.hf_no_weights_file",
                 ["pytorch_model.bin", "gpt4-x-alpaca-13b-native-4bit-128g"])


def test_a_bracketed_log_level_is_not_the_programs_own_words():
    # fluxgym#118: "[2024-09-21 18:10:18] [INFO] RuntimeError: cuDNN Frontend error: ..."
    diagnosis = explain_paste(corpus_message("r16_b.yaml#27"))
    assert diagnosis.rule == "device.cudnn_frontend_error"
    assert "caller_said" not in diagnosis.facts
    # a caller's own words before the error are still quoted (fluxgym#118's sibling, r16_b#29)
    assert explain_paste(corpus_message("r16_b.yaml#29")).facts["caller_said"] == "Error generating image with UNO"


def test_live_checkpoint_recomputation_that_saves_more_tensors():
    diagnosis = explain_fixture("fixtures/autograd/checkpoint_more_saved.py")
    assert_names(diagnosis, "autograd.checkpoint_metadata",
                 ["trying to save more tensors during recomputation", "set_checkpoint_early_stop(False)"])
