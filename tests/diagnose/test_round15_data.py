"""Round 15 data rules: a tokenizer without a pad token, the legacy collate stack, DGL's feature counts, YOLO's
dataset check, Lightning's empty loader, the Trainer's missing loss, fastai's trial batch, the DataLoader's empty
worker queue, and values the diagnoses of older data rules now name. Real torch calls where CPU torch raises the
error (pad_sequence given None); elsewhere the messages as pasted in their threads."""

from __future__ import annotations

import io

import pytest
import torch
from torch.nn.utils.rnn import pad_sequence

import explainer
from explainer.cli.explain import explain_stream

from conftest import assert_names, corpus_message as corpus, explain_fixture, explain_paste, raised


def said(d) -> str:
    return " ".join([d.summary, *d.fixes])


# --- a tokenizer without a pad token ---------------------------------------------------------------

def test_pad_sequence_given_a_none_padding_value_is_the_tokenizers_missing_pad_token():
    d = explain_fixture("fixtures/data/pad_sequence_padding_none.py")
    assert_names(d, "data.tokenizer_no_pad_token", ["pad_sequence()", "padding_value", "NoneType", "pad_token_id"])
    assert any("tokenizer.pad_token = tokenizer.eos_token" in fix for fix in d.fixes), d.fixes


def test_pad_sequence_given_other_wrong_arguments_stays_with_the_generic_argument_rule():
    seqs = [torch.ones(2), torch.ones(3)]
    d = explainer.explain(raised(lambda: pad_sequence(seqs, batch_first=True, padding_value="0")))
    assert d.rule == "other.argument_type", (d.rule, d.summary)
    d = explain_paste("TypeError: pad_sequence(): argument 'sequences' (position 1) must be tuple of Tensors, not Tensor")
    assert d.rule == "other.argument_type", (d.rule, d.summary)


@pytest.mark.parametrize("where, values", [
    ("r15_a.yaml#7", ["pad_token", "Asking to pad but the tokenizer does not have a padding token"]),
    ("r15_a.yaml#8", ["pad_sequence()", "'padding_value' (position 3)", "NoneType"]),
])
def test_pasted_no_pad_token_errors(where, values):
    assert_names(explain_paste(corpus(where)), "data.tokenizer_no_pad_token", values)


# --- the default collate_fn's stack, torch 0.4 to 1.4 --------------------------------------------------

@pytest.mark.parametrize("where, values", [
    ("r15_a.yaml#17", ["default_collate", "got 180 and 403 in dimension 2", "dimension 1 of each sample",
                       "THTensor.cpp:689"]),
    ("r15_b.yaml#52", ["default_collate", "got 35 and 34 in dimension 1", "dimension 0 of each sample",
                       "THTensorMath.c:3586"]),
])
def test_the_legacy_stack_error_under_default_collate_is_the_collate_rules(where, values):
    assert_names(explain_paste(corpus(where)), "data.collate_variable_length", values)


def test_the_legacy_message_without_the_collate_frame_stays_a_cat_error():
    d = explain_paste("RuntimeError: invalid argument 0: Sizes of tensors must match except in dimension 0. Got 1 and 2 "
                      "in dimension 1 at C:\\w\\1\\s\\windows\\pytorch\\aten\\src\\TH/generic/THTensor.cpp:612")
    assert d.rule == "shape.cat_sizes", (d.rule, d.summary)


# --- other libraries' data errors ------------------------------------------------------------------

def test_opencv_transforms_given_a_pil_image():
    d = explain_paste(corpus("r15_a.yaml#19"))
    assert_names(d, "data.torchvision_image_type", ["opencv_transforms", "CV Image", "<class 'PIL.Image.Image'>"])
    assert any("cv2.imread" in fix for fix in d.fixes), d.fixes


@pytest.mark.parametrize("where, values", [
    ("r15_a.yaml#36", ["18612081 rows for 18612080 nodes", "len(u)", "Off by one"]),
    ("r15_a.yaml#37", ["26 rows for 38 edges", "12 edges more", "self_loop=True"]),
    ("r15_a.yaml#38", ["5 rows for 10 nodes", "Got 5 and 10 instead"]),
])
def test_dgl_features_that_do_not_match_the_graph(where, values):
    assert_names(explain_paste(corpus(where)), "data.dgl_feature_count", values)


