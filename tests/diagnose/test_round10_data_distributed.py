"""Round 10 data and distributed rules: the round's misses (NCCL's watchdog tear-down lines, a wrapped NCCL
error, the c10d rendezvous store losing its connection, a TCPStore that failed without a message, a
checkpoint named only in the log line before torch.load's EOFError, accelerate's suggested flag, Gloo's
log prefix) and wording families of the libraries built on torch that no round held yet (Hugging Face
datasets' verification and cast errors, streaming datasets without a length, PyG's old Data objects,
DeepSpeed's communication backend, config and ZeRO optimizer checks, Lightning's strategy names)."""

from __future__ import annotations

import io

from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message, explain_fixture, explain_paste, rules_of, said


def _unclaimed(text: str) -> bool:
    return all(d.rule is None for d in explain_stream(io.StringIO(text)))


# --- distributed: round-10 misses ----------------------------------------------------------------

def test_nccl_watchdog_teardown_lines_name_the_rank():
    d = explain_paste(
        # excerpt of https://github.com/hiyouga/LlamaFactory/issues/8261 (fixtures/real/r10_b.yaml#26)
        "[1831] [rank4]:[E602 11:18:52.531176265 ProcessGroupNCCL.cpp:684] [Rank 4] Some NCCL operations have failed "
        "or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
        "corrupted/incomplete data.\n"
        "[1832] [rank4]:[E602 11:18:52.531247012 ProcessGroupNCCL.cpp:698] [Rank 4] To avoid data inconsistency, we "
        "are taking the entire process down.")
    assert_names(d, "distributed.nccl_watchdog_teardown", ["Rank 4", "Watchdog caught collective operation timeout"])


def test_nccl_watchdog_work_numbers_are_named():
    # excerpt of https://github.com/modelscope/DiffSynth-Studio/issues/458 (fixtures/real/r9_b.yaml#24)
    d = explain_paste("[rank7]:[E318 07:39:53.719123806 ProcessGroupNCCL.cpp:1785] [PG ID 2 PG GUID 9 Rank 7] Exception "
                      "(either an error or timeout) detected by watchdog at work: 610, last enqueued NCCL work: 616, "
                      "last completed NCCL work: 609.")
    assert_names(d, "distributed.nccl_watchdog_teardown", ["Rank 7", "610", "616", "609"])


