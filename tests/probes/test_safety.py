"""Live inspection is bounded and read-only: odd tensors, hostile objects, huge models, no leaks."""

from __future__ import annotations

import gc
import time
import warnings
import weakref

import pytest
import torch
from torch import nn

import explainer
from explainer._inspect import describe_tensor
from explainer.diagnose.render import render_text
from explainer.rules.base import default_rulebase


def _odd_tensors() -> dict[str, torch.Tensor]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "sparse": torch.eye(3).to_sparse(),
            "csr": torch.eye(3).to_sparse_csr(),
            "complex": torch.zeros(2, dtype=torch.complex64),
            "huge_meta": torch.empty(10**6, 10**6, device="meta"),
            "quantized": torch.quantize_per_tensor(torch.zeros(4), 0.1, 0, torch.qint8),
            "nested": torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)]),
        }


def test_odd_tensors_are_described_without_values():
    described = {name: describe_tensor(name, t) for name, t in _odd_tensors().items()}
    assert described["sparse"]["layout"] == "sparse_coo" and described["sparse"]["shape"] == [3, 3]
    assert described["csr"]["layout"] == "sparse_csr"
    assert described["complex"]["dtype"] == "complex64"
    assert described["huge_meta"]["shape"] == [10**6, 10**6] and described["huge_meta"]["device"] == "meta"
    assert described["quantized"]["dtype"] == "qint8"
    assert described["nested"]["shape"] is None and described["nested"]["ndim"] == 2
    assert "ragged, 2 dims" in render_text(explainer.Diagnosis(
        rule="x.y", category="other", title="t", summary="s", culprits=[described["nested"]]))


def test_tensor_subclass_torch_function_is_never_called():
    calls = []

    class Tracked(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func)
            raise RuntimeError("user code ran")

    tensor = torch.zeros(2, 5).as_subclass(Tracked)
    described = describe_tensor("t", tensor)
    assert described["shape"] == [2, 5] and described["type"] == "Tracked"
    assert calls == []


class Hostile(nn.Module):
    """Every way a user object could run code when looked at."""

    touched: list[str] = []
    armed = False  # only what happens after the error counts: the forward itself reads self.fc

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    @property
    def secret(self):
        Hostile.touched.append("property") if Hostile.armed else None
        raise RuntimeError("property ran")

    def __repr__(self):
        Hostile.touched.append("repr") if Hostile.armed else None
        return "never"

    def __getattr__(self, name):
        if Hostile.armed:
            Hostile.touched.append(f"getattr {name}")
        if name == "hang":
            time.sleep(30)
        return super().__getattr__(name)

    def forward(self, x):
        return self.fc(x.view(x.shape[0], -1)) + self.secret


def test_hostile_user_objects_are_never_touched():
    default_rulebase()  # the time limit is on reading the live objects, not on a first build of the rule index
    model = Hostile()
    Hostile.touched.clear()
    images = torch.randn(4, 3, 4)
    try:
        model(images)
    except RuntimeError as exc:
        Hostile.armed = True
        started = time.monotonic()
        try:
            diagnosis = explainer.explain(exc)
        finally:
            Hostile.armed = False
    assert time.monotonic() - started < 5
    assert Hostile.touched == []
    assert diagnosis.rule == "shape.matmul"
    assert diagnosis.culprits[0]["name"] == "model.fc" and diagnosis.culprits[0]["repr"].startswith("Linear(")
    assert diagnosis.culprits[1]["name"] == "x.view(x.shape[0], -1)" and diagnosis.culprits[1]["shape"] == [4, 12]


def test_model_with_ten_thousand_modules_is_named_quickly():
    default_rulebase()
    blocks = nn.Sequential(*[nn.Sequential(nn.Identity(), nn.Identity()) for _ in range(3333)])
    model = nn.Sequential(blocks, nn.Linear(16, 4))
    assert sum(1 for _ in model.modules()) > 10_000
    try:
        model(torch.randn(2, 8))
    except RuntimeError as exc:
        started = time.monotonic()
        diagnosis = explainer.explain(exc)
    assert time.monotonic() - started < 5
    assert diagnosis.culprits[0]["name"] == "model.1"


def test_frame_holding_a_hundred_thousand_tensors_stays_bounded():
    many = [torch.zeros(1) for _ in range(100_000)]
    head = nn.Linear(3, 1)
    try:
        head(torch.zeros(5, 2))
    except RuntimeError as exc:
        started = time.monotonic()
        diagnosis = explainer.explain(exc)
    assert time.monotonic() - started < 5
    assert diagnosis.rule == "shape.matmul" and len(many) == 100_000


def test_no_frame_or_tensor_is_kept_alive_after_the_report():
    def fail():
        big = torch.zeros(256, 1024)
        layer = nn.Linear(7, 1)
        try:
            layer(big)
        except RuntimeError as exc:
            return exc, weakref.ref(big)

    exc, big_ref = fail()
    diagnosis = explainer.explain(exc)
    assert diagnosis.culprits[1]["shape"] == [256, 1024]
    del exc
    gc.collect()
    assert big_ref() is None, "the explainer kept a reference to a live tensor"


@pytest.mark.parametrize("values", [torch.full((4, 9), 424242.0), torch.arange(36.0).view(4, 9) + 9191.5])
def test_tensor_values_never_appear_in_any_format(values):
    layer = nn.Linear(3, 1)
    try:
        layer(values)
    except RuntimeError as exc:
        diagnosis = explainer.explain(exc)
    text = render_text(diagnosis) + diagnosis.to_json()
    for marker in ("424242", "9191", "9192"):
        assert marker not in text


def test_templates_cannot_reach_python_internals():
    from explainer.rules.templates import render

    facts = {"message": "RuntimeError: x", "n": 3}
    for hostile in ("{{ message.__class__.__mro__[1].__subclasses__() }}",
                    "{{ ''.__class__.__base__.__subclasses__() }}",
                    "{{ n.__class__.__init__.__globals__ }}",
                    "{% for c in ().__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}"):
        assert render(hostile, facts) in (None, ""), hostile


def test_explaining_opens_no_network_connection(monkeypatch):
    import socket

    from conftest import raise_fixture

    def refuse(*args, **kwargs):
        raise AssertionError("the explainer tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for fixture in ("fixtures/shape/linear_in_features.py", "fixtures/device/input_not_moved.py",
                    "fixtures/dtype/linear_double_numpy.py"):
        diagnosis = explainer.explain(raise_fixture(fixture))
        assert diagnosis.rule is not None
    assert explainer.explain_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB").rule


class DictProperty:
    """A class that defines `__dict__` itself: reading an instance's table through it runs the class's code."""

    read: list[str] = []

    @property
    def __dict__(self):
        DictProperty.read.append("__dict__")
        return {"steps": 1}


def test_a_class_defining_its_own_dict_is_never_read_through_it():
    from explainer._inspect import MISSING, instance_dict, safe_getattr

    spy = DictProperty()
    DictProperty.read.clear()
    assert instance_dict(spy) is None and safe_getattr(spy, "steps") is MISSING
    try:
        spy.step_count  # AttributeError: the generic attribute rule's probes look at spy's names and class
    except AttributeError as exc:
        diagnosis = explainer.explain(exc)
    assert DictProperty.read == []
    assert diagnosis.rule == "other.object_has_no_attribute" and "DictProperty" in diagnosis.summary
    # plain objects, modules and nn.Modules keep their tables
    assert instance_dict(nn.Linear(2, 2))["_parameters"].keys() == {"weight", "bias"}
    assert instance_dict(torch) is not None and instance_dict(3) is None