def test_dgl_feature_count_names_the_user_line_and_dgls_frame():
    d = explain_paste(corpus("r15_a.yaml#36"))
    assert d.location.code == "compact_g.ndata['orig_id'] = th.as_tensor(per_type_ids)"
    assert d.facts["raised_in"]["line"] == 3992


@pytest.mark.parametrize("where, values", [
    ("r15_a.yaml#43", ["'custom_data.yaml'", "'/content/datasets/valid/images'", "(/content/datasets)"]),
    ("r15_a.yaml#44", ["'ultralytics/datasets/bdd-multi.yaml'", "['/ultralytics/bdd100k/images/val2017']"]),
])
def test_ultralytics_dataset_images_not_found(where, values):
    assert_names(explain_paste(corpus(where)), "data.yolo_dataset_not_found", values)


def test_yolov5_reads_the_missing_paths_from_the_line_printed_above_its_exception():
    # https://github.com/ultralytics/yolov5/issues/7532 (the code block, verbatim)
    text = ("Dataset not found ⚠️, missing paths ['/content/yolov5/images/test/images']\n"
            "Traceback (most recent call last):\n"
            '  File "train.py", line 669, in <module>\n'
            "    main(opt)\n"
            '  File "train.py", line 564, in main\n'
            "    train(opt.hyp, opt, device, callbacks)\n"
            '  File "train.py", line 107, in train\n'
            "    data_dict = data_dict or check_dataset(data)  # check if None\n"
            '  File "/content/yolov5/utils/general.py", line 491, in check_dataset\n'
            "    raise Exception(emojis('Dataset not found ❌'))\n"
            "Exception: Dataset not found ❌")
    d = explain_paste(text)
    assert_names(d, "data.yolo_dataset_not_found", ["['/content/yolov5/images/test/images']", "check_dataset"])
    # torchvision's own "Dataset not found" keeps its rule
    d = explain_paste("RuntimeError: Dataset not found. You can use download=True to download it")
    assert d.rule == "data.torchvision_dataset_not_found", d.rule


def test_safetensors_names_the_call_that_opened_the_file():
    d = explain_paste(corpus("r15_a.yaml#79"))
    assert_names(d, "data.safetensors_header", ["safe_open(checkpoint_file, ...)", "HeaderTooLarge"], said(d))


@pytest.mark.parametrize("text, values", [
    (corpus("r15_a.yaml#81"), ["`Dataloader` returned 0 length", "refuses"]),
    # https://github.com/RangiLyu/nanodet/issues/372
    ("pytorch_lightning.utilities.exceptions.MisconfigurationException: Total length of `Dataloader` across ranks is "
     "zero. Please make sure that it returns at least 1 batch.", ["across ranks is zero", "more processes"]),
])
def test_lightning_loader_with_no_batches(text, values):
    assert_names(explain_paste(text), "data.lightning_dataloader_empty", values)


def test_trainer_without_a_loss_tells_missing_labels_from_a_model_that_ignores_them():
    d = explain_paste(corpus("r15_a.yaml#82"))
    assert_names(d, "data.trainer_model_no_loss", ["only logits", "aspect_ratio_mask", "no `labels`"])
    # https://github.com/unslothai/unsloth/issues/1899: labels were there
    d = explain_paste("The model did not return a loss from the inputs, only the following keys: logits. For reference, "
                      "the inputs it received are input_ids,attention_mask,labels.")
    assert_names(d, "data.trainer_model_no_loss", ["The batch has labels", "AutoModel"])


@pytest.mark.parametrize("where", ["r15_a.yaml#84", "r15_a.yaml#85"])
def test_fastai_could_not_do_one_pass(where):
    d = explain_paste(corpus(where))
    assert_names(d, "data.fastai_one_pass", ["Could not do one pass in your dataloader", "dblock.summary"], said(d))


# --- the DataLoader's workers ----------------------------------------------------------------------

