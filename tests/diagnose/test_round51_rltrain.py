"""Round-51 wordings of reinforcement-learning training runs (devices, view sizes, RNN input checks under RLlib, kernel
images in Isaac Sim, NaN metric logs, slow tensor-from-list warnings, non-tuple indexing warnings, OOM with allocator
warnings, autograd with fork, DataParallel gather warnings, mpirun and Ray actor deaths): each corpus message (verbatim
from the opened rounds) is claimed, from its text alone, by the right rule with the values it holds named the way the
coverage judge reads them; other wordings of the same families (from the threads cited) are claimed too, and near
misses stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r51_a.yaml#18", "device.mismatch", ["cuda:0", "cpu"]),
    ("r51_a.yaml#22", "shape.view_size", ["[-1, 3]", "2", "PolicyGradient.py, line 434"]),
    ("r51_a.yaml#23", "shape.rnn_input_size", ['recurrent_net.py", line 274']),
    ("r51_a.yaml#30", "device.no_kernel_image", ['tensor.py", line 54', "torch.arange"]),
    ("r51_a.yaml#42", "numerics.rl_metrics_nan", ["model_loss/Average", "grad_norm_actor/Average"]),
    ("r51_a.yaml#47", "other.tensor_from_ndarray_list", ["networks.py:91", "tensor_new.cpp:204"]),
    ("r51_a.yaml#53", "other.non_tuple_index_warning", ["actor_critic.py:161", "python_variable_indexing.cpp:306"]),
    ("r51_a.yaml#56", "memory.cuda_oom", ["954.00 MiB", "23.51 GiB", "1000341504"]),
    ("r51_a.yaml#61", "autograd.fork_after_autograd", ["fork"]),
    ("r51_a.yaml#68", "distributed.dataparallel_gather_scalars", ["_functions.py:61"]),
    ("r51_a.yaml#70", "distributed.mpi_fork_failed", ['mpi_tools.py", line 97', "mpirun"]),
    ("r51_a.yaml#75", "numerics.rl_metrics_nan", ["rollout/advantages_mean", "train/actor/grad_norm", "nan"]),
    ("r51_a.yaml#78", "distributed.ray_worker_died", ['main_ppo.py", line 215', "SYSTEM_ERROR"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_the_reasons_the_corpus_messages_hold_are_read():
    # RLlib's own LSTM (use_lstm=True) sized from the wrapped model's num_outputs
    assert_names(explain_paste(corpus_message("r51_a.yaml#23")), "shape.rnn_input_size", ["use_lstm=True", "num_outputs"])
    # a plain torch.arange in Isaac Sim's utilities: torch itself lacks the GPU's kernels (an RTX 50-series, sm_120)
    assert_names(explain_paste(corpus_message("r51_a.yaml#30")), "device.no_kernel_image",
                 ["PyTorch itself", "Isaac Sim", "sm_120"])
    # the advantages went nan first, before any update: the rollout's data or its normalisation
    assert_names(explain_paste(corpus_message("r51_a.yaml#75")), "numerics.rl_metrics_nan",
                 ["standard deviation of 0", "train/actor/policy_loss"])
    # Open MPI's signal line under the launcher's report: a rank crashed in native code
    assert_names(explain_paste(corpus_message("r51_a.yaml#70")), "distributed.mpi_fork_failed",
                 ["*** Process received signal ***"])
    # the allocator's warning is the same request in bytes (954.00 MiB), with the driver's free and total memory
    diagnosis = explain_paste(corpus_message("r51_a.yaml#56"))
    assert_names(diagnosis, "memory.cuda_oom", ["CUDACachingAllocator.cpp:3934", "25243287552"], " ".join(diagnosis.fixes))
    # ML-Agents' own line, in an installed package
    assert_names(explain_paste(corpus_message("r51_a.yaml#47")), "other.tensor_from_ndarray_list",
                 ["installed package", "torch.as_tensor(vec_input)"])


@pytest.mark.parametrize("text, rule, values", [
    # the device check cut after its devices in other issues (hangyu94/Ada-CM#7, #10)
    ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu",
     "device.mismatch", ["cuda:0", "cpu"]),
    ("I had the same problem：Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
     "cpu\nmain:", "device.mismatch", ["cuda:0", "cpu"]),
    # rlpyt's table of another Dreamer run, its total loss nan (juliusfrost/dreamer-pytorch#82)
    ("2020-12-08 21:40:50.119935  | GameScore/Max                    -3\n"
     "2020-12-08 21:40:50.120008  | loss/Average                    nan\n"
     "2020-12-08 21:40:50.120074  | loss/Std                        nan\n"
     "2020-12-08 21:40:50.120137  | loss/Median                     nan\n"
     "2020-12-08 21:40:50.120201  | loss/Min                        nan\n"
     "2020-12-08 21:40:50.120264  | loss/Max                        nan",
     "numerics.rl_metrics_nan", ["loss/Average"]),
    # the slow-conversion warning in a vocoder's trainer, an RL library and a PR (kan-bayashi/ParallelWaveGAN#367,
    # AI4Finance-Foundation/ElegantRL#106, tingofurro/summac#18)
    ("train.py:600: UserWarning: Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
     "converting the list to a single numpy.ndarray with numpy.array() before converting to a tensor. (Triggered "
     "internally at  /opt/conda/conda-bld/pytorch_1640811806235/work/torch/csrc/utils/tensor_new.cpp:201.)\n"
     "  y_batch = torch.tensor(y_batch, dtype=torch.float).unsqueeze(1)  # (B, 1, T)",
     "other.tensor_from_ndarray_list", ["train.py:600", "tensor_new.cpp:201", "y_batch = torch.tensor(y_batch"]),
    ("```\n/usr/local/lib/python3.7/dist-packages/elegantrl/evaluator.py:126: UserWarning: Creating a tensor from a list "
     "of numpy.ndarrays is extremely slow. Please consider converting the list to a single numpy.ndarray with "
     "numpy.array() before converting to a tensor. (Triggered internally at  ../torch/csrc/utils/tensor_new.cpp:201.)   "
     "s_tensor = torch.as_tensor((state,), dtype=torch.float32, device=device)\n```",
     "other.tensor_from_ndarray_list", ["evaluator.py:126", "tensor_new.cpp:201", "installed package"]),
    ("summac/model_summac.py:301: UserWarning: Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
     "consider converting the list to a single numpy.ndarray with numpy.array() before converting to a tensor. "
     "(Triggered internally at ../torch/csrc/utils/tensor_new.cpp:261.)\n"
     "  histograms = torch.FloatTensor(histograms).to(self.device)",
     "other.tensor_from_ndarray_list", ["model_summac.py:301", "tensor_new.cpp:261", "torch.FloatTensor(histograms)"]),
    # the non-tuple index in a ComfyUI node's library, a wrapped paste and a CUDA padding routine
    # (ussoewwin/ComfyUI-QwenImageLoraLoader#16, OHDSI/DeepPatientLevelPrediction#152, NVlabs/earth2grid#56)
    ("...\\python_embeded\\Lib\\site-packages\\nunchaku\\lora\\flux\\utils.py:93: UserWarning: Using a non-tuple sequence "
     "for multidimensional indexing is deprecated and will be changed in pytorch 2.9; use x[tuple(seq)] instead of "
     "x[seq]. In pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], which will result either in "
     "an error or a different result (Triggered internally at C:\\actions-runner\\_work\\pytorch\\pytorch\\pytorch\\"
     "torch\\csrc\\autograd\\python_variable_indexing.cpp:351.)\n"
     "  result[[slice(0, extent) for extent in tensor.shape]] = tensor",
     "other.non_tuple_index_warning", ["utils.py:93", "python_variable_indexing.cpp:351", "installed package"]),
    ("User\nWarning: Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed \n"
     "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tens\n"
     "or index, x[torch.tensor(seq)], which will result either in an error or a different result (Triggere\n"
     "d internally at /pytorch/torch/csrc/autograd/python_variable_indexing.cpp:306.)\n"
     "  \"feature_ids\": self.data[\"feature_ids\"][[item]],",
     "other.non_tuple_index_warning", ["pytorch 2.9", "x[tuple(seq)]"]),
    ("PaddingBackends.cuda\n/workspace/earth2grid/healpix/_padding/pure_python.py:131: UserWarning: Using a non-tuple "
     "sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; use x[tuple(seq)] instead "
     "of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], which will result either "
     "in an error or a different result (Triggered internally at /opt/pytorch/pytorch/torch/csrc/autograd/"
     "python_variable_indexing.cpp:309.)\n  return x[slicers]",
     "other.non_tuple_index_warning", ["pure_python.py:131", "return x[slicers]", "python_variable_indexing.cpp:309"]),
    # autograd after fork in AutoGluon's scheduler, its line broken before "See" (autogluon/autogluon#619), and as
    # pyPESTO records it in a result (ICB-DCM/pyPESTO#1031)
    ("RuntimeError: Unable to handle autograd's threading in combination with fork-based multiprocessing. \n"
     "See https://github.com/pytorch/pytorch/wiki/Autograd-and-Fork.",
     "autograd.fork_after_autograd", ["fork", "'spawn'"]),
    ("'message': \"Unable to handle autograd's threading in combination with fork-based multiprocessing. See "
     "https://github.com/pytorch/pytorch/wiki/Autograd-and-Fork\",",
     "autograd.fork_after_autograd", ["fork", "Autograd-and-Fork"]),
    # Pyro's MCMC chains (sbi-dev/sbi#547)
    ("  File \"/usr/local/Caskroom/miniconda/base/envs/sbi_temp/lib/python3.9/site-packages/torch/autograd/__init__.py\", "
     "line 226, in grad\n    return Variable._execution_engine.run_backward(\nRuntimeError: Unable to handle autograd's "
     "threading in combination with fork-based multiprocessing. See https://github.com/pytorch/pytorch/wiki/"
     "Autograd-and-Fork\n[ERROR LOG CHAIN:3]Unable to handle autograd's threading in combination with fork-based "
     "multiprocessing. See https://github.com/pytorch/pytorch/wiki/Autograd-and-Fork",
     "autograd.fork_after_autograd", ["chain 3", "mp_context='spawn'"]),
    # hardmaru's mpi_fork in the World Models experiments, an abort (hardmaru/WorldModelsExperiments#5), and the same
    # traceback on one line (AppliedDataSciencePartners/WorldModels#13)
    ("`Traceback (most recent call last):\n  File \"train.py\", line 450, in <module>\n    if \"parent\" == "
     "mpi_fork(args.num_worker+1): os.exit()\n  File \"train.py\", line 424, in mpi_fork\n    subprocess.check_call("
     "[\"mpirun\", \"-np\", str(n), sys.executable] +['-u']+ sys.argv, env=env)\n  File \"/home/neptune/anaconda3/lib/"
     "python3.5/subprocess.py\", line 581, in check_call\n    raise CalledProcessError(retcode, cmd)\n"
     "subprocess.CalledProcessError: Command '['mpirun', '-np', '65', '/home/neptune/anaconda3/bin/python', '-u', "
     "'train.py']' returned non-zero exit status 134`",
     "distributed.mpi_fork_failed", ["train.py:424", "65", "134", "SIGABRT"]),
    ("Traceback (most recent call last): File \"05_train_controller.py\", line 521, in <module> if \"parent\" == "
     "mpi_fork(args.num_worker+1): os.exit() File \"05_train_controller.py\", line 491, in mpi_fork "
     "subprocess.check_call([\"mpirun\", \"-np\", str(n), sys.executable] +['-u']+ sys.argv, env=env) File "
     "\"/usr/lib/python3.6/subprocess.py\", line 291, in check_call raise CalledProcessError(retcode, cmd) "
     "subprocess.CalledProcessError: Command '['mpirun', '-np', '2', '/home/baheri/.virtualenvs/worldmodels/bin/python', "
     "'-u', '05_train_controller.py', 'car_racing', '--num_worker', '1', '--num_worker_trial', '1', '--num_episode', '4', "
     "'--max_length', '1000', '--eval_steps', '25']' returned non-zero exit status 1.",
     "distributed.mpi_fork_failed", ["05_train_controller.py:491", "mpirun"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


LAUNCH_SEGFAULT = (
    "subprocess.CalledProcessError: Command '['/opt/tiger/conda/bin/python3', '-u', 'train_imagenet.py', '--local_rank=7', "
    "'--save-dir', './fixArch_model/fixArch_model_0718_1817', '--epochs', '180', '--warmup-epoch', '5', "
    "'--total-batch-size', '1024', '--lr-strategy', 'warmup_cosine', '--weight-decay', '1e-5', '--dropout_rate', "
    "'0.0001', '--lr', '0.4', '--arch', 'nnflow_model_v2_woSE', '--image-size', '224', '--flops', '27.3', '--mix-prob', "
    "'0.0', '--mixup', '0.2', '--model-ema', '--data', '/opt/tiger', '--distill_type', 'KdPixelWise', '--teacher', "
    "'resnet152d', '--teacher_checkpoint', 'resnet152d.pth', '--resume', "
    "'./fixArch_model/fixArch_model_0718_1817/model.pth.tar']' died with <Signals.SIGSEGV: 11>.")


@pytest.mark.parametrize("text, not_rule", [
    # NumPy's own FutureWarning for an ndarray (popgenmethods/momi2#11): not torch's warning
    ("/home/share/biosoft/conda_env/momi2/lib/python3.6/site-packages/momi/compute_sfs.py:511: FutureWarning: Using a "
     "non-tuple sequence for multidimensional indexing is deprecated; use `arr[tuple(seq)]` instead of `arr[seq]`. In the "
     "future this will be interpreted as an array index, `arr[np.array(seq)]`, which will result either in an error or a "
     "different result.\n  [slice(None)]],", "other.non_tuple_index_warning"),
    # CUDA in a forked child (facebookresearch/pycls#183): device.cuda_forked_subprocess's
    ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the "
     "'spawn' start method", "autograd.fork_after_autograd"),
    # rlpyt's table while training is healthy (juliusfrost/dreamer-pytorch#52)
    ("2020-04-22T20:42:55.6596490Z 2020-04-22 20:42:54.226800  | Diagnostics/NewCompletedTrajs    0\n"
     "2020-04-22T20:42:55.6597090Z 2020-04-22 20:42:54.227001  | Diagnostics/StepsInTrajWindow    0\n"
     "2020-04-22T20:42:55.6597590Z 2020-04-22 20:42:54.227099  | Diagnostics/Iteration            9", "*"),
    # an mmengine log whose gradient norm alone is nan (InternLM/xtuner#187): numerics.grad_norm_log's
    ("10/30 22:19:57 - mmengine - INFO - Epoch(train) [1][240/735]  lr: 1.9813e-04  eta: 2:44:49  time: 2.8874  "
     "data_time: 0.0042  memory: 10762  loss: 2.5128  grad_norm: nan", "numerics.rl_metrics_nan"),
    # verl's console line with its step (verl-project/verl#498): numerics.loss_nan_log's
    ("step:1 - global_seqlen/min:2780.000 - global_seqlen/max:3103.000 - global_seqlen/minmax_diff:323.000 - "
     "global_seqlen/balanced_min:2927.000 - global_seqlen/balanced_max:2952.000 - global_seqlen/mean:2934.750 - "
     "critic/kl:-0.000 - critic/kl_coeff:0.040 - critic/vf_loss:nan - critic/vf_clipfrac:0.000 - critic/vpred_mean:nan "
     "- critic/grad_norm:nan - mfu/critic:0.036", "numerics.rl_metrics_nan"),
    # torch.distributed.launch's own CalledProcessError (pytorch/pytorch#61839): distributed.child_failed's
    (LAUNCH_SEGFAULT, "distributed.mpi_fork_failed"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_a_whole_device_check_keeps_its_argument():
    # the full check, "!" and argument clause kept (wmyw96/FAST-NN#1): still read with the argument it names
    text = ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! "
            "(when checking argument for argument mat2 in method wrapper_mm)")
    diagnosis = explain_paste(text)
    assert diagnosis.rule == "device.mismatch"
    assert "mat2" in " ".join([diagnosis.summary, *diagnosis.fixes])
