"""Shape probes: recurrent layers and their hidden state. Each fixture raises a real torch error."""

from __future__ import annotations

from probe_helpers import culprit, explain_fixture, has_fix


def test_rnn_input_size_shows_the_batch_first_layout_and_the_transpose():
    d = explain_fixture("rnn_input_size")
    assert d.rule == "shape.rnn_input_size"
    assert culprit(d, "model.encoder")["repr"] == "LSTM(10, 32, batch_first=True)"
    assert culprit(d, "x")["shape"] == [4, 10, 20]
    assert d.facts["layout"] == "(batch=4, seq=10, features=20)"
    assert has_fix(d, "x.transpose(1, 2)` -> (4, 20, 10)")
    assert has_fix(d, "model.encoder = nn.LSTM(20, 32, batch_first=True)")


def test_gru_hidden_state_built_for_another_batch():
    d = explain_fixture("rnn_hidden_size")
    assert d.rule == "shape.rnn_hidden_size"
    assert culprit(d, "model.rnn")["repr"] == "GRU(10, 20)"
    assert culprit(d, "self.h0")["shape"] == [1, 4, 20] and culprit(d, "x")["shape"] == [5, 8, 10]
    assert has_fix(d, "`self.h0 = torch.zeros(1, x.size(1), 20)`")


def test_lstm_hidden_zero_names_h0_and_the_batch_first_dimension():
    d = explain_fixture("lstm_hidden_size")
    assert d.rule == "shape.rnn_hidden_size"
    assert d.facts["which"] == "[0]" and d.facts["batch_dim"] == 0
    assert culprit(d, "h0")["shape"] == [1, 4, 20]
    assert "hidden[0] must be (1, 8, 20), but h0 is (1, 4, 20)" in d.summary
    assert has_fix(d, "`h0 = torch.zeros(1, x.size(0), 20)`")