def test_the_timeout_line_before_the_teardown_keeps_its_own_rule():
    d = explain_paste(
        # excerpt of https://github.com/OpenNMT/OpenNMT-py/issues/2515 (fixtures/real/r6_b.yaml#15)
        "[E ProcessGroupNCCL.cpp:467] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=144159, "
        "OpType=ALLGATHER, NumelIn=4096, NumelOut=8192, Timeout(ms)=60000) ran for 60820 milliseconds before timing out.\n"
        "[E ProcessGroupNCCL.cpp:481] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
        "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
    assert d.rule == "distributed.nccl_timeout", d.rule


def test_nccl_error_wrapped_after_in_and_inside_the_version():
    d = explain_paste("```RuntimeError: NCCL error in:\ncaffe2/torch/lib/c10d/ProcessGroupNCCL.cpp:759, unhandled system "
                      "error, NCCL\nversion 2.7.3\nncclSystemError: System call (socket, malloc, munmap, etc) failed.\n```")
    assert_names(d, "distributed.nccl_error", ["ProcessGroupNCCL.cpp:759", "2.7.3", "ncclSystemError"])


def test_rendezvous_store_broken_pipe_reads_the_warning_before_it():
    # https://github.com/wenet-e2e/wespeaker/issues/171
    d = explain_paste(corpus_message("r10_b.yaml#39"))
    assert_names(d, "distributed.tcpstore_connection_lost",
                 ["Broken pipe", "RendezvousConnectionError", "node04.localdomain_3882442_0"])
    assert _unclaimed("RuntimeError: Broken pipe")


def test_bare_runtime_error_from_the_tcpstore_frame():
    # https://github.com/RVC-Project/Retrieval-based-Voice-Conversion-WebUI/issues/467
    # (runbooks/distributed/tcpstore_bare_error.md's example)
    d = explain_paste(
        '  File "D:\\programms\\RVC-beta\\RVC-beta-v2-0528\\runtime\\lib\\site-packages\\torch\\distributed\\rendezvous.py", '
        "line 245, in _env_rendezvous_handler\n"
        "    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout)\n"
        '  File "D:\\programms\\RVC-beta\\RVC-beta-v2-0528\\runtime\\lib\\site-packages\\torch\\distributed\\rendezvous.py", '
        "line 176, in _create_c10d_store\n"
        "    return TCPStore(\n"
        "RuntimeError\n"
        "INFO:mi-test:====> Epoch: 7 [2023-06-07 19:01:51] | (0:02:02.778112)")
    assert_names(d, "distributed.tcpstore_bare_error", ["TCPStore", "_env_rendezvous_handler", "MASTER_PORT"])
    assert _unclaimed("RuntimeError")


def test_accelerate_device_map_names_the_suggested_flag():
    d = explain_paste("ValueError: You can't train a model that has been loaded with `device_map='auto'` in any "
                      "distributed mode. Please rerun your script specifying `--num_processes=1` or by launching with "
                      "`python {{myscript.py}}`.")
    assert_names(d, "distributed.accelerate_device_map_distributed", ["device_map='auto'", "--num_processes=1"], said(d))


def test_gloo_connect_full_mesh_names_the_logging_source():
    # excerpt of https://github.com/sgl-project/sglang/issues/3226 (fixtures/real/r10_b.yaml#78)
    d = explain_paste("[rank10]:[E130 18:11:34.707542570 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with "
                      "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error")
    assert_names(d, "distributed.gloo_connection", ["pair.cc:144", "ProcessGroupGloo.cpp:143", "no error"])


# --- distributed: new families ---------------------------------------------------------------------

def test_deepspeed_comm_used_before_init_distributed():
    d = explain_paste("AssertionError: DeepSpeed backend not set, please initialize it using init_process_group()")
    assert_names(d, "distributed.deepspeed_comm_not_initialized", ["DeepSpeed backend not set"])
    assert any("deepspeed.init_distributed()" in fix for fix in d.fixes), d.fixes
    d = explain_paste("AssertionError: Distributed backend is not initialized. Please set dist_init_required to True or "
                      "initialize before calling deepspeed.initialize()")
    assert_names(d, "distributed.deepspeed_comm_not_initialized", ["dist_init_required=False"])


def test_deepspeed_config_given_twice():
    # excerpt of https://github.com/EleutherAI/gpt-neox/issues/1043 (runbooks/distributed/deepspeed_config_given_twice.md's example)
    d = explain_paste("AssertionError: Not sure how to proceed, we were given deepspeed configs in the deepspeed "
                      "arguments and deepspeed.initialize() function call")
    assert_names(d, "distributed.deepspeed_config_given_twice", ["deepspeed_config", "config="])


def test_zero_stage_without_optimizer_names_the_stage():
    d = explain_paste("AssertionError: zero stage 1 requires an optimizer")
    assert_names(d, "distributed.deepspeed_zero_requires_optimizer", ["ZeRO stage 1", "reference model"])
    assert any('"stage": 0' in fix for fix in d.fixes), d.fixes


def test_lightning_strategy_removed_in_2_0():
    d = explain_paste("ValueError: You selected an invalid strategy name: `strategy='dp'`. It must be either a string "
                      "or an instance of `pytorch_lightning.strategies.Strategy`. Example choices: auto, ddp, ddp_spawn, "
                      "deepspeed, ... Find a complete list of options in our documentation at https://lightning.ai/")
    assert_names(d, "distributed.lightning_invalid_strategy", ["strategy='dp'", "Lightning 2.0", "strategy='ddp'"])


def test_lightning_strategy_object_from_the_other_package():
    # https://github.com/EleutherAI/lm-evaluation-harness/issues/2647
    d = explain_paste("ValueError: You selected an invalid strategy name: `strategy=<nemo.collections.nlp.parts."
                      "nlp_overrides.NLPDDPStrategy object at 0x7fd7b9f79f60>`. It must be either a string or an "
                      "instance of `lightning.pytorch.strategies.Strategy`. Example choices: auto, ddp, ddp_spawn, "
                      "deepspeed, ... Find a complete list of options in our documentation at https://lightning.ai")
    assert_names(d, "distributed.lightning_invalid_strategy", ["pytorch_lightning", "lightning.pytorch"])


# --- data: round-10 misses -------------------------------------------------------------------------

def test_eof_of_a_checkpoint_named_by_the_log_line_before():
    # https://github.com/TimZaman/dotaclient/issues/4
    d = explain_paste(corpus_message("r10_a.yaml#80"))
    assert_names(d, "data.pickle_ran_out_of_input", ["model_000000726.pt", "Ran out of input"])


# --- data: new families ----------------------------------------------------------------------------

def test_split_sizes_mismatch_names_split_and_counts():
    d = explain_paste("NonMatchingSplitsSizesError: [{'expected': SplitInfo(name='train', num_bytes=3893603, "
                      "num_examples=23422, dataset_name='cats_vs_dogs'), 'recorded': SplitInfo(name='train', "
                      "num_bytes=3891612, num_examples=23410, dataset_name='cats_vs_dogs')}]")
    assert_names(d, "data.hf_dataset_verification", ["'train'", "23422", "23410", "cats_vs_dogs", "Fewer examples"])
    assert any('verification_mode="no_checks"' in fix for fix in d.fixes), d.fixes


def test_expected_more_splits_and_checksums():
    # excerpt of https://github.com/locuslab/wanda/issues/71 (runbooks/data/hf_dataset_verification.md's example)
    d = explain_paste("datasets.utils.info_utils.ExpectedMoreSplits: {'validation'}")
    assert_names(d, "data.hf_dataset_verification", ["ExpectedMoreSplits", "{'validation'}", "data_files"])
    d = explain_paste("datasets.utils.info_utils.NonMatchingChecksumError: Checksums didn't match for dataset source "
                      "files:\n['https://github.com/RevanthRameshkumar/CRD3/archive/master.zip']")
    assert_names(d, "data.hf_dataset_verification",
                 ["NonMatchingChecksumError", "https://github.com/RevanthRameshkumar/CRD3/archive/master.zip"])


def test_generation_cast_error_names_columns_and_file():
    # https://github.com/allenai/OLMoE/issues/21 (runbooks/data/hf_dataset_schema_mismatch.md's example)
    d = explain_paste("Message:      An error occurred while generating the dataset\n\n"
                      "All the data files must have the same columns, but at some point there are 3 new columns "
                      "({'doc', 'metadata', 'attributes'})\n\nThis happened while the json dataset builder was generating "
                      "data using\n\ngzip://algebraic-stack-train-0000.json::hf://datasets/allenai/OLMoE-mix-0924@"
                      "1e44595eaffc7491dfab23947ea4d5a62b33aff3/data/algebraic-stack/algebraic-stack-train-0000.json.gz")
    assert_names(d, "data.hf_dataset_schema_mismatch",
                 ["{'doc', 'metadata', 'attributes'}", "algebraic-stack-train-0000.json.gz"])


def test_cast_error_and_array_cast():
    # https://github.com/ZihanZhaoSJTU/LibriSQA/issues/2 (runbooks/data/hf_dataset_schema_mismatch.md's example)
    d = explain_paste("    raise CastError(\ndatasets.table.CastError: Couldn't cast\ntext: string\n"
                      "answer_and_analysis: string\nduration: double\nquestion_and_option: string\nspeech_path: string\n"
                      "answer: string\nto\n{'text': Value(dtype='string', id=None), 'duration': Value(dtype='float64', "
                      "id=None), 'question': Value(dtype='string', id=None), 'speech_path': Value(dtype='string', "
                      "id=None), 'answer': Value(dtype='string', id=None)}\nbecause column names don't match")
    assert_names(d, "data.hf_dataset_schema_mismatch", ["column names don't match", "'question'"])
    # an excerpt: the error as the title of https://github.com/huggingface/datasets/issues/7222 quotes it
    d = explain_paste("TypeError: Couldn't cast array of type string to null")
    assert_names(d, "data.hf_dataset_schema_mismatch", ["string", "null"])


def test_iterable_dataset_without_length_fixture():
    d = explain_fixture("fixtures/data/iterable_dataset_len.py")
    assert_names(d, "data.iterable_dataset_length", ["TokenStream", "__len__"])
    # excerpt of https://github.com/huggingface/datasets/issues/5773 (runbooks/data/iterable_dataset_length.md's example)
    d = explain_paste("ValueError: The train_dataset does not implement __len__, max_steps has to be specified. The "
                      "number of steps needs to be known in advance for the learning rate scheduler.")
    assert_names(d, "data.iterable_dataset_length", ["train_dataset", "max_steps"])
    # Python's own TypeError on any object is the generic rule's, not the dataset rule's
    assert rules_of("TypeError: object of type 'generator' has no len()") == ["other.object_has_no_len"]


def test_pyg_data_object_from_an_older_version():
    d = explain_paste("RuntimeError: The 'data' object was created by an older version of PyG. If this error occurred "
                      "while loading an already existing dataset, remove the 'processed/' directory in the dataset's "
                      "root folder and try again.")
    assert_names(d, "data.pyg_data_older_version", ["processed/", "super().__init__()"])


def test_dataset_scripts_removed_in_datasets_4():
    # https://github.com/Lightning-AI/litgpt/pull/2095 (runbooks/data/hf_dataset_scripts_unsupported.md's example)
    d = explain_paste("RuntimeError: Dataset scripts are no longer supported, but found logiqa.py")
    assert_names(d, "data.hf_dataset_scripts_unsupported", ["logiqa.py", "4.0"])
    assert any('datasets<4' in fix for fix in d.fixes), d.fixes


def test_device_mesh_bigger_than_the_world_fixture():
    d = explain_fixture("fixtures/distributed/device_mesh_too_large.py")
    assert_names(d, "distributed.device_mesh_world_size", ["8 ranks", "has 1", "torchrun"])


def test_distributed_sampler_rank_out_of_range_fixture():
    d = explain_fixture("fixtures/distributed/distributed_sampler_rank.py")
    assert_names(d, "distributed.distributed_sampler_rank", ["rank 2", "num_replicas=2", "0 to 1"])
    d = explain_paste("ValueError: Invalid rank 4, rank should be in the interval [0, 3]")
    assert_names(d, "distributed.distributed_sampler_rank", ["rank 4", "num_replicas=4"])
