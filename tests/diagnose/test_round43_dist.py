"""Round-43 wordings for distributed and compile (training-loop wrappers, RL and robotics, LLM post-training: DDP's
unused parameters and wrapper attributes, ProcessGroupNCCL's watchdog, Ray actors that died or stopped on a check,
vLLM workers and engine cores under OpenRLHF and ms-swift, NCCL over InfiniBand; torch.compile under DDP, Dynamo's
speculation log and guards, ONNX export warnings, tensordict's CudaGraphModule): each corpus message (verbatim from the
opened rounds) is claimed, from its text alone, by the right rule with the values it holds named the way the coverage
judge reads them; other wordings of the same families (from the threads cited) are claimed too, and near misses (a
native program's own cuDNN check among them) stay unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r43_a.yaml#35", "distributed.ddp_unused_parameters", ["lin2.fmri7.bias", "rank 0"]),
    ("r43_a.yaml#58", "other.object_has_no_attribute",
     ["DistributedDataParallel", "has_multiscale_discrs", 'trainer.py", line 203']),
    ("r43_b.yaml#70", "distributed.nccl_watchdog_teardown", ["ProcessGroupNCCL.cpp:1896", "rank0"]),
    ("r43_b.yaml#82", "distributed.ray_worker_died", ["rllib_checkpoint.json", "worker.py:844", "RolloutWorker"]),
    ("r43_c.yaml#5", "distributed.ray_check_failed", ["task_receiver.cc:219", "objects_valid"]),
    ("r43_c.yaml#7", "distributed.nccl_ibv_call_failed", ["ibvwrap.c:160", "ibv_modify_qp", "update_weight"]),
    ("r43_c.yaml#8", "distributed.vllm_worker_method_error", ["start_worker_execution_loop", "worker_base.py:148"]),
    ("r43_c.yaml#9", "distributed.nccl_ib_completion_error", ["mlx5", "model.embed_tokens.weight"]),
    ("r43_c.yaml#45", "distributed.vllm_engine_core_died", ["EngineCore_DP1", "core_client.py:564"]),
    ("r43_c.yaml#50", "distributed.ray_worker_died", ["ActorDiedError", "ray::Runner.run()", "1027736"]),
    ("r43_c.yaml#51", "distributed.ray_worker_died", ["SYSTEM_ERROR", "SIGKILL"]),
    ("r43_a.yaml#42", "compile.ddp_optimizer_callback",
     ["BackendCompilerFailed", "_convert_frame_assert()", "hooks", 'distributed.py", line 203']),
    ("r43_a.yaml#67", "compile.dynamo_speculation_log_diverged", ["SpeculationLog"]),
    ("r43_b.yaml#52", "compile.dynamo_guard_creation_failed", ["ActorCriticPolicy", "ID_MATCH", "L['self']"]),
    ("r43_b.yaml#78", "compile.onnx_no_forward_signature_warning", ["utils.py:341", "forward"]),
    ("r43_b.yaml#79", "compile.onnx_unsupported_opset", ["18", "17", "torch.onnx.dynamo_export()"]),
    ("r43_b.yaml#83", "compile.tensordict_cudagraph_pytree_warning",
     ["cudagraphs.py:194", "CudaGraphModule", "EXCLUDE_TD_FROM_PYTREE=1"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def test_a_native_programs_own_cudnn_check_is_no_pytorch_failure():
    # cytonRL's C++/CUDA program checks cuDNN itself ("cuDNN Error: <status> <its file> <line>"): no PyTorch in it
    assert_left_alone(corpus_message("r43_b.yaml#69"), "*")


def test_the_readings_the_corpus_messages_hold_are_given():
    # a remote call that got an actor's death: the dead actor is another one, whose own log holds the cause
    assert_names(explain_paste(corpus_message("r43_c.yaml#50")), "distributed.ray_worker_died",
                 ["RayTaskError(ActorDiedError)", "was waiting on another actor"])
    # Ray's SYSTEM_ERROR exit with a lost connection: killed or crashed, not an exception of the actor's code
    assert_names(explain_paste(corpus_message("r43_c.yaml#51")), "distributed.ray_worker_died",
                 ["out-of-memory killer", "End of file"])
    # the RLlib checkpoint folder the actor's constructor restored from holds no checkpoint
    assert_names(explain_paste(corpus_message("r43_b.yaml#82")), "distributed.ray_worker_died",
                 ["E:\\hhmarl_2D\\results\\Level3_fight_2vs2\\checkpoint"])
    # the watchdog's line cut before its reason: the reasons it can hold are named
    assert_names(explain_paste(corpus_message("r43_b.yaml#70")), "distributed.nccl_watchdog_teardown",
                 ["an illegal memory access was encountered", "Watchdog caught collective operation timeout"])
    # torch 2.0's DDPOptimizer, fixed in 2.1; the workaround named
    diagnosis = explain_paste(corpus_message("r43_a.yaml#42"))
    assert_names(diagnosis, "compile.ddp_optimizer_callback", ["DDPOptimizer", "pytorch/pytorch#107834"])
    assert any("optimize_ddp = False" in fix for fix in diagnosis.fixes)
    # the old exporter only warns above its highest opset: the export goes on
    assert_names(explain_paste(corpus_message("r43_b.yaml#79")), "compile.onnx_unsupported_opset",
                 ["this is a warning", "Reduce*"])
    # a traced module's forward has no Python signature: harmless
    assert_names(explain_paste(corpus_message("r43_b.yaml#78")), "compile.onnx_no_forward_signature_warning",
                 ["traced TorchScript module"])
    # the weight update an RL trainer broadcasts into vLLM was on the failed link
    assert_names(explain_paste(corpus_message("r43_c.yaml#9")), "distributed.nccl_ib_completion_error",
                 ["torch.Size([152064, 5120])"])


@pytest.mark.parametrize("text, rule, values", [
    # the same attribute looked up through DDP in the thread's sequel, unwrapped by accelerate
    # (lucidrains/magvit2-pytorch#35)
    ("  File \"/root/research/suhail/.venv/lib/python3.10/site-packages/magvit2_pytorch/trainer.py\", line 203, "
     "in __init__\n"
     "    self.has_multiscale_discrs = self.model.has_multiscale_discrs\n"
     "  File \"/root/research/suhail/.venv/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1695, "
     "in __getattr__\n"
     "    raise AttributeError(f\"'{type(self).__name__}' object has no attribute '{name}'\")\n"
     "AttributeError: 'DistributedDataParallel' object has no attribute 'has_multiscale_discrs'",
     "other.object_has_no_attribute", ["has_multiscale_discrs", "accelerator.unwrap_model"]),
    # an actor whose owner died first (hiyouga/EasyR1#324)
    ("The actor is dead because its owner has died. Owner Id: 01000000ffffffffffffffffffffffffffffffffffffffffffffffff "
     "Owner Ip address: 172.21.160.9 Owner worker exit type: SYSTEM_ERROR Worker exit detail: Owner's node has "
     "crashed.",
     "distributed.ray_worker_died", ["its owner has died", "SYSTEM_ERROR", "Owner's node has crashed"]),
    # the same Ray check in a Ray Train worker, and the raylet's own (ray-project/ray#47759, #46931)
    ("(RayTrainWorker pid=43514) [2024-09-20 15:32:10,003 C 43514 274023] task_receiver.cc:213:  Check failed: "
     "objects_valid",
     "distributed.ray_check_failed", ["task_receiver.cc:213", "RayTrainWorker", "43514", "ray-project/ray#54904"]),
    ("[Core] [2024-07-22 00:16:28,968 C 4126 4126] (raylet) core_worker_client_pool.cc:22: Check failed: "
     "(_left_ != _right_) vs",
     "distributed.ray_check_failed", ["core_worker_client_pool.cc:22", "raylet"]),
    # vLLM's other worker methods, as the threads' titles quote them (vllm-project/vllm#17363, #10151, #13371)
    ("[Bug]: Error executing method 'init_device'. This might cause deadlock in distributed execution.",
     "distributed.vllm_worker_method_error", ["init_device", "HCCL"]),
    ("[Usage]: Error executing method determine_num_available_blocks. This might cause deadlock in distributed "
     "execution.",
     "distributed.vllm_worker_method_error", ["determine_num_available_blocks", "KV cache"]),
    ("[RFC]: Error executing method 'load_model'. This might cause deadlock in distributed execution.",
     "distributed.vllm_worker_method_error", ["load_model"]),
    # the engine core of data-parallel rank 0 (deepseek-ai/DeepSeek-OCR#110, vllm-project/vllm#32468)
    ("ERROR 10-23 18:21:12 [core_client.py:597] Engine core proc EngineCore_DP0 died unexpectedly, shutting down "
     "client.",
     "distributed.vllm_engine_core_died", ["EngineCore_DP0", "core_client.py:597", "data-parallel rank 0"]),
    ("`ERROR 01-16 17:16:49 [core_client.py:605] Engine core proc EngineCore_DP0 died unexpectedly, shutting down "
     "client.`",
     "distributed.vllm_engine_core_died", ["core_client.py:605", "interpreter exit"]),
    # DDPOptimizer's TypeError alone, in torch's own tracker (pytorch/pytorch#107637)
    ("TypeError: convert_frame_assert.<locals>._convert_frame_assert() missing 2 required positional arguments: "
     "'hooks' and 'frame_state'", "compile.ddp_optimizer_callback", ["'hooks' and 'frame_state'", "DDPOptimizer"]),
    # a guard on the dynamic-size environment that could not be built (vllm-project/vllm PR #21747)
    ("[rank0]:E0729 23:23:41.211000 94260 .venv/lib/python3.12/site-packages/torch/_guards.py:359] [0/0] "
     "Error while creating guard:\n"
     "[rank0]:E0729 23:23:41.211000 94260 .venv/lib/python3.12/site-packages/torch/_guards.py:359] [0/0] "
     "Name: ''\n"
     "[rank0]:E0729 23:23:41.211000 94260 .venv/lib/python3.12/site-packages/torch/_guards.py:359] [0/0]     "
     "Source: shape_env\n"
     "[rank0]:E0729 23:23:41.211000 94260 .venv/lib/python3.12/site-packages/torch/_guards.py:359] [0/0]     "
     "Create Function: SHAPE_ENV\n"
     "[rank0]:E0729 23:23:41.211000 94260 .venv/lib/python3.12/site-packages/torch/_guards.py:359] [0/0]     "
     "Guard Types: None\n"
     "[rank0]:E0729 23:23:41.211000 94260 .venv/lib/python3.12/site-packages/torch/_guards.py:359] [0/0]     "
     "Code List: None\n"
     "[rank0]:E0729 23:23:41.211000 94260 .venv/lib/python3.12/site-packages/torch/_guards.py:359] [0/0]     "
     "Object Weakref: None", "compile.dynamo_guard_creation_failed", ["shape_env", "SHAPE_ENV", "dynamic sizes"]),
    # PyTorch's own cuDNN status keeps its rule (pppLang/SKNet#14)
    ("> RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a "
     "non-contiguous input.",
     "device.cudnn_status", ["CUDNN_STATUS_NOT_SUPPORTED"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # a remote task's own exception: other.ray_task_error's, not an actor's death (ray-project/ray#43137)
    ("ray.exceptions.RayTaskError(AttributeError): ray::TrainALL.train() (pid=35968, ip=127.0.0.1, "
     "actor_id=a40ed1244b3633a795d5b82f01000000, repr=<__main__.TrainALL object at 0x000001E6F5BBE4F0>)",
     "distributed.ray_worker_died"),
    # the adapter's error completion in a program without PyTorch or NCCL around it (Caffe-MPI/Caffe-MPI.github.io#9)
    ("mlx5: ${hostname}: got completion with error", "distributed.nccl_ib_completion_error"),
    # torch_xla's own check, not Ray's (pytorch/xla#7266)
    ("RuntimeError: torch_xla/csrc/aten_xla_type.cpp:161 : Check failed: it != inputs_.end() *** Begin stack trace ***",
     "distributed.ray_check_failed"),
    # a guard that failed on a later call (a recompilation), not one that could not be built
    # (huggingface/diffusers PR #11970)
    ("V0721 23:40:59.397000 2159156 torch/_dynamo/guards.py:3006] [1/37] [__recompiles] Recompiling function forward "
     "in /home/aryan/work/diffusers/src/diffusers/models/transformers/transformer_flux.py:381\n"
     "V0721 23:40:59.397000 2159156 "
     "torch/_dynamo/guards.py:3006] [1/37] [__recompiles]     triggered by the following guard failure(s):\nV0721 "
     "23:40:59.397000 2159156 torch/_dynamo/guards.py:3006] [1/37] [__recompiles]     - 1/36: "
     "___check_obj_id(self._modules['attn'].processor, 140462015041104)", "compile.dynamo_guard_creation_failed"),
    # another internal failure of Dynamo's (pytorch/pytorch#127172)
    ("torch._dynamo.exc.InternalTorchDynamoError: BuiltinVariable.call_hasattr() missing 1 required positional "
     "argument: 'attr'", "compile.ddp_optimizer_callback"),
    ("torch._dynamo.exc.InternalTorchDynamoError: BuiltinVariable.call_hasattr() missing 1 required positional "
     "argument: 'attr'", "compile.dynamo_speculation_log_diverged"),
    # vLLM's engine core dying is not a worker's method failing, nor the reverse (modelscope/ms-swift#7933,
    # vllm-project/vllm#17363)
    ("ERROR 01-29 08:37:48 [core_client.py:564] Engine core proc EngineCore_DP1 died unexpectedly, shutting down "
     "client.",
     "distributed.vllm_worker_method_error"),
    ("[Bug]: Error executing method 'init_device'. This might cause deadlock in distributed execution.",
     "distributed.vllm_engine_core_died"),
    # the exporter's shape-inference warning (ultralytics/yolov5#6401)
    ("WARNING: The shape inference of prim::Constant type is missing, so it may result in wrong shape inference for "
     "the exported graph. Please consider adding it in symbolic function.",
     "compile.onnx_no_forward_signature_warning"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)
