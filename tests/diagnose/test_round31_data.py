"""Round-31 wordings for data (safetensors' shared tensors and failed writes, Hugging Face datasets' generation error and
Windows cache locks, transformers example scripts' missing splits, PyG's empty datasets, hand-written weight loaders):
each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values
it holds named; other wordings of the same families (from the threads cited in the rules) are claimed too, and near
misses stay unclaimed. The live fixture raises the loader's KeyError with this CPU torch."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_fixture, explain_paste


CORPUS_CASES = [
    ("r31_a.yaml#7", "data.pyg_dataset_index_out_of_range", ["test_ds[0]", "range object index out of range"]),
    ("r31_a.yaml#13", "data.hf_dataset_generation_error", ["DatasetGenerationError"]),
    ("r31_a.yaml#26", "data.hf_script_split_missing", ["--do_eval", "'validation'"]),
    ("r31_a.yaml#57", "data.state_dict_param_key_missing", ["model.2.cv2.weight", "another definition of the model"]),
    ("r31_a.yaml#58", "data.state_dict_param_key_missing", ["'model'", "training checkpoint"]),
    ("r31_a.yaml#65", "data.safetensors_save_failed", ["SafetensorError", "1224", "save_file", "ERROR_USER_MAPPED_FILE"]),
    ("r31_b.yaml#46", "data.hf_datasets_cache_access_denied", ["WinError 5", "parquet-train.arrow"]),
    ("r31_c.yaml#15", "data.safetensors_shared_tensors", ["save_pretrained", "_flatten"]),
    ("r31_c.yaml#16", "data.safetensors_shared_tensors",
     ["DistilBertForMaskedLM", "distilbert.embeddings.word_embeddings.weight", "vocab_projector.weight"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # safetensors' shared tensors, newer message with the save_model hint (gemma3-object-detection#48), and a terminal
    # wrapping the line (safetensors#304: many names in one group, ZeRO's flat buffer)
    ("RuntimeError: \n            Some tensors share memory, this will lead to duplicate memory on disk and potential "
     "differences when loading them again: [{'language_model.lm_head.weight', 'language_model.model.embed_tokens.weight'}].\n"
     "            A potential way to correctly save your model is to use `save_model`.",
     "data.safetensors_shared_tensors", ["language_model.lm_head.weight", "language_model.model.embed_tokens.weight",
                                         "weight tying"]),
    ("Some tensors share memory, this will lead to duplicate memory on disk and potential differences when \n"
     "loading them again: [{'model.layers.1.self_attn.q_proj.weight', 'model.layers.11.mlp.up_proj.weight', ",
     "data.safetensors_shared_tensors", ["model.layers.1.self_attn.q_proj.weight", "DeepSpeed ZeRO"]),
    # safetensors' failed writes: a full disk (LlamaFactory#5155), the 0.5+ Display form (safetensors#842), the
    # English 1224 (kohya_ss#2466), and re-printed by a caller without the exception's name (ComfyUI-ModelQuantizer#4)
    ('safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: '
     '"No space left on device" })', "data.safetensors_save_failed", ["28", "StorageFull", "disk"]),
    ("safetensors._safetensors_rust.SafetensorError:\nError while serializing: I/O error:\nOperation not supported "
     "(os error 95)", "data.safetensors_save_failed", ["95", "Operation not supported", "FUSE"]),
    ('safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 1224, kind: Uncategorized, message: '
     '"The requested operation cannot be performed on a file with a user-mapped section open." })',
     "data.safetensors_save_failed", ["1224", "memory-mapped"]),
    ('❌ Error during UNET state_dict extraction or saving: Error while serializing: IoError(Os { code: 28, kind: '
     'StorageFull, message: "No space left on device" })', "data.safetensors_save_failed", ["28"]),
    # the example scripts' other splits (transformers' run_glue, run_summarization, the KeyError of the speech scripts)
    ("ValueError: --do_train requires a train dataset", "data.hf_script_split_missing", ["--do_train", "'train'"]),
    ("ValueError: --do_predict requires a test dataset", "data.hf_script_split_missing", ["--do_predict", "--test_file"]),
    ('KeyError: "--do_train requires a train dataset"', "data.hf_script_split_missing", ["--do_train"]),
    # DatasetGenerationError with its cause above it (xtuner#78)
    ('    raise SchemaInferenceError("Please pass `features` or at least one example when writing data")\n'
     "datasets.arrow_writer.SchemaInferenceError: Please pass `features` or at least one example when writing data\n\n"
     "The above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n"
     '  File "/home/vansin/llm/xtuner/xtuner/tools/train.py", line 225, in <module>\n    main()\n'
     "datasets.builder.DatasetGenerationError: An error occurred while generating the dataset",
     "data.hf_dataset_generation_error", ["SchemaInferenceError", "No rows"]),
    # the datasets cache on Windows: a map cache file in a temp dir (datasets#2402), the builder's rename (datasets#2937,
    # data/hf_datasets_cache_access_denied's example, verbatim with its elided user name and its cut)
    ('  File "C:\\Users\\Mario\\Anaconda3\\envs\\hf-datasets\\lib\\shutil.py", line 393, in _rmtree_unsafe\n'
     "    os.unlink(fullname)\nPermissionError: [WinError 5] Access is denied: "
     "'C:\\\\Users\\\\Mario\\\\AppData\\\\Local\\\\Temp\\\\tmp20epyhmq\\\\cache-87a87ffb5a956e68.arrow'",
     "data.hf_datasets_cache_access_denied", ["cache-87a87ffb5a956e68.arrow", "WinError 5"]),
    ('  File "C:\\Users\\........\\AppData\\Roaming\\Python\\Python38\\site-packages\\datasets\\builder.py", line 557, '
     "in incomplete_dir\n    os.rename(tmp_dir, dirname)\nPermissionError: [WinError 5] Access is de",
     "data.hf_datasets_cache_access_denied", ["os.rename(tmp_dir, dirname)"]),
    # a hand-written loader with a DataParallel-era prefix (an excerpt of
    # https://github.com/lulujianjie/person-reid-tiny-baseline/issues/6: its last frame and error)
    ('  File "/home/dd/wind/0ReID/person-reid-tiny-baseline/model/backbones/resnet.py", line 133, in load_param\n'
     "    self.state_dict()[i].copy_(param_dict[i])\nKeyError: 'base.conv1.weight'", "data.state_dict_param_key_missing",
     ["base.conv1.weight", "self"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # a bare IndexError on a range, no PyG frame (multispectral-object-detection#88)
    ("IndexError: range object index out of range", "data.pyg_dataset_index_out_of_range"),
    # an IndexError in a user dataset's own __getitem__ (LaneGCN#39)
    ('  File "/home/jovyan/LaneGCN/data.py", line 384, in __getitem__\n'
     "    data['argo_id'] = int(self.avl.seq_list[idx].name[:-4]) #160547\nIndexError: list index out of range",
     "data.pyg_dataset_index_out_of_range"),
    # the Trainer's own eval check is another wording (Skywork#25)
    ("ValueError: Trainer: evaluation requires an eval_dataset.", "data.hf_script_split_missing"),
    # safetensors reading, not writing
    ("safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge", "data.safetensors_save_failed"),
    # torch's in-place overlap check is not a save
    ("RuntimeError: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
     "memory location. Please clone() the tensor before performing the operation.", "data.safetensors_shared_tensors"),
    # the hub's model cache stays with other.cache_dir_permission_denied (DeepKE#537)
    ("PermissionError: [Errno 13] Permission denied: 'C:\\\\Users\\\\lenovo/.cache\\\\huggingface\\\\hub\\\\models--bert-"
     "base-chinese\\\\refs\\\\main'", "data.hf_datasets_cache_access_denied"),
    # a bare KeyError with no state_dict() lookup on its line (temporal-shift-module#81)
    ("KeyError: 'state_dict'", "data.state_dict_param_key_missing"),
    # a localised FileNotFoundError alone (the control r12_b#36's family): any program's
    ("FileNotFoundError: [WinError 2] Не удается найти указанный файл", "data.hf_datasets_cache_access_denied"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_hub_cache_permission_stays_with_the_cache_rule():
    text = ("PermissionError: [Errno 13] Permission denied: 'C:\\\\Users\\\\lenovo/.cache\\\\huggingface\\\\hub\\\\models--"
            "bert-base-chinese\\\\refs\\\\main'")
    assert explain_paste(text).rule == "other.cache_dir_permission_denied"


def test_checkpoint_entry_read_stays_with_checkpoint_entry_missing():
    text = "    net.load_state_dict(torch.load(args.ckpt_dir)['model'])\nKeyError: 'model'"
    assert explain_paste(text).rule == "data.checkpoint_entry_missing"


def test_live_loader_copying_a_training_checkpoint():
    diagnosis = explain_fixture("fixtures/data/state_dict_copy_loop_keyerror.py")
    assert_names(diagnosis, "data.state_dict_param_key_missing", ["'model'", "training checkpoint"])