def test_a_worker_reraise_cut_before_its_error_names_the_collate_frame():
    d = explain_paste(corpus("r15_b.yaml#53"))
    assert_names(d, "data.worker_error", ["default_collate", "collate.py:75", "worker process 0"])


PYTORCH_62969 = ('Traceback (most recent call last):\n'
                 '  File "C:\\Users\\circleci\\project\\build\\win_tmp\\build\\torch\\utils\\data\\dataloader.py", '
                 'line 990, in _try_get_data\n'
                 '    data = self._data_queue.get(timeout=timeout)\n'
                 '  File "C:\\Jenkins\\Miniconda3\\lib\\multiprocessing\\queues.py", line 108, in get\n'
                 '    raise Empty\n'
                 '_queue.Empty\n')


def test_the_empty_worker_queue_alone_is_explained_as_a_dead_worker():
    d = explain_paste(PYTORCH_62969)
    assert_names(d, "data.worker_queue_empty", ["_queue.Empty", "dataloader.py:990", "exited unexpectedly"])


def test_the_empty_queue_is_folded_into_the_worker_error_raised_from_it():
    # https://github.com/azadis/MC-GAN/issues/19 (the traceback, verbatim)
    text = ('Traceback (most recent call last):\n'
            '  File "D:\\Innovation day 2019\\python\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 724, '
            'in _try_get_data\n'
            '    data = self._data_queue.get(timeout=timeout)\n'
            '  File "D:\\Innovation day 2019\\python\\lib\\multiprocessing\\queues.py", line 105, in get\n'
            '    raise Empty\n'
            '_queue.Empty\n'
            '\n'
            'During handling of the above exception, another exception occurred:\n'
            '\n'
            'Traceback (most recent call last):\n'
            '  File "C:/Users/kiku/FontTransfer/MC-GAN/train_Stack.py", line 44, in <module>\n'
            '    for i, data in enumerate(dataset):\n'
            '  File "C:\\Users\\kiku\\FontTransfer\\MC-GAN\\data\\data_loader.py", line 211, in __next__\n'
            '    A, A_paths = next(self.data_loader_iter_A)\n'
            '  File "D:\\Innovation day 2019\\python\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 804, '
            'in __next__\n'
            '    idx, data = self._get_data()\n'
            '  File "D:\\Innovation day 2019\\python\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 771, '
            'in _get_data\n'
            '    success, data = self._try_get_data()\n'
            '  File "D:\\Innovation day 2019\\python\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line 737, '
            'in _try_get_data\n'
            "    raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(pids_str))\n"
            'RuntimeError: DataLoader worker (pid(s) 18360) exited unexpectedly\n'
            '\n'
            'Process finished with exit code 1')
    found = [d for d in explain_stream(io.StringIO(text)) if d.rule]
    assert [d.rule for d in found] == ["data.worker_killed"], [d.rule for d in found]
    assert "18360" in found[0].summary
    assert [part["rule"] for part in found[0].facts["printed_with"]] == ["data.worker_queue_empty"]


def test_another_frameworks_empty_queue_is_not_the_dataloaders():
    # https://github.com/PaddlePaddle/PaddleOCR/issues/10557
    text = ('  File "/opt/conda/envs/py38/lib/python3.8/site-packages/paddle/fluid/dataloader/dataloader_iter.py", '
            'line 616, in _get_data\n'
            "    data = self._data_queue.get(timeout=self._timeout)\n"
            '  File "/opt/conda/envs/py38/lib/python3.8/multiprocessing/queues.py", line 108, in get\n'
            "    raise Empty\n"
            "_queue.Empty\n")
    assert all(d.rule != "data.worker_queue_empty" for d in explain_stream(io.StringIO(text)))


# --- checkpoints -----------------------------------------------------------------------------------

def test_a_zip_reader_enforce_names_its_source_line():
    d = explain_paste(corpus("r15_b.yaml#97"))
    assert_names(d, "data.checkpoint_corrupt", ["failed finding central directory", "inline_container.cc:145"])
    assert d.location.code == "network.load_state_dict(torch.load(save_path))"
