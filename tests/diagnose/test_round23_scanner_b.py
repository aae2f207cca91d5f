"""Round 23, the engine (second part): a CI's time stamp on every line (Jenkins' timestamper), Python logging's
"name line:N LEVEL:" layout, an error printed above its traceback (Chainer's trainer), pdb's "> file(31)func()" /
"-> code" frame, a frame line broken after its file, a statement typed at pdb's prompt, the way in from another
library into a library that raised by itself, and the judge's reading of pdb's and IPython's frame spellings."""

from __future__ import annotations

import io

from conftest import benchmark_module
from explainer.cli.explain import explain_stream
from explainer.diagnose.loglines import clean_line_record
from explainer.diagnose.render import render_text
from explainer.diagnose.sourceplaces import logged_source
from explainer.diagnose.textframes import frame_match

COVERAGE = benchmark_module("coverage")
CORPUS = {e.where: e for e in COVERAGE.load_corpus() if not e.held_out}


def _answer(text: str):
    return next(d for d in explain_stream(io.StringIO(text)) if d.rule is not None)


def _place(location) -> tuple[str, int, str]:
    return location.file.replace("\\", "/").rsplit("/", 1)[-1], location.line, location.code


# --- Jenkins' timestamper: "10:08:34  " before every line -------------------------------------------------------------

def test_a_time_stamp_alone_is_taken_off_every_line_and_the_indent_after_it_kept():
    lines = CORPUS["r23_b.yaml#92"].message.splitlines()  # Project-MONAI/tutorials#797 (Jenkins)
    assert clean_line_record(lines[0])[:3] == ("RuntimeError: Caught RuntimeError in DataLoader worker process 0.", None,
                                               False)
    assert clean_line_record(lines[2])[0].startswith('  File "/home/jenkins/')
    assert clean_line_record(lines[3])[0].startswith("    return [_apply_transform(")
    assert clean_line_record(lines[-1])[0] == "KeyError: None"
    assert clean_line_record("10:08:34  ")[0] == ""


def test_the_worker_error_under_time_stamps_is_named_and_its_code_shown_without_them():
    diagnosis = _answer(CORPUS["r23_b.yaml#92"].message)
    assert diagnosis.rule == "data.worker_error"
    assert "KeyError: None" in diagnosis.summary
    assert _place(diagnosis.location) == ("array.py", 196,
                                          "out: NdarrayOrTensor = convert_to_tensor(img[None], track_meta=get_track_meta())")
    assert "10:08:34" not in render_text(diagnosis)


def test_a_time_in_a_message_is_not_a_prefix():
    # https://github.com/tunib-ai/parallelformers/issues/54 ("timeout=0:30:00", "[10/15/23 12:57:26]") and
    # https://github.com/Buzz-Beater/LEMMA/issues/5 ("Got NaN losses 2021-10-28 23:20:46.797813")
    for where in ("r14_a.yaml#70", "r22_a.yaml#21"):
        line = next(x for x in CORPUS[where].message.splitlines() if x.startswith("RuntimeError: "))
        assert clean_line_record(line)[0] == line


# --- Python logging's "%(asctime)s %(name)s line:%(lineno)d %(levelname)s: %(message)s" ------------------------------

def test_python_logging_layout_with_the_line_is_taken_off_and_its_place_kept():
    line = CORPUS["r23_b.yaml#97"].message.splitlines()[0]  # hirofumi0810/neural_sp#229
    cleaned, _, new_record, source, _ = clean_line_record(line)
    assert (cleaned, new_record, source) == ("NaN or Inf found in input tensor.", True, "root line:14")
    assert logged_source("root line:14") == ("logged_from", {"file": "root line", "line": 14, "function": "", "code": ""})
    # the layout without the line: no place (https://github.com/Comfy-Org/ComfyUI/issues/6073)
    logged = next(x for x in CORPUS["r10_b.yaml#4"].message.splitlines() if " - root - ERROR - " in x)
    assert clean_line_record(logged)[3] == ""


def test_the_line_python_logging_named_reaches_the_diagnosis():
    diagnosis = _answer(CORPUS["r23_b.yaml#97"].message)
    assert diagnosis.rule == "numerics.tensorboard_nonfinite"
    assert "logged from root line:14" in render_text(diagnosis)


