"""Round 14 data and distributed rules, and the negative controls they must leave alone. Real torch calls where CPU
torch raises the error (a backend no package registered, torch.load of an empty file against pickle.load of one);
elsewhere the messages as pasted in their threads (detectron2's checkpointer, legacy torchtext, NCCL's shared-memory
warnings, multiprocessing's spawn, the Lua Torch, CNTK and CUDA-samples messages that read like PyTorch's)."""

from __future__ import annotations

import io
import pickle
import tempfile

import pytest
import torch
import torch.distributed as dist

import explainer
from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, raised


def said(d) -> str:
    return " ".join([d.summary, *d.fixes])


# --- raised by real torch calls --------------------------------------------------------------------

def test_a_subgroup_on_an_unregistered_backend_names_it_and_the_package():
    d = explain_fixture("fixtures/distributed/c10d_unknown_backend.py")
    assert_names(d, "distributed.c10d_unknown_backend", ["no backend named HCCL", "torch_npu"])
    assert any("import torch_npu" in fix for fix in d.fixes), d.fixes


@pytest.mark.filterwarnings("ignore:Device capability of hccl unknown")
def test_init_process_group_on_an_unregistered_backend_is_read_under_torchs_frame():
    # torch >= 2.9 words the bare-name case "Unknown backend type hccl": claimed only under distributed_c10d.py
    with tempfile.TemporaryDirectory() as tmp:
        exc = raised(lambda: dist.init_process_group("hccl", init_method=f"file://{tmp}/store", rank=0,
                                                     world_size=1))
    assert not dist.is_initialized()
    assert_names(explainer.explain(exc), "distributed.c10d_unknown_backend", ["no backend named hccl"])
    assert explain_stream(io.StringIO("AssertionError: Unknown backend type hccl\n"))[0].rule is None


def test_torch_load_of_an_empty_file_is_claimed_and_pickle_load_of_one_is_not(tmp_path):
    path = tmp_path / "epoch_3.pt"
    path.write_bytes(b"")
    d = explainer.explain(raised(lambda: torch.load(path, weights_only=False)))
    assert_names(d, "data.pickle_ran_out_of_input", [str(path), "0 bytes"])
    # the same EOFError from the user's own pickle.load: not a PyTorch failure
    assert explainer.explain(raised(lambda: pickle.load(io.BytesIO(b"")))).rule is None


# --- data: pasted in their threads ---------------------------------------------------------------

@pytest.mark.parametrize("where, values", [
    ("r14_a.yaml#5", ["./ckpts/model_final_dfa862.pkl", "relative path", "cfg.MODEL.WEIGHTS"]),
    ("r14_a.yaml#6", ["/checkpoints/model_final.pth", "cfg.train.init_checkpoint"]),
])
def test_detectron2_checkpoint_not_found_names_path_and_config_key(where, values):
    d = explain_paste(corpus(where))
    assert_names(d, "data.fvcore_checkpoint_not_found", values, said(d))


def test_a_detectron2_url_that_was_not_fetched_is_told_apart_from_a_missing_file():
    d = explain_paste("AssertionError: Checkpoint detectron2://ImageNetPretrained/MSRA/R-50.pkl not found!")
    assert_names(d, "data.fvcore_checkpoint_not_found", ["detectron2://ImageNetPretrained/MSRA/R-50.pkl",
                                                           "download failed", "https://dl.fbaipublicfiles.com"],
                 said(d))


def test_torchtext_fields_without_vocab():
    d = explain_paste(corpus("r14_a.yaml#9"))
    assert_names(d, "data.torchtext_field_no_vocab", ["TextMultiField", "base_field.vocab"])
    assert d.location.code == "enc_vocab = fields['src'][0][1].vocab"
    d = explain_paste(corpus("r14_a.yaml#10"))
    assert_names(d, "data.torchtext_field_no_vocab", ["'Field' object has no attribute 'vocab'", "build_vocab"])


def test_torchtext_example_without_the_fields_attribute_needs_torchtexts_frames():
    d = explain_paste(corpus("r14_a.yaml#11"))
    assert_names(d, "data.torchtext_example_attribute", ["build_vocab", "'Example' object has no attribute 'text'"])
    # alone, without torchtext's frames: not the torchtext rule, only Python's generic reading
    [bare] = explain_stream(io.StringIO("AttributeError: 'Batch' object has no attribute 'text'\n"))
    assert bare.rule == "other.object_has_no_attribute"


def test_empty_checkpoint_named_by_the_scripts_print_with_its_whole_path():
    d = explain_paste(corpus("r14_a.yaml#63"))
    assert_names(d, "data.pickle_ran_out_of_input", ["ckpt/global/UTK/train/fold0/utk_train.pth", "torch.load"])


