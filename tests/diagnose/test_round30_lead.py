"""Round 30's readings and the shared reading its writers asked for: a read-only NumPy array's warning (`other`, with
a live fixture), Isaac Gym's and PhysX's logs said to be another program's, VS Code's notebook frames ("nb.ipynb Cell 5
in f"), a pasted statement that assigns an expression in parentheses, and the user's frame under Dynamo's "from user
code:" in pytest's report. Corpus messages verbatim from the opened rounds; near misses stay as they were."""

from __future__ import annotations

import io

import pytest

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, rules_of


def _diagnoses(text: str) -> list:
    return list(explain_stream(io.StringIO(text)))


@pytest.mark.parametrize("where, values", [
    ("r4_a.yaml#68", ["loader.py:65", "torch.from_numpy(tensor.data)"]),
    ("r30_b.yaml#5", ["torch_ops.py:65", "torch.from_numpy(np.asarray(item))"]),
])
def test_a_read_only_numpy_array_warning_names_its_place_and_call(where, values):
    diagnosis = explain_paste(corpus_message(where))
    place = f"{diagnosis.location.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{diagnosis.location.line}"
    assert_names(diagnosis, "other.numpy_not_writable", values, f"{diagnosis.summary} {place}")


def test_the_live_warning_of_a_read_only_array_is_explained_at_the_users_line():
    diagnosis = explain_fixture("fixtures/other/numpy_not_writable.py")
    assert diagnosis.rule == "other.numpy_not_writable"
    assert diagnosis.location is not None and "torch.from_numpy(image)" in diagnosis.location.code


def test_numpys_own_read_only_error_is_not_the_warning():
    assert "other.numpy_not_writable" not in rules_of("ValueError: assignment destination is read-only")


@pytest.mark.parametrize("where", ["r30_b.yaml#28", "r30_b.yaml#30", "r23_b.yaml#16", "r21_a.yaml#82"])
def test_isaac_gym_and_physx_logs_are_said_to_be_the_simulators(where):
    diagnoses = _diagnoses(corpus_message(where))
    assert all(d.rule is None for d in diagnoses)
    assert any("Isaac Gym, Omniverse or PhysX" in d.title for d in diagnoses)


def test_a_cuda_error_outside_the_simulators_log_is_still_torchs():
    text = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert rules_of(text) == ["device.illegal_memory_access"]


def test_a_vs_code_notebook_frame_gives_the_place_and_its_arrow_line():
    location = explain_paste(corpus_message("r30_b.yaml#50")).location
    assert (location.line, location.function) == (24, "DQN.take_action")
    assert location.code == "state = torch.tensor([state], dtype=torch.float).to(self.device)"
    assert location.file.endswith("DQN算法.ipynb 单元格 5")


def test_a_pasted_statement_assigning_a_parenthesised_expression_is_the_raising_line():
    diagnosis = explain_paste(corpus_message("r30_c.yaml#39"))
    assert diagnosis.facts["raised_in"]["code"].startswith("x_rope = (x_rope * self.cos_cached[:x.shape[0]])")


def test_dynamos_user_frame_under_pytests_markers_is_named():
    diagnosis = explain_paste(corpus_message("r30_c.yaml#3"))
    assert_names(diagnosis, "compile.fake_tensor_failed",
                 ["fully_sharded_data_parallel.py:838", "args, kwargs = _root_pre_forward(self, self, args, kwargs)"])
