"""Round-45 wordings of everyday errors in small research repositories (a config key, a count iterated over, an
empty sequence unpacked, a trainer's assert, a ComfyUI node's assert, a wrapped import paste, a PEP 604 union on an
old Python, Python's round() on a tensor, torch 1.x wordings of a missing forward and of a float64 target in backward,
Windows multiprocessing pipes, and three warnings: meshgrid's indexing, torch.save's container source, a nan in a
training log): each corpus message (verbatim from the opened rounds) is claimed, from its text alone, by the right
rule with the values it holds named the way the coverage judge reads them; other wordings of the same families (from
the threads cited) are claimed too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r45_c.yaml#9", "other.db_experiment_base_yaml", ["Experiment", 'train.py", line 60']),
    ("r45_c.yaml#10", "other.int_not_iterable", ['main.py", line 244', "int"]),
    ("r45_c.yaml#12", "other.unpack_empty_sequence", ['train.py", line 760', "3", "0"]),
    ("r45_c.yaml#18", "other.codeslake_trainer_norm_zero", ['run.py", line 88', "self.norm"]),
    ("r45_c.yaml#23", "other.comfy_rvc_train_model_missing", ['rvc_nodes.py", line 482', "Encyclopedia_40k.pth"]),
    ("r45_c.yaml#27", "other.union_operator_old_python", ["torch._C._TensorMeta", "|"]),
    ("r45_c.yaml#28", "other.tensor_builtin_round", ["__round__", 'runner.py", line 332']),
    ("r45_c.yaml#44", "other.import_name_missing", ["NamingEnhancementModel", "models.model", 'train.py", line 11']),
    ("r45_c.yaml#57", "other.meshgrid_indexing_warning", ["torch.meshgrid", "TensorShape.cpp:3526"]),
    ("r45_c.yaml#77", "other.module_forward_missing", ["_forward_unimplemented", 'module.py", line 201']),
    ("r45_c.yaml#80", "other.mp_pipe_ended_windows", ["109", 'connection.py", line 321']),
    ("r45_c.yaml#81", "other.container_source_warning", ["serialization.py:292", "DocumentRNNEmbeddings"]),
    ("r45_c.yaml#67", "numerics.loss_nan_log", ["nan", "200", "526"]),
    ("r45_c.yaml#70", "dtype.target_float", ["Float", "Double", 'train_DistributedDataParallel.py", line 306']),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # DB's base*.yaml holds no Experiment: the README's experiment files do
    assert_names(explain_paste(corpus_message("r45_c.yaml#9")), "other.db_experiment_base_yaml", ["base*.yaml"])
    # torch.Tensor's class is the metaclass the message names
    assert_names(explain_paste(corpus_message("r45_c.yaml#27")), "other.union_operator_old_python",
                 ["Python 3.10", "`Tensor`"])
    # serialization.py:292 is torch 1.3's bug, and the model was saved anyway
    assert_names(explain_paste(corpus_message("r45_c.yaml#81")), "other.container_source_warning",
                 ["pytorch/pytorch#27972", "not an error"])
    # PVDNet's self.norm counts the epoch's samples: 0 is an empty loader
    assert_names(explain_paste(corpus_message("r45_c.yaml#18")), "other.codeslake_trainer_norm_zero", ["no batch"])
    # the project's own models/ folder, not an installed release
    assert_names(explain_paste(corpus_message("r45_c.yaml#44")), "other.import_name_missing", ["models/model.py"])
    # the statement's comprehension names what was empty
    assert_names(explain_paste(corpus_message("r45_c.yaml#12")), "other.unpack_empty_sequence", ["`valid_metrics`"])


@pytest.mark.parametrize("text, rule, values", [
    # Python 3.9 on a `-> [int | None]` annotation (woctezuma/steam-market#20)
    ("Traceback (most recent call last):\n  File \"C:\\Users\\PC\\Desktop\\steam-market-master\\market_listing.py\", "
     "line 75, in <module>\n    def parse_item_type_no_from_script(last_script: str) -> [int | None]:\nTypeError: "
     "unsupported operand type(s) for |: 'type' and 'NoneType'",
     "other.union_operator_old_python", ["NoneType", "Python 3.10"]),
    # a typing alias on the right (felipeangelimvieira/prophetverse#79)
    ("def match_columns(self, columns: pd.Index | List[str]) -> pd.Index:\nTypeError: unsupported operand type(s) for |: "
     "'type' and '_GenericAlias'", "other.union_operator_old_python", ["_GenericAlias", "pd.Index | List[str]"]),
    # a builtin generic on the left (signalbot-org/signalbot#52)
    ("TypeError: unsupported operand type(s) for |: 'types.GenericAlias' and 'type'",
     "other.union_operator_old_python", ["types.GenericAlias"]),
    # Pyomo/mpi-sppy#612
    ("TypeError: unsupported operand type(s) for |: 'type' and 'NoneType'", "other.union_operator_old_python",
     ["Python 3.9"]),
    # round() on a value indexed from a prediction (docling-project/docling-ibm-models#62)
    ("  File \"/Users/s_higuchi/project/docling_debug/docling-ibm-models/demo/demo_layout_predictor.py\", line 55, in "
     "demo\n    round(pred[\"l\"]),\nTypeError: type Tensor doesn't define __round__ method",
     "other.tensor_builtin_round", ["round(pred[\"l\"])", "__round__"]),
    # a box coordinate (marvis/pytorch-yolo3#28)
    (">  File \"pytorch-yolo3-python3/utils.py\", line 211, in plot_boxes_cv2\n    x1 = int(round((box[0] - box[2]/2.0) "
     "* width))\nTypeError: type Tensor doesn't define __round__ method", "other.tensor_builtin_round", ["__round__"]),
    # the same line on Zhang-Jack/adversarial_yolo2#1
    ("  File \"D:\\adversarial_yolo2-master\\utils.py\", line 217, in plot_boxes_cv2\n    x1 = int(round((box[0] - "
     "box[2]/2.0) * width))\nTypeError: type Tensor doesn't define __round__ method",
     "other.tensor_builtin_round", [".item()"]),
    # meshgrid's warning from other torch builds (facebookresearch/nougat#212, desResLab/LINFA#1, pytorch/vision#4645)
    ("/usr/local/lib/python3.11/site-packages/torch/functional.py:507: UserWarning: torch.meshgrid: in an upcoming "
     "release, it will be required to pass the indexing argument. (Triggered internally at /Users/runner/work/pytorch/"
     "pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:3550.)\n  return _VF.meshgrid(tensors, **kwargs)  # type: "
     "ignore[attr-defined]", "other.meshgrid_indexing_warning", ["indexing='ij'", "functional.py:507"]),
    ("/opt/hostedtoolcache/Python/3.8.17/x64/lib/python3.8/site-packages/torch/functional.py:504: UserWarning: "
     "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. (Triggered internally "
     "at ../aten/src/ATen/native/TensorShape.cpp:3190.)\n  return _VF.meshgrid(tensors, **kwargs)  # type: "
     "ignore[attr-defined]", "other.meshgrid_indexing_warning", ["torch.meshgrid"]),
    ("UserWarning: torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument",
     "other.meshgrid_indexing_warning", ["not an error"]),
    # the torch 1.3 warning for torch's own Linear (pytorch/pytorch#27972) and a tutorial's Encoder
    # (sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning#96)
    ("[..]/lib/python3.6/site-packages/torch/serialization.py:292: UserWarning: Couldn't retrieve source code for "
     "container of type Linear. It won't be checked for correctness upon loading. \"type \" + obj.__name__ + \". It "
     "won't be checked \"", "other.container_source_warning", ["`Linear`", "torch 1.3"]),
    ("python3.6/site-packages/torch/serialization.py:292: UserWarning: Couldn't retrieve source code for container of "
     "type Encoder. It won't be checked for correctness upon loading.\n  \"type \" + obj.__name__ + \". It won't be "
     "checked \"", "other.container_source_warning", ["`Encoder`"]),
    # the worker's side of the Windows pipe (tristandeleu/pytorch-maml-rl#68)
    ("Traceback (most recent call last):\n  File \"D:\\Anaconda3\\envs\\testenv\\lib\\multiprocessing\\process.py\", "
     "line 258, in _bootstrap\n    self.run()\n  File \"F:\\aa_maml\\MAML-Pytorch-RL-master\\maml_rl\\envs\\"
     "subproc_vec_env.py\", line 61, in run\n    command, data = self.remote.recv()\n  File \"D:\\Anaconda3\\envs\\"
     "testenv\\lib\\multiprocessing\\connection.py\", line 312, in _recv_bytes\n    nread, err = "
     "ov.GetOverlappedResult(True)\n  File \"D:\\Anaconda3\\envs\\testenv\\lib\\multiprocessing\\connection.py\", line "
     "250, in recv\n    buf = self._recv_bytes()\n  File \"D:\\Anaconda3\\envs\\testenv\\lib\\multiprocessing\\"
     "connection.py\", line 321, in _recv_bytes\n    raise EOFError\nEOFError\nBrokenPipeError: [WinError 109] ",
     "other.mp_pipe_ended_windows", ["waiting for its parent", "subproc_vec_env.py:61"]),
    # the overlapped read's own frame (Unity-Technologies/ml-agents#4061)
    ("Traceback (most recent call last):\nFile \"C:\\Users\\user\\anaconda3\\envs\\mlagentsrelease1\\lib\\"
     "multiprocessing\\connection.py\", line 312, in _recv_bytes\nnread, err = ov.GetOverlappedResult(True)\n"
     "BrokenPipeError: [WinError 109]", "other.mp_pipe_ended_windows", ["109", "connection.py:312"]),
    # another model name, the same node (SayanoAI/Comfy-RVC#13)
    ("  File \"E:\\ComfyUI-aki-v1.3\\custom_nodes\\Comfy-RVC\\custom_nodes\\rvc_nodes.py\", line 482, in train_model\n"
     "    assert os.path.isfile(model_path), f\"Failed to train model {model_path}...\"\nAssertionError: Failed to train "
     "model E:\\ComfyUI-aki-v1.3\\models\\RVC\\cxk_48k.pth...", "other.comfy_rvc_train_model_missing",
     ["cxk_48k.pth", "previous steps errored"]),
    # DB's base yaml named on the command line (MhLiao/DB#43, MhLiao/DB#8)
    ("Dear author, I wanted to train the model with command \"python train.py experiments/seg_detector/"
     "base_totaltext.yaml --num_gpus 8\", and the error raise that\n  File \"train.py\", line 72, in <module>\n    main()"
     "\n  File \"train.py\", line 62, in main\n    experiment_args = conf.compile(conf.load(args['exp']))['Experiment']\n"
     "KeyError: 'Experiment'", "other.db_experiment_base_yaml", ["base_totaltext.yaml", "train.py"]),
    ("(db) home@home-desktop:~/p9/DB$ python eval.py ./experiments/seg_detector/base.yaml --resume ./modelz/"
     "totaltext_resnet50 --polygon --box_thresh 0.6\nTraceback (most recent call last):\n  File \"eval.py\", line 193, in "
     "<module>\n    main()\n  File \"eval.py\", line 75, in main\n    experiment_args = conf.compile(conf.load("
     "args['exp']))['Experiment']\nKeyError: 'Experiment'", "other.db_experiment_base_yaml", ["eval.py", "base.yaml"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # `&` of a bool and a tensor: values, not a type hint (pyro-ppl/pyro#2764)
    ("TypeError: unsupported operand type(s) for &: 'bool' and 'Tensor'", "other.union_operator_old_python"),
    # round() on None, not a tensor (cortes-ciriano-lab/savana#10)
    ("self.stats = {key : round(stat_dict[key], 2) for key in stat_dict}\nTypeError: type NoneType doesn't define "
     "__round__ method", "other.tensor_builtin_round"),
    # the Windows pipe's POSIX cousin while spawning DataLoader workers (pytorch/tutorials#457): data.windows_broken_pipe's
    ("BrokenPipeError: [Errno 32] Broken pipe", "other.mp_pipe_ended_windows"),
    # the backward wording with no backward in sight (the error line the SuperGlue thread's title quotes)
    ("RuntimeError: output with backend CUDA and dtype Float doesn't match the desired backend CUDA and dtype Double",
     "dtype.target_float"),
    # a config KeyError of another project (apexrl/COIL#1)
    ("File \"bc_exp_script.py\", line 26, in experiment\n    print(variant['expert_name'])\nKeyError: 'expert_name'",
     "other.db_experiment_base_yaml"),
    # some values, too few: not an empty sequence (singhsourabh/Resume-NER#5)
    ("ValueError: not enough values to unpack (expected 2, got 1)", "other.unpack_empty_sequence"),
    # a tensor method returned a Python number: no name iterated (iflytek/cino#15)
    ("File \"G:/少数/CINO/Chinese-Minority-PLM-main/examples/TNCC/finetune/run_finetune.py\", line 137, in predict\n"
     "    test_true.extend(y.squeeze().cpu().numpy().tolist())\nTypeError: 'int' object is not iterable",
     "other.int_not_iterable"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
