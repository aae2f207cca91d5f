"""Round-33 wordings for data (detection and speech frameworks, learners' material): each corpus message (verbatim from
the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named; other wordings of
the same families (from the threads cited in the rules) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_names, claimed_by, corpus_message, explain_paste


CORPUS_CASES = [
    ("r33_a.yaml#17", "data.detection_targets",
     ["[500.728515625, 533.3333129882812, 231.10546875, 255.2083282470703]", "index 0"]),
    ("r33_a.yaml#18", "data.detection_targets",
     ["[290.4849853515625, 220.80001831054688, 295.81500244140625, 220.80001831054688]", "index 0"]),
    ("r33_a.yaml#28", "data.detectron2_metadata_conflict",
     ["thing_dataset_id_to_contiguous_id", "coco_2017_train", "{1: 0}", "{0: 0}"]),
    ("r33_a.yaml#50", "data.mmdet_num_classes_mismatch",
     ["`num_classes` (80)", "`CLASSES` 54", "UniFormer", "CocoDataset"]),
    ("r33_a.yaml#70", "data.pycocotools_results_mismatch", ["loadRes", "image_id"]),
    ("r33_b.yaml#13", "data.audio_load_failed", ["test.mp3", "Invalid argument"]),
    ("r33_b.yaml#17", "data.whisper_labels_too_long", ["495", "448"]),
    ("r33_b.yaml#41", "data.hf_cant_load_pretrained", ["pretrained_models/roberta-base", "bert-base-uncased"]),
    ("r33_b.yaml#42", "data.hf_cant_load_pretrained", ["/content/model_path", "RobertaTokenizerFast"]),
    ("r33_b.yaml#46", "data.state_dict_keys", ["CrfTagger", "encoder._module"]),
    ("r33_b.yaml#49", "data.state_dict_keys", ["TransformerSrlSpan", "transformer.embeddings.position_ids"]),
    ("r33_b.yaml#51", "data.unpickle_class_missing", ["_default_unk_index", "torchtext.vocab"]),
    ("r33_b.yaml#65", "data.ctc_labels_vocab_size", ["vocab_size: 29", "modeling_wav2vec2_bert.py"]),
    ("r33_b.yaml#66", "data.ctc_decoder_alphabet_missing", ["{'', '⁇', ' '}"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("text, rule, values", [
    # detectron2's class names registered twice (detectron2#2294)
    ("AssertionError: Attribute 'thing_classes' in the metadata of 'Fishes_train' cannot be set to a different value!\n"
     "['fish_ariaco', 'fish_cavala'] != ['body', 'fish', 'fish']", "data.detectron2_metadata_conflict",
     ["thing_classes", "Fishes_train", "['fish_ariaco', 'fish_cavala']", "['body', 'fish', 'fish']"]),
    # MMDetection 2.x with the mask head left at 80 (mmdetection#7460), and 3.x's unquoted wording (mmdetection#11986)
    ("AssertionError: The `num_classes` (80) in FCNMaskHead of MMDistributedDataParallel does not matches the length of "
     "`CLASSES` 97) in CocoDataset", "data.mmdet_num_classes_mismatch", ["FCNMaskHead", "`num_classes` (80)", "97"]),
    ("AssertionError: The num_classes (3) in SSDHead of SingleStageDetector does not matches the length of classes 80) "
     "in CocoDataset", "data.mmdet_num_classes_mismatch", ["SSDHead", "(3)", "80"]),
    # pycocotools' frame of another release (PaddleDetection#2043), and its sibling assertion (cocoapi#401)
    ('  File "/home/zzf/miniconda3/envs/torch1.7.1/lib/python3.7/site-packages/pycocotools/coco.py", line 388, in '
     "loadRes\n    'Results do not correspond to current coco set'\nAssertionError: Results do not correspond to "
     "current coco set", "data.pycocotools_results_mismatch", ["loadRes", "image_id"]),
    ("AssertionError: results in not an array of objects", "data.pycocotools_results_mismatch",
     ["results in not an array of objects"]),
    # the config's 1.x wording (GPT2-Chinese#183)
    ("OSError: Model name 'model/final_model' was not found in model name list (gpt2, gpt2-medium, gpt2-large, "
     "distilgpt2). We assumed 'model/final_model' was a path or url to a configuration file named config.json or a "
     "directory containing such a file but couldn't find any such file at this path or url.",
     "data.hf_cant_load_pretrained", ["model/final_model", "config.json", "gpt2"]),
    # AllenNLP's own key check with unexpected keys only (DeCLUTR#164)
    ("RuntimeError: Error loading state dict for DeCLUTR\n    Missing keys: []\n    Unexpected keys: "
     "['_text_field_embedder.token_embedder_tokens.transformer_model.roberta.pooler.dense.weight', "
     "'_text_field_embedder.token_embedder_tokens.transformer_model.roberta.pooler.dense.bias']",
     "data.state_dict_keys", ["DeCLUTR", "_text_field_embedder.token_embedder_tokens.transformer_model.roberta.pooler"]),
    # TF's CTC model, same message (transformers#18096)
    ("ValueError: Label values must be <= vocab_size: 30", "data.ctc_labels_vocab_size", ["vocab_size: 30"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    assert_names(explain_paste(text), rule, values)


@pytest.mark.parametrize("text, not_rule", [
    # sahi's warning that metadata is missing (sahi#586)
    ("WARNING - sahi.model -   Attribute 'thing_classes' does not exist in the metadata of dataset 'dataset_name': "
     "metadata is empty.", "data.detectron2_metadata_conflict"),
    # TensorFlow's CTC loss naming num_classes (DeepSpeechRecognition#51)
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Saw a non-null label (index >= num_classes - 1) "
     "following a null label, batch: 1 num_classes: 126 labels: ", "data.mmdet_num_classes_mismatch"),
    # a forced aligner's own target check (ctc-forced-aligner#75)
    ("ValueError: targets values must be within [0, log_probs.shape[-1])", "data.ctc_labels_vocab_size"),
    ("ValueError: targets values must be within [0, log_probs.shape[-1])", "data.ctc_decoder_alphabet_missing"),
    # the tokenizer's length warning is not Whisper's labels check (whisper-plus#33)
    ("Token indices sequence length is longer than the specified maximum sequence length for this model",
     "data.whisper_labels_too_long"),
    # an evaluator's KeyError on a file name (mmpose#922) is not pycocotools' id check
    ("KeyError: '/0000115_img.png'", "data.pycocotools_results_mismatch"),
    # a pickled class of a library outside the list (sklearn) stays unclaimed by the library branch
    ("AttributeError: Can't get attribute 'Tree' on <module 'sklearn.tree._tree'>", "data.unpickle_class_missing"),
])
def test_near_misses_stay_with_other_rules(text, not_rule):
    assert not_rule not in claimed_by(text)


def test_allennlp_position_ids_names_the_version_mismatch():
    diagnosis = explain_paste(corpus_message("r33_b.yaml#49"))
    assert "transformers" in diagnosis.summary and "strict=False" in diagnosis.summary