def test_a_spawned_child_that_read_nothing_names_spawn_main_and_the_parents_error():
    d = explain_paste(corpus("r14_a.yaml#65"))
    assert_names(d, "data.pickle_ran_out_of_input", ["spawn_main", "Can't pickle local object"])
    assert not any("checkpoint" in fix for fix in d.fixes), d.fixes


def test_sampler_of_an_empty_dataset_names_the_sampler_dataloader_built():
    d = explain_paste(corpus("r14_a.yaml#61"))
    assert_names(d, "data.sampler_empty_dataset", ["num_samples=0", "RandomSampler(dataset, generator=generator)",
                                                    "shuffle=True"])


def test_ancdata_traceback_without_its_error_line():
    d = explain_paste(corpus("r14_a.yaml#37"))
    assert_names(d, "data.too_many_open_files", ["reduction.py:164", "recv_handle", "received 0 items of ancdata"])


def test_torchaudio_no_backend_logged_by_a_tool_that_skips_the_file():
    d = explain_paste(corpus("r14_b.yaml#57"))
    assert_names(d, "other.torchaudio_backend_unavailable", ["BAC009S0764W0402.wav", "format None"])


# --- distributed: pasted in their threads --------------------------------------------------------

def test_nccl_shm_open_permission_denied_is_not_a_full_dev_shm():
    d = explain_paste(corpus("r14_a.yaml#28"))
    assert_names(d, "distributed.nccl_shared_memory", ["Permission denied", "include/shm.h:27",
                                                        "nccl-shm-recv-b7948f403864987a-0-3-0", "not a lack of space"])
    assert "chmod 1777 /dev/shm" in d.fixes[0], d.fixes


def test_store_based_barrier_quotes_its_counts():
    d = explain_paste(corpus("r14_a.yaml#70"))
    assert_names(d, "distributed.rendezvous_timeout", ["(world_size=8, worker_count=9, timeout=0:30:00)",
                                                        "9 processes registered", "two jobs share the same store"])


def test_ddp_of_a_frozen_module_names_the_wrapped_variable_and_the_old_assertion():
    d = explain_paste(corpus("r14_a.yaml#73"))
    assert_names(d, "distributed.ddp_no_trainable_params", ["`DDP(unet, ...)`", "`unet`"])
    d = explain_paste(corpus("r14_a.yaml#71"))
    assert_names(d, "distributed.ddp_no_trainable_params", ["AssertionError", "older releases asserted it"])


def test_nccl_watchdog_timeout_quotes_how_long_it_ran():
    d = explain_paste(corpus("r14_b.yaml#37"))
    assert_names(d, "distributed.nccl_timeout", ["ran for 600026 milliseconds", "Timeout(ms)=600000", "rank 7"])


def test_ddp_ready_twice_of_torch_1x_repeats_its_own_advice():
    d = explain_paste(corpus("r14_b.yaml#67"))
    assert d.rule == "distributed.ddp_ready_twice"
    assert "`find_unused_parameters=False`" in d.fixes[0], d.fixes


def test_split_group_under_a_device_qualified_parent():
    d = explain_paste(corpus("r14_b.yaml#68"))
    assert_names(d, "distributed.c10d_unknown_backend", ["`split_group`", "cuda:nccl", "CUDA:NCCL"])
    assert any('backend="nccl"' in fix for fix in d.fixes), d.fixes
    assert d.facts["raised_in"]["line"] == 4844


def test_torchrun_failure_after_a_bare_eoferror_is_the_launchers_report():
    d = explain_paste(corpus("r7_b.yaml#51"))
    assert d.rule == "distributed.child_failed"
    assert d.facts["consequence_of"]["error"] == "EOFError: Ran out of input"


# --- negative controls: other programs' messages -------------------------------------------------

@pytest.mark.parametrize("where", [
    "r14_a.yaml#27",   # Lua Torch's THCUNN kernel assertion
    "r14_a.yaml#54",   # the CUDA samples' bandwidthTest
    "r14_a.yaml#64",   # pickle.load of a dataset's own file
    "r14_a.yaml#69",   # CNTK's cuBLAS check
])
def test_controls_are_claimed_by_no_pytorch_rule(where):
    assert [d.rule for d in explain_stream(io.StringIO(corpus(where))) if d.rule] == []


def test_lua_torch_kernel_assertion_is_said_to_be_lua_torchs():
    found = explain_stream(io.StringIO(corpus("r14_a.yaml#27")))
    assert found[0].rule is None and "Lua Torch" in found[0].title, found[0].title
