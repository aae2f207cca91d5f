"""Round-56 wordings from the logging and metrics side (wandb's image conversion, a fastai callback of neptune, a
markdown-mangled jit trace assertion, Habitat's CUPTI tracer without counter permissions, memory_snapshot's pool id
refused by an older compiled torch, ptflops and torch_flops failing to count, the implicit-gradient and
scalar-conversion wordings quoted): each corpus message (verbatim from the opened rounds) is claimed, from its text
alone, by the right rule with the values it holds named the way the coverage judge reads them; other wordings of the
same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r56_c.yaml#37", "other.object_has_no_attribute", ["NeptuneCallback", "before_fit", "'DynamicUnet'", "_optimizer_name"]),
    ("r56_c.yaml#39", "compile.trace_none_submodule", ["isinstance(orig, torch.nn.Module)", "line 1710"]),
    ("r56_c.yaml#40", "autograd.non_scalar_backward", ["grad can be implicitly created only for scalar outputs"]),
    ("r56_c.yaml#48", "shape.wandb_image_unsupported_shape", ["[16, 1, 17, 16]", "guess_mode", 'trainer.py", line 433']),
    ("r56_c.yaml#49", "shape.wandb_image_unsupported_shape", ["[224, 9, 224]"]),
    ("r56_c.yaml#54", "other.cupti_tracer_insufficient_privileges",
     ["CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", "cuptiActivityRegisterCallbacks", "cupti_tracer.cpp:120"]),
    ("r56_c.yaml#55", "memory.memory_snapshot_mempool_id", ["mempool_id", "memory_snapshot", 'memory.py", line 622']),
    ("r56_c.yaml#59", "other.ptflops_estimation_failed", ["imgs", "<class 'NoneType'>", 'query_support.py", line 339']),
    ("r56_c.yaml#61", "shape.scalar_conversion", ["only one element tensors can be converted to Python scalars"]),
    ("r56_c.yaml#67", "other.torch_flops_unsupported_result",
     ["<class 'torch.Size'>", "FunctionFLOPs_elemwise", 'flops_ops.py", line 200']),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # neptune-fastai's _optimizer_name read opt_func.__name__, which a functools.partial lacks; fastai's delegation
    # to the Learner and then the model put the model's class in the message
    diagnosis = explain_paste(corpus_message("r56_c.yaml#37"))
    assert_names(diagnosis, "other.object_has_no_attribute",
                 ["names the model ('DynamicUnet')", "functools.partial", "neptune-fastai 1.1.1"])
    assert any("opt_func.__name__ = 'Adam'" in fix for fix in diagnosis.fixes)
    # a batch of 16 one-channel images: wandb read 16 as the channel count
    assert_names(explain_paste(corpus_message("r56_c.yaml#48")), "shape.wandb_image_unsupported_shape",
                 ["16 images of 1 x 17 x 16", "read 16 as the channel count"])
    # openpi's (H, W, C) frames permuted as (C, H, W), three views joined on that axis
    assert_names(explain_paste(corpus_message("r56_c.yaml#49")), "shape.wandb_image_unsupported_shape",
                 ["`permute(1, 2, 0)`", "3 RGB views"])
    assert_names(explain_paste(corpus_message("r56_c.yaml#54")), "other.cupti_tracer_insufficient_privileges",
                 ["Habitat's own CUPTI tracer", "NVreg_RestrictProfilingToAdminUsers"])
    # the Python side passed (0, 0, include_traces); the compiled side of an older build takes two integers
    assert_names(explain_paste(corpus_message("r56_c.yaml#55")), "memory.memory_snapshot_mempool_id",
                 ["(0, 0, include_traces)", "different commits", "Your code passed nothing wrong"])
    assert_names(explain_paste(corpus_message("r56_c.yaml#59")), "other.ptflops_estimation_failed",
                 ["returned `(None, None)`", "forward_dummy", "`imgs`, which arrived as NoneType"])
    assert_names(explain_paste(corpus_message("r56_c.yaml#67")), "other.torch_flops_unsupported_result",
                 ["arithmetic on shapes", "It costs no FLOPs"])


@pytest.mark.parametrize("text, rule, values", [
    # an older wandb turning a matplotlib figure into a channels-first array (wandb/wandb#393)
    ("ValueError: Un-supported shape for image conversion [3, 288, 432]",
     "shape.wandb_image_unsupported_shape", ["[3, 288, 432]", "The channels (3) come first", "moved last"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # PIL refusing an array in an older wandb (wandb/wandb#202): not guess_mode's check
    ("ValueError: Too many dimensions: 3 > 2.", "shape.wandb_image_unsupported_shape"),
    # PaddlePaddle's own tracer (PaddlePaddle/Paddle#35857) and TensorFlow's (tensorflow/serving#1718)
    ("/paddle/paddle/fluid/platform/device_tracer.cc:131: error: function dynload::cuptiActivityEnable("
     "CUPTI_ACTIVITY_KIND_MEMCPY) failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.",
     "other.cupti_tracer_insufficient_privileges"),
    ("2020-11-04 10:50:50.925046: E external/org_tensorflow/tensorflow/core/profiler/internal/gpu/cupti_tracer.cc:1441] "
     "function cupti_interface_->Subscribe( &subscriber_, (CUpti_CallbackFunc)ApiCallback, this)failed with error "
     "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", "other.cupti_tracer_insufficient_privileges"),
    # Habitat's profiler session failing on a driver its CUPTI does not support (geoffxy/habitat#10): not permissions
    ("error: function cuptiProfilerBeginSession(&begin_session_params) failed with error CUPTI_ERROR_UNKNOWN",
     "other.cupti_tracer_insufficient_privileges"),
    # the model's own error line without ptflops' report around it (wangchen1801/FPD#27)
    ("TypeError: imgs must be a list, but got <class 'NoneType'>", "other.ptflops_estimation_failed"),
    # torch_flops' bare error line, without the formula's frame (zugexiaodui/torch_flops#15)
    ("TypeError: <class 'torch.Size'>", "other.torch_flops_unsupported_result"),
    # fastai's wrapper around AutoGluon's NaN-loss assertion (autogluon/autogluon#4508): not an attribute lookup
    ("AssertionError: Exception occured in `EarlyStoppingCallbackWithTimeLimit` when calling event `after_epoch`:\n"
     "\tWARNING: NaN loss encountered in epoch 0!", "other.object_has_no_attribute"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_fastai_wrapper_keeps_autogluon_reading():
    text = ("AssertionError: Exception occured in `EarlyStoppingCallbackWithTimeLimit` when calling event `after_epoch`:\n"
            "\tWARNING: NaN loss encountered in epoch 0!")
    assert explain_paste(text).rule == "numerics.autogluon_fastai_nan_loss"
