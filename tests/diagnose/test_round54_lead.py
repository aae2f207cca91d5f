"""Round-54 wording the lead wrote a rule for (Hydra's compose() before any initialization, in a copy of SAM 2's build
code): the corpus message is claimed from its text alone with the values it holds, another wording from a cited thread
too, and the opposite error (a second initialization) stays unclaimed."""

from __future__ import annotations

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


def test_compose_before_initialization_is_explained_with_the_call_that_made_it():
    diagnosis = explain_paste(corpus_message("r54_c.yaml#53"))
    assert_explained(diagnosis, "other.hydra_not_initialized", ['build_fsmedsam2.py", line 108', "compose"])
    assert_names(diagnosis, "other.hydra_not_initialized",
                 ["build_fsmedsam2.py:108 in build_fsmedsam2_video_predictor",
                  "`cfg = compose(config_name=config_file, overrides=hydra_overrides)`", "sam2/__init__.py"])


def test_the_bare_line_is_explained_without_a_place():
    # https://github.com/facebookresearch/sam2/issues/721 (a comment's one line)
    diagnosis = explain_paste(": GlobalHydra is not initialized, use @hydra.main() or call one of the hydra "
                              "initialization methods first")
    assert_names(diagnosis, "other.hydra_not_initialized", ["initialize_config_module", "@hydra.main"])
    assert "called at" not in diagnosis.summary


def test_a_second_initialization_is_not_this_rules():
    # https://github.com/chflame163/ComfyUI_LayerStyle_Advance/issues/22
    assert_left_alone("!!! Exception during processing !!! GlobalHydra is already initialized, call "
                      "GlobalHydra.instance().clear() if you want to re-initialize", "other.hydra_not_initialized")
