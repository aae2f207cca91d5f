"""Round-43 wordings for data and memory (torchmetrics' label checks, torch.load's weights-only unpickler under
stable-baselines3, HDF5 files read by robomimic and robocasa, LeRobot's quantile statistics, TRL's packing and GRPO
batches, ktransformers' safetensors loader, safetensors' shared tensors; Ray's memory monitor, vLLM's sleep-mode
allocator, DeepSpeed's launcher after a SIGKILL): each corpus message (verbatim from the opened rounds) is claimed,
from its text alone, by the right rule with the values it holds named the way the coverage judge reads them; other
wordings of the same families (from the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste, said


CORPUS_CASES = [
    ("r43_a.yaml#63", "data.torchmetrics_label_values", ["3", "4", "num_classes"]),
    ("r43_a.yaml#80", "data.torchmetrics_label_values", ["[0, 1]", "cuda:0"]),
    ("r43_b.yaml#40", "data.weights_only_load", ['save_util.py", line 450', "weights_only=True"]),
    ("r43_b.yaml#43", "data.h5py_object_not_found", ["component not found"]),
    ("r43_b.yaml#45", "data.worker_error", ["KeyError", "worker process 0", 'dataset.py", line 1096']),
    ("r43_b.yaml#46", "data.h5py_file_signature", ["file signature not found", "h5f.pyx"]),
    ("r43_b.yaml#47", "data.robomimic_filter_keys", ["config.train.hdf5_filter_key", 'train_utils.py", line 107']),
    ("r43_b.yaml#68", "data.lerobot_quantile_stats_missing",
     ["QUANTILES", "q01", "q99", "augment_dataset_quantile_stats.py"]),
    ("r43_c.yaml#15", "data.trl_packing_no_sequence", ["packing"]),
    ("r43_c.yaml#35", "data.ktransformers_safetensor_key_missing",
     ["output.weight", 'custom_loader.py", line 61', "load_tensor"]),
    ("r43_c.yaml#57", "data.safetensors_shared_tensors", ["model.embed_tokens.weight", "lm_head.weight"]),
    ("r43_c.yaml#58", "data.safetensors_shared_tensors",
     ["model.embed_tokens.weight", "model.layers.1.self_attn.q_proj.weight"]),
    ("r43_c.yaml#83", "data.dataset_example_key_missing", ["prompt", 'grpo_trainer.py", line 519']),
    ("r43_a.yaml#70", "memory.ray_out_of_memory", ["95%", "48.64", "48.83 GB", "Gondolin-Node-071"]),
    ("r43_c.yaml#34", "memory.vllm_cumem_oom", ["cumem_allocator.cpp:56", "out of memory", "invalid argument"]),
    ("r43_c.yaml#40", "distributed.child_failed", ["-9", "2454240", "deepspeed-trainer.py"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # an ignore_index value left in integer preds counts as a class (Lightning-AI/torchmetrics#2425)
    assert_names(explain_paste(corpus_message("r43_a.yaml#63")), "data.torchmetrics_label_values",
                 ["`ignore_index`", "0..2"])
    # continuous values as a binary target: the metric called with (target, preds) (unit8co/darts#1341)
    assert_names(explain_paste(corpus_message("r43_a.yaml#80")), "data.torchmetrics_label_values",
                 ["-6.0643e-02", "`metric(target, preds)`"])
    # stable-baselines3 2.3.0-2.3.1 passed weights_only=True under torch 1.13 (DLR-RM/stable-baselines3#1911)
    assert_names(explain_paste(corpus_message("r43_b.yaml#40")), "data.weights_only_load",
                 ["cut after 'Weights only'", "BINFLOAT", "2.3.2"])
    # robomimic's training script printed the KeyError's text alone
    assert_names(explain_paste(corpus_message("r43_b.yaml#43")), "data.h5py_object_not_found",
                 ["hdf5_filter_key", "robomimic"])
    # the inner dataset's frame, and the paste cut before the worker's error line
    assert_names(explain_paste(corpus_message("r43_b.yaml#45")), "data.worker_error",
                 ["dataset.py:482", "dataset.py:1096", "The paste ends before"])
    # IsaacLab's robomimic workflow: split the collected demonstrations first
    assert_names(explain_paste(corpus_message("r43_b.yaml#47")), "data.robomimic_filter_keys",
                 ["split_train_val.py", "IsaacLab"])
    # a tie of the output head to the input embeddings, the list wrapped before "again"
    assert_names(explain_paste(corpus_message("r43_c.yaml#57")), "data.safetensors_shared_tensors",
                 ["weight tying"])
    # TRL's GRPO batch reader, not a datasets LazyDict
    assert_names(explain_paste(corpus_message("r43_c.yaml#83")), "data.dataset_example_key_missing",
                 ["GRPOTrainer takes a dataset with a 'prompt' column"])
    # the launcher's command is the last worker it started, not the one that died
    diagnosis = explain_paste(corpus_message("r43_c.yaml#40"))
    assert_names(diagnosis, "distributed.child_failed", ["--local_rank=3", "not necessarily the worker that died"],
                 said(diagnosis))


@pytest.mark.parametrize("text, rule, values", [
    # a binary metric given -1 labels (chemprop/chemprop#1000)
    ("RuntimeError: Detected the following values in `target`: tensor([-1, 0]) but expected only the following values "
     "[0, 1].", "data.torchmetrics_label_values", ["[0, 1]", "-1", "`ignore_index`"]),
    # h5py 3.10's wording of a member missing from a group (ForceMimic/hybridil#2)
    ("KeyError: \"Unable to synchronously open object (object 'action_with_wrench' doesn't exist)\"",
     "data.h5py_object_not_found", ["'action_with_wrench'"]),
    # the same check for a Keras model file (MLH-Fellowship/Social-BERTerfly#25)
    ("Traceback (most recent call last):\n...\n    with h5py.File(filepath, 'r') as f:\n  File \"/home/ubuntu/.local/lib/"
     "python3.8/site-packages/h5py/_hl/files.py\", line 406, in __init__\n    fid = make_fid(name, mode, userblock_size,\n"
     "  File \"/home/ubuntu/.local/lib/python3.8/site-packages/h5py/_hl/files.py\", line 173, in make_fid\n"
     "    fid = h5f.open(name, flags, fapl=fapl)\n  File \"h5py/_objects.pyx\", line 54, in h5py._objects.with_phil."
     "wrapper\n  File \"h5py/_objects.pyx\", line 55, in h5py._objects.with_phil.wrapper\n  File \"h5py/h5f.pyx\", line "
     "88, in h5py.h5f.open\nOSError: Unable to open file (file signature not found)",
     "data.h5py_file_signature", ["h5f.pyx:88", "\\x89HDF"]),
    # robocasa's training script on a dataset served from a wrong link (ARISE-Initiative/robomimic#161)
    (" /home/username/robocasa/datasets/v0.1/single_stage/kitchen_pnp/PnPCounterToMicrowave/2024-04-27/"
     "demo_gentex_im128_randcams.hdf5\nrun failed with error:\nUnable to open file (file signature not found)",
     "data.h5py_file_signature", ["demo_gentex_im128_randcams.hdf5", "robocasa/robocasa#20"]),
    # h5py 2.x capitalised it (liangyihuai/my_tensorflow#1)
    ("OSError: Unable to open file (File signature not found)", "data.h5py_file_signature", ["File signature not found"]),
    # LeRobot's message without the backticks (huggingface/lerobot#2189)
    ("ValueError: QUANTILES normalization mode requires q01 and q99 stats, please update the dataset with the correct "
     "stats using the augment_dataset_quantile_stats.py script", "data.lerobot_quantile_stats_missing",
     ["QUANTILES", "q01", "q99", "augment_dataset_quantile_stats.py"]),
    # AutoTrain's log of the same packing failure (huggingface/autotrain-advanced#827)
    ("[BUG] autotrain.trainers.common:wrapper:216 - Error occurred while packing the dataset. Make sure that your "
     "dataset has enough samples to at least yield one packed sequence.", "data.trl_packing_no_sequence",
     ["`packing=True`", "`max_seq_length`"]),
    # an FP8 optimize rule without merged FP8 weights (kvcache-ai/ktransformers#919), and the error as a title (#709)
    ("File \"/workspace/ktransformers/ktransformers/operators/linear.py\", line 87, in load_weight\n    weight_scale_inv "
     "= self.gguf_loader.safetensor_loader.load_tensor(key+'.weight_scale_inv')\n                       "
     "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/workspace/ktransformers/"
     "ktransformers/util/custom_loader.py\", line 61, in load_tensor\n    raise KeyError(f\"Key {key} not found in "
     "Safetensor files\")\nKeyError: 'Key output.weight_scale_inv not found in Safetensor files'",
     "data.ktransformers_safetensor_key_missing", ["'output.weight_scale_inv'", "An FP8 scale is missing"]),
    ("运行报错 KeyError: 'Key output.weight not found in Safetensor files'", "data.ktransformers_safetensor_key_missing",
     ["'output.weight'", "`--gguf_path`"]),
    # Ray 2.x's memory monitor (real-stanford/flingbot#11) and Ray 0.6's, its line wrapped (ray-project/ray#3323)
    ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\nMemory on the node (IP: "
     "192.168.0.107, ID: fc2befb2867ce88e73a8a45572c43a640751ae1f2b5e15bd8315f293) where the task (actor ID: "
     "f9cc340f5aef7b479d86345001000000, name=SimEnv.__init__, pid=4331, memory used=2.22GB) was running was 59.49GB / "
     "62.58GB (0.950744), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: "
     "d98ac96cdd66ea8c0a2604609381c3256c8285b87822896c767f7714) because it was the most recently scheduled task; to "
     "see more information about memory usage on this node, use `ray logs raylet.out -ip 192.168.0.107`. To see the "
     "logs of the worker, use `ray logs worker-d98ac96cdd66ea8c0a2604609381c3256c8285b87822896c767f7714*out -ip "
     "192.168.0.107. Top 10 memory users:", "memory.ray_out_of_memory",
     ["59.49GB / 62.58GB", "SimEnv.__init__", "pid 4331", "threshold of 0.95,"]),
    ("ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node\neric-ThinkPad is used (11.8 / 12.3 "
     "GB). The top 5 memory consumers are:", "memory.ray_out_of_memory", ["eric-ThinkPad", "(11.8 / 12.3 GB)"]),
    # vLLM after #12981 raises it on wake_up (vllm-project/vllm#13941); verl's title lowercases it (verl-project/verl#302)
    ("  File \"/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py\", line 140, in wake_up\n    "
     "allocator.wake_up()\n  File \"/usr/local/lib/python3.10/dist-packages/vllm/device_allocator/cumem.py\", line 207, "
     "in wake_up\n    create_and_map(handle)\n  File \"/usr/local/lib/python3.10/dist-packages/vllm/device_allocator/"
     "cumem.py\", line 75, in create_and_map\n    python_create_and_map(*allocation_handle)\nRuntimeError: CUDA Error: "
     "out of memory at /workspace/csrc/cumem_allocator.cpp:62", "memory.vllm_cumem_oom",
     ["cumem_allocator.cpp:62", "while waking the engine up"]),
    ("cuda error: out of memory at /workspace/csrc/cumem_allocator.cpp:62", "memory.vllm_cumem_oom",
     ["cumem_allocator.cpp:62", "`wake_up()`"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


def test_deepspeed_launcher_names_its_script_and_killed_worker():
    # the rule's own example from deepspeedai/DeepSpeed#3232: main.py, --local_rank=0, Killing subprocess 13266
    from explainer.rules.base import default_rulebase

    rule = default_rulebase().by_id["distributed.child_failed"]
    message = next(e.message for e in rule.examples if e.source.endswith("DeepSpeed/issues/3232"))
    diagnosis = explain_paste(message)
    assert_names(diagnosis, "distributed.child_failed", ["`main.py`", "`--local_rank=0`", "Killing subprocess 13266"],
                 said(diagnosis))


def test_a_whole_weights_only_message_is_not_read_as_cut():
    # torch 2.4+'s full wording (YeongChanLee/ICD2Vec#13): the rule's own reading, not the cut one
    text = ("  File \"/Users/Gomes-FerreiraA-Dev/workspace/ICD2Vec/venv/lib/python3.12/site-packages/torch/serialization.py\","
            " line 1470, in load\n    raise pickle.UnpicklingError(_get_wo_message(str(e))) from None\n_pickle.Unpickling"
            "Error: Weights only load failed. This file can still be loaded, to do so you have two options, do those steps "
            "only if you trust the source of the checkpoint.")
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "data.weights_only_load"
    assert "cut after" not in diagnosis.summary and "stable-baselines3" not in diagnosis.summary


@pytest.mark.parametrize("text, not_rule", [
    # torchmetrics < 0.10's shape-based check (NJU-LHRS/Official_Remote_Sensing_Mamba#4): data.torchmetrics_target_not_binary
    ("ValueError: If `preds` and `target` are of shape (N, ...) and `preds` are floats, `target` should be binary.",
     "data.torchmetrics_label_values"),
    # corrupt metadata in forked DataLoader workers (pytorch/pytorch#11887): data.h5py_worker_read_failed's
    ("  File \"h5py/h5o.pyx\", line 190, in h5py.h5o.open\nKeyError: 'Unable to open object (bad object header version "
     "number)'", "data.h5py_object_not_found"),
    # a path that does not exist (mahmoodlab/CLAM#28)
    ("OSError: Unable to open file (unable to open file: name = 'new/patches/TC_W107_4.h5', errno = 2, error message = "
     "'No such file or directory', flags = 0, o_flags = 0)", "data.h5py_file_signature"),
    # datasets' own SchemaInferenceError, no packing (InternLM/xtuner#78)
    ("datasets.arrow_writer.SchemaInferenceError: Please pass `features` or at least one example when writing data",
     "data.trl_packing_no_sequence"),
    # the allocator's other failure alone (modelscope/ms-swift#9613): not a shortage of memory
    ("CUDA Error: invalid argument at /workspace/csrc/cumem_allocator.cpp:119", "memory.vllm_cumem_oom"),
    # a dead Ray actor with no memory monitor in the message (ray-project/ray#18586)
    ("ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.", "memory.ray_out_of_memory"),
    # the same GRPO batch reader given already-encoded batches: a TypeError, not a missing column (dhcode-cpp/X-R1#16)
    (".../python3.10/site-packages/transformers/trainer.py\", line 3675, in training_step\n    loss = self.compute_loss("
     "model, inputs, num_items_in_batch=num_items_in_batch)\n./X-R1/src/x_r1/x_grpo_trainer.py\", line 58, in "
     "compute_loss\n    prompts = [x[\"prompt\"] for x in inputs]\n ./X-R1/src/x_r1/x_grpo_trainer.py\", line 58, in "
     "<listcomp>\n    prompts = [x[\"prompt\"] for x in inputs]\nTypeError: string indices must be integers",
     "data.dataset_example_key_missing"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
