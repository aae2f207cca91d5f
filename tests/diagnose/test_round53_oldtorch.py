"""Round-53 wordings of torch 0.x and Python 2 era code (2017-2018 threads, and later runs of code of that age): a torch
0.3 repackage_hidden iterating a 0-d tensor, torch.load of Python 2 pickles, nn.init's underscore names on torch 0.3,
torch 0.3's Variable[...] dtype wording, a DataLoader worker's KeyError quoted by Python 2, an optimizer state read by
id(param), a module called like its class, bash's segfault report of a script's command, glibc's heap check in the
driver's cuInit, THC's error 30 with its RuntimeError, a nan after a timer line, markdown-bolded key lists: each corpus
message (verbatim from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds
named the way the coverage judge reads them; other wordings of the same families (from the threads cited) are claimed
too, and near misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste, said


CORPUS_CASES = [
    ("r53_a.yaml#2", "data.worker_error", ['dataloader.py", line 204', "height"]),
    ("r53_a.yaml#3", "other.optimizer_state_dict_id_keys", ["KeyError", 'net2wider.py", line 84', "state_dict()"]),
    ("r53_a.yaml#4", "other.native_segfault", ["Segmentation fault", "test.py"]),
    ("r53_a.yaml#5", "numerics.loss_nan_log", ["nan", "30.8207"]),
    ("r53_a.yaml#19", "data.state_dict_keys", ["VideoMatchRCNN", "module.backbone.body.conv1.weight"]),
    ("r53_a.yaml#22", "other.zero_dim_iteration", ['train.py", line 94', "repackage_hidden"]),
    ("r53_a.yaml#24", "other.python_module_called", ["Fastformer"]),
    ("r53_a.yaml#28", "data.torch_load_py2_pickle", ["ascii", "0xc3", 'demo.py", line 15', "hgreg-3d.pth"]),
    ("r53_a.yaml#29", "data.torch_load_py2_pickle", ["0x8c", 'main.py", line 68', "torch.load"]),
    ("r53_a.yaml#30", "data.torch_load_py2_pickle", ["0xc3", 'run_placesCNN_basic.py", line 26']),
    ("r53_a.yaml#31", "data.torch_load_py2_pickle", ["0x95", 'infer_simple.py", line 129', "magic_number"]),
    ("r53_a.yaml#42", "other.torch_attribute_missing", ["kaiming_normal_", 'aspp.py", line 26']),
    ("r53_a.yaml#43", "other.torch_attribute_missing", ["kaiming_normal_", 'densenet.py", line 213',
                                                        'dehaze22.py", line 411']),
    ("r53_a.yaml#53", "dtype.argument_type_mismatch", ["Variable[torch.FloatTensor]", "Variable[torch.DoubleTensor]",
                                                       "'other'"]),
    ("r53_a.yaml#54", "other.native_heap_corruption", ["cuInit", "libcuda.so.1"]),
    ("r53_a.yaml#56", "device.cuda_runtime_error", ["cuda runtime error (30)", "_cuda_init", "THCGeneral.cpp:51"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # torch 0.3's helper: `type(h) == Variable` is false for every tensor since 0.4
    diagnosis = explain_paste(corpus_message("r53_a.yaml#22"))
    assert_names(diagnosis, "other.zero_dim_iteration", ["`type(h) == Variable`", "torch 0.4 merged Variable"])
    assert any("isinstance(h, torch.Tensor)" in fix for fix in diagnosis.fixes)
    # a checkpoint torch saved under Python 2 (the unpickler) against a Python 2 pickle that is no checkpoint (the
    # magic number): Detectron's .pkl given to --load_ckpt
    assert_names(explain_paste(corpus_message("r53_a.yaml#30")), "data.torch_load_py2_pickle",
                 ["Python 3.6", "encoding='latin1'", "not damaged"])
    assert_names(explain_paste(corpus_message("r53_a.yaml#31")), "data.torch_load_py2_pickle",
                 ["`pickle_module=cPickle`", "not a torch checkpoint", "--load_detectron"])
    # torchvision's model code newer than torch 0.3, built by the program's line
    assert_names(explain_paste(corpus_message("r53_a.yaml#43")), "other.torch_attribute_missing",
                 ["densenet.py:213", "pytorch/vision#481", "`haze_class = models.densenet121(pretrained=True)`"])
    # the optimizer's state keyed by position since torch 1.6, the code's key an id
    assert_names(explain_paste(corpus_message("r53_a.yaml#3")), "other.optimizer_state_dict_id_keys",
                 ["`p.raw_id`", "torch 1.6", "optimizer.state[p]"])
    # the driver's own library freed the memory in cuInit
    assert_names(explain_paste(corpus_message("r53_a.yaml#54")), "other.native_heap_corruption",
                 ["freed in `libcuda.so.1`", "`cuInit` in `libcuda.so.1`", "driver install"])
    # the loss finite one line of log before the nan, a timer line between
    assert_names(explain_paste(corpus_message("r53_a.yaml#5")), "numerics.loss_nan_log", ["logged 30.8207: the loss was finite just before"])
    # Python 2's quoted KeyError of torch 0.3's re-raise, the worker's own line unquoted
    assert_names(explain_paste(corpus_message("r53_a.yaml#2")), "data.worker_error",
                 ["KeyError: 'height'", "self.info['images'][ix]['height']", "Python 2"])
    # float64 against float32, torch 0.3's wording
    assert_names(explain_paste(corpus_message("r53_a.yaml#53")), "dtype.argument_type_mismatch",
                 ["float64 met float32", "torch 0.3's"])
    # the shell script's line and the command it ran
    assert_names(explain_paste(corpus_message("r53_a.yaml#4")), "other.native_segfault",
                 ["./demo_test.sh at its line 30", "`python3 -u test.py"])


@pytest.mark.parametrize("text, rule, values", [
    # repackage_hidden of torch 0.3 under 0.4 (vanzytay/pytorch_sentiment_rnn#8)
    ('Traceback (most recent call last):\n  File "main_pf.py", line 196, in <module>\n    train()\n'
     '  File "main_pf.py", line 156, in train\n    hidden = repackage_hidden(hidden)\n'
     '  File "main_pf.py", line 126, in repackage_hidden\n    return tuple(repackage_hidden(v) for v in h)\n'
     '  File "main_pf.py", line 126, in <genexpr>\n    return tuple(repackage_hidden(v) for v in h)\n'
     '  File "main_pf.py", line 126, in repackage_hidden\n    return tuple(repackage_hidden(v) for v in h)\n'
     '  File "main_pf.py", line 126, in <genexpr>\n    return tuple(repackage_hidden(v) for v in h)\n'
     '  File "main_pf.py", line 126, in repackage_hidden\n    return tuple(repackage_hidden(v) for v in h)\n'
     '  File "main_pf.py", line 126, in <genexpr>\n    return tuple(repackage_hidden(v) for v in h)\n'
     '  File "main_pf.py", line 126, in repackage_hidden\n    return tuple(repackage_hidden(v) for v in h)\n'
     '  File "main_pf.py", line 126, in <genexpr>\n    return tuple(repackage_hidden(v) for v in h)\n'
     '  File "main_pf.py", line 126, in repackage_hidden\n    return tuple(repackage_hidden(v) for v in h)\n'
     '  File "/root/anaconda3/lib/python3.6/site-packages/torch/tensor.py", line 360, in __iter__\n'
     "    raise TypeError('iteration over a 0-d tensor')\nTypeError: iteration over a 0-d tensor",
     "other.zero_dim_iteration", ["`repackage_hidden` (main_pf.py:126", "torch 0.3"]),
    # a SRDenseNet model saved under Python 2 (twtygqyy/pytorch-SRDenseNet#9)
    ('Traceback (most recent call last):\n'
     '  File "D:/ProgramData/twt-pytorch-SRDenseNet-master/eval.py", line 31, in <module>\n'
     '    model = torch.load(opt.model)["model"]\n'
     '  File "D:\\ProgramData\\Anaconda3\\lib\\site-packages\\torch\\serialization.py", line 303, in load\n'
     "    return _load(f, map_location, pickle_module)\n"
     '  File "D:\\ProgramData\\Anaconda3\\lib\\site-packages\\torch\\serialization.py", line 469, in _load\n'
     "    result = unpickler.load()\n"
     "UnicodeDecodeError: 'ascii' codec can't decode byte 0xc3 in position 918: ordinal not in range(128)",
     "data.torch_load_py2_pickle", ['`model = torch.load(opt.model)["model"]`', "0xc3", "position 918"]),
    # a Detectron model-zoo .pkl given to Detectron.pytorch's --load_ckpt (roytseng-tw/Detectron.pytorch#116)
    ('  File "/home/arunirc/anaconda2/envs/detectron-video/lib/python3.6/site-packages/torch/serialization.py", '
     "line 410, in _load\n    magic_number = pickle_module.load(f)\n"
     "UnicodeDecodeError: 'ascii' codec can't decode byte 0x95 in position 6: ordinal not in range(128)",
     "data.torch_load_py2_pickle", ["not a torch checkpoint", "Detectron"]),
    # torch 0.3's nn.init.normal under Python 3's wording (leeyeehoo/CSRNet-pytorch#45)
    ("AttributeError: module 'torch.nn.init' has no attribute 'normal_'", "other.torch_attribute_missing",
     ["torch 0.4", "`normal`"]),
    # DrNAS's helper on torch 1.11 (xiangning-chen/DrNAS#7)
    ("state_old = optimizer_old.state_dict()['state'][p.raw_id]\nKeyError: 140435163178672",
     "other.optimizer_state_dict_id_keys", ["140435163178672", "`p.raw_id`"]),
    # a folder called like the function it holds (JakeRenn/AI-Challenger-Keypoints-pytorch#9)
    ('Traceback (most recent call last):\n'
     '  File "D:/work/test/AI-Challenger-Keypoints-pytorch-master/tools/ptest.py", line 133, in <module>\n'
     "    main()\n"
     '  File "D:/work/test/AI-Challenger-Keypoints-pytorch-master/tools/ptest.py", line 71, in main\n'
     "    test(test_loader, all_model)\n"
     '  File "D:/work/test/AI-Challenger-Keypoints-pytorch-master/tools/ptest.py", line 115, in test\n'
     "    out_list = src.utils.bux.nms_fm(out_detect, out_group, threshold=0.3, extra_space=5)\n"
     '  File "D:\\work\\test\\AI-Challenger-Keypoints-pytorch-master\\src\\utils\\bux.py", line 19, in nms_fm\n'
     "    cc, yy, xx = nms(detect_fm, threshold, extra_space)\nTypeError: 'module' object is not callable",
     "other.python_module_called", ["`nms`", "`cc, yy, xx = nms(detect_fm, threshold, extra_space)`"]),
    # the same shell script, another line (CSAILVision/semantic-segmentation-pytorch#39)
    ("`./demo_test.sh: line 27:   221 Segmentation fault      (core dumped) python3 -u test.py --model_path "
     "$MODEL_PATH --test_img $TEST_IMG --arch_encoder resnet50_dilated8 --arch_decoder ppm_bilinear_deepsup --fc_dim "
     "2048 --result $RESULT_PATH\n`", "other.native_segfault", ["./demo_test.sh at its line 27", "python3 -u test.py"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, said(diagnosis))


@pytest.mark.parametrize("text, not_rule", [
    # len() of a scalar stays a shape question (fastai/fastai#1583)
    ("TypeError: len() of a 0-d tensor", "other.zero_dim_iteration"),
    # pickle.load of a Python 2 pickle with no torch frame (pytorch/pytorch#19203)
    ("UnicodeDecodeError: 'ascii' codec can't decode byte 0xe1 in position 2: ordinal not in range(128)",
     "data.torch_load_py2_pickle"),
    # an optimizer state saved by parameter names, looked up by one it lacks (princeton-nlp/LESS#44)
    ('    avg = torch.cat([optimizer_state[n]["exp_avg"].view(-1) for n in names])\n'
     "                     ~~~~~~~~~~~~~~~^^^\n"
     "KeyError: 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight'",
     "other.optimizer_state_dict_id_keys"),
    # a module looked up by name from a config, its result called (yassouali/pytorch-segmentation#131)
    ('Traceback (most recent call last):\n  File "train.py", line 72, in <module>\n    main(config, args.resume)\n'
     '  File "train.py", line 32, in main\n'
     "    train_loader = get_instance(dataloaders, 'train_loader', config)\n"
     '  File "train.py", line 26, in get_instance\n'
     "    return getattr(module, config[name]['type'])(*args, **config[name]['args'])\n"
     "TypeError: 'module' object is not callable", "other.python_module_called"),
    # a CPU tensor against a CUDA one in torch 0.3's wording: a device question (device.mismatch's example)
    ("RuntimeError: Expected object of type Variable[torch.FloatTensor] but found type Variable[torch.cuda.FloatTensor] "
     "for argument #1 'other'", "dtype.argument_type_mismatch"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_a_torch_module_file_called_keeps_its_own_rule():
    # torch.cuda.amp.autocast_mode() (aladdinpersson/Machine-Learning-Collection#147): torch's module file, not a
    # program's import
    text = ('Traceback (most recent call last):\n  File "c:\\Users\\hp\\VSCode projcts\\trainunet.py", line 143, in '
            '<module>\n    main()\n  File "c:\\Users\\hp\\VSCode projcts\\trainunet.py", line 120, in main\n'
            "    train_fn(train_loader, model,optimizer,loss_fn, scaler)\n"
            '  File "c:\\Users\\hp\\VSCode projcts\\trainunet.py", line 39, in train_fn\n'
            "    with torch.cuda.amp.autocast_mode():\nTypeError: 'module' object is not callable")
    assert explain_paste(text).rule == "other.torch_submodule_called"


def test_len_of_a_scalar_keeps_the_shape_reading():
    assert explain_paste("TypeError: len() of a 0-d tensor").rule == "shape.zero_dim_dimension"