# --- an error printed above its traceback --------------------------------------------------------------------------

def test_chainers_error_above_its_traceback_is_placed_by_that_traceback():
    diagnosis = _answer(CORPUS["r23_b.yaml#35"].message)  # espnet/espnet#3548
    assert diagnosis.rule == "device.cublas_status"
    assert _place(diagnosis.location) == ("asr.py", 209, "loss.backward()")
    assert diagnosis.location.function == "update_core"


# --- pdb -------------------------------------------------------------------------------------------------------------

def test_pdbs_place_is_a_frame():
    # rtqichen/torchdiffeq#72: pdb's "> path(line)function()", once after a code fence and once alone
    lines = CORPUS["r22_b.yaml#55"].message.splitlines()
    assert lines[0].startswith("```> /home/") and lines[4].startswith("> /home/")
    for line in (lines[0], lines[4]):
        frame = frame_match(line)
        assert (frame.file.rsplit("/", 1)[-1], frame.line, frame.func) == ("adjoint.py", 31, "backward")
        assert frame.file.startswith("/home/tudockho/")


def test_the_place_pdb_stopped_under_an_error_is_its_location_with_the_line_pdb_showed():
    diagnosis = _answer(CORPUS["r22_b.yaml#55"].message)  # rtqichen/torchdiffeq#72
    assert diagnosis.rule == "autograd.inplace_modified"
    assert _place(diagnosis.location) == ("adjoint.py", 31, "t, flat_params, *ans = ctx.saved_tensors")
    assert diagnosis.location.function == "backward"


def test_a_statement_typed_at_pdbs_prompt_is_the_errors_statement():
    diagnosis = _answer(CORPUS["r23_b.yaml#70"].message)  # Project-MONAI/MONAI#5844: "*** TypeError" under it
    assert diagnosis.rule == "shape.tensor_as_index"
    assert diagnosis.facts["raised_in"] == {"file": "", "line": 0, "function": "", "code": "x[slice(0, 64, None), ...]"}
    assert "x[slice(0, 64, None), ...]" in render_text(diagnosis)


# --- a frame line broken after its file ----------------------------------------------------------------------------

def test_a_frame_line_broken_after_its_file_is_joined():
    diagnosis = _answer(CORPUS["r23_b.yaml#8"].message)  # meta-pytorch/torchrec#770
    assert diagnosis.rule == "other.torch_op_not_registered"
    raised = diagnosis.facts["raised_in"]
    assert (raised["file"].rsplit("/", 1)[-1], raised["line"], raised["function"]) == ("_ops.py", 505, "__getattr__")


# --- the way in from another library ---------------------------------------------------------------------------------

def test_a_library_that_raised_by_itself_is_entered_through_the_library_that_called_it():
    diagnosis = _answer(CORPUS["r22_b.yaml#20"].message)  # speechbrain/speechbrain#948
    via = diagnosis.facts["called_via"]
    assert (via["file"].replace("\\", "/").rsplit("/", 1)[-1], via["line"]) == ("dataio.py", 26)
    assert via["code"] == "torchaudio.set_audio_backend(torchaudio_backend)"
    assert diagnosis.facts["raised_in"]["function"] == "set_audio_backend"


# --- the judge -------------------------------------------------------------------------------------------------------

def test_the_judge_reads_pdbs_and_ipythons_frame_spellings_as_the_place_stated():
    named = COVERAGE.value_named
    assert named("adjoint.py(31)", "at /x/torchdiffeq/_impl/adjoint.py:31 in backward")
    assert not named("adjoint.py(31)", "at /x/adjoint.py:310 in backward")
    assert named("core.py in transpose", "at /x/namedtensor/core.py:134 in transpose   tensor = ...")
    assert not named("core.py in transpose", "at /x/namedtensor/core.py:134 in transposed")
    assert not named("core.py in transpose", "at /x/mycore.py:134 in transpose")
    for where in ("r22_b.yaml#55", "r19_b.yaml#20", "r23_b.yaml#35", "r23_b.yaml#92", "r23_b.yaml#97"):
        assert COVERAGE.judge(CORPUS[where]).outcome == "explained", where
