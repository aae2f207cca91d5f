"""Round 23 `other` rules (first half): transformers' refusal of torch.load on torch < 2.6 (CVE-2025-32434), a torch RL
library unpacking an environment's reset/step/observations into the wrong count (gym vs gymnasium, rsl_rl releases),
fairseq's bare RuntimeError for an --arch in neither registry, a Hugging Face lazy import whose optional package is
missing, builtin generics in annotations on Python 3.8 (`list[torch.Tensor]`), calls on torch 0.4's empty Variable
shim, arithmetic between None and a Tensor, and the caller of torchaudio.set_audio_backend. Messages verbatim from
the corpus and the threads cited; the Variable shim and the None operand are raised live (the other libraries,
releases and Pythons are not installed here)."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message as corpus, explain_fixture, explain_paste

CORPUS = [
    ("r23_a.yaml#27", "other.torch_load_requires_torch_2_6", ["v2.6", "CVE-2025-32434", "`weights_only=True`"]),
    ("r23_a.yaml#28", "other.torch_load_requires_torch_2_6", ["v2.6", "cve-2025-32434"]),
    ("r23_b.yaml#73", "other.rl_env_api_unpack", ["`stable_baselines3`", "dummy_vec_env.py:76", "expected 2",
                                                   "ppo_mask.py:239", "`(obs, info)`"]),
    ("r23_b.yaml#74", "other.rl_env_api_unpack", ["`rsl_rl`", "on_policy_runner.py:29", "`self.env.get_observations()`",
                                                   "`obs, extras`"]),
    ("r6_a.yaml#38", "other.fairseq_arch_not_registered", ["options.py`:153", "`parse_args_and_arch`", "train.py:542",
                                                            "`--arch`", "`--user-dir`"]),
    ("r20_b.yaml#18", "other.fairseq_arch_not_registered", ["options.py`:153", "ARCH_MODEL_REGISTRY"]),
    ("r23_a.yaml#20", "other.hf_lazy_import_module_missing", ["`trl.trainer.grpo_trainer`", "`mergekit`"]),
    ("r23_b.yaml#80", "other.builtin_generic_old_python", ["`list[torch.Tensor]`", "Python 3.9", "'type' object"]),
    ("r22_a.yaml#98", "other.variable_legacy_attribute", ["`Variable.chunk`", "torch 0.4"]),
    ("r19_b.yaml#51", "other.variable_legacy_attribute", ["`t.FloatTensor(...)`", "`torch.FloatTensor`", "shadowed"]),
    ("r22_b.yaml#20", "other.torchaudio_backend_unavailable", ["`soundfile`", "dataio.py:26"]),
    ("r17_a.yaml#29", "other.none_tensor_operand", ["`NoneType` + `Tensor`", "left operand is `None`"]),
]


@pytest.mark.parametrize(("where", "rule", "values"), CORPUS, ids=[w for w, _, _ in CORPUS])
def test_corpus_messages_name_their_values(where, rule, values):
    assert_names(explain_paste(corpus(where)), rule, values)


# The same families in other threads' words.
PASTED = [
    # a pytest summary line, verbatim from https://github.com/nod-ai/amd-shark-ai/issues/1594
    ("FAILED sharktank/tests/models/t5/t5_test.py::T5EncoderIreeTest::testCompareV1_1XxlIreeBf16AgainstTorchEagerF32 - "
     "ValueError: Due to a serious vulnerability issue in `torch.load`, even with `weights_only=True`, we now require users "
     "to upgrade torch to at least v2.6 in order to use the function. This version restriction does not apply when loading "
     "files with safetensors.\nSee the vulnerability report here https://nvd.nist.gov/vuln/detail/CVE-2025-32434",
     "other.torch_load_requires_torch_2_6", ["v2.6", "CVE-2025-32434"]),
    # a logger that dropped the backticks (https://github.com/IliasHad/edit-mind/pull/17)
    ("2025-12-18 05:58:28,947 - ERROR - Failed to setup EnvironmentPlugin: Due to a serious vulnerability issue in "
     "torch.load, even with weights_only=True, we now require users to upgrade torch to at least v2.6 in order to use the "
     "function. This version restriction does not apply when loading files with safetensors. See the vulnerability report "
     "here https://nvd.nist.gov/vuln/detail/CVE-2025-32434", "other.torch_load_requires_torch_2_6", ["v2.6"]),
    # Jupyter's frame spelling: the thread's whole code block, verbatim
    # (https://github.com/AI4Finance-Foundation/FinRL/issues/1051)
    (".venv/lib/python3.10/site-packages/stable_baselines3/common/vec_env/dummy_vec_env.py:77, in DummyVecEnv.reset(self)\n"
     "     75 print(\"Env #\",self.num_envs)\n     76 for env_idx in range(self.num_envs):\n"
     "---> 77     obs, self.reset_infos[env_idx] = self.envs[env_idx].reset(seed=self._seeds[env_idx])\n"
     "     78     self._save_obs(env_idx, obs)\n     79 # Seeds are only used once\n\n"
     "ValueError: too many values to unpack (expected 2)",
     "other.rl_env_api_unpack", ["dummy_vec_env.py:77", "`reset`", "expected 2"]),
    # diffusers' lazy loader (https://github.com/numz/ComfyUI-SeedVR2_VideoUpscaler/issues/156)
    ("RuntimeError: Failed to import diffusers.loaders.peft because of the following error (look up to see its "
     "traceback):\nNo module named 'accelerate'", "other.hf_lazy_import_module_missing",
     ["`diffusers.loaders.peft`", "`accelerate`", "optional dependency"]),
    # pytest's frame of an installed package (https://github.com/flashinfer-ai/flashinfer/issues/484)
    ("lib/python3.8/site-packages/flashinfer/cascade.py:276: in MultiLevelCascadeAttentionWrapper\n"
     "    int_workspace_buffers: list[torch.Tensor],\nE   TypeError: 'type' object is not subscriptable",
     "other.builtin_generic_old_python", ["`list[torch.Tensor]`"]),
    # a return annotation: the last three lines of the thread's traceback, an excerpt, verbatim
    # (https://github.com/jcwang-gh/classifier-free-diffusion-guidance-Pytorch/issues/5)
    ('  File "/workspace/sanghyu.yoon/nfsdata/home/sanghyu.yoon/code/research_23/'
     'classifier-free-diffusion-guidance-Pytorch/diffusion.py", line 79, in GaussianDiffusion\n'
     "    def q_mean_variance(self, x_0:torch.Tensor, t:torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:\n"
     "TypeError: 'type' object is not subscriptable", "other.builtin_generic_old_python",
     ["`tuple[torch.Tensor, torch.Tensor]`"]),
    # nested in Optional (https://github.com/Alpha-VLLM/LLaMA2-Accessory/issues/150)
    ('  File "/home/LLaMA2-Accessory-main/accessory/util/tensor_type.py", line 37, in default_tensor_type\n'
     "    exc_type: Optional[type[BaseException]],\nTypeError: 'type' object is not subscriptable",
     "other.builtin_generic_old_python", ["`type[BaseException]`"]),
    # the tensor on the left (https://github.com/Lightricks/ComfyUI-LTXVideo/issues/184)
    ("unsupported operand type(s) for +: 'Tensor' and 'NoneType'", "other.none_tensor_operand",
     ["`Tensor` + `NoneType`", "right operand is `None`"]),
]


@pytest.mark.parametrize(("text", "rule", "values"), PASTED, ids=[f"{r}-{i}" for i, (_, r, _) in enumerate(PASTED)])
def test_other_wordings(text, rule, values):
    assert_names(explain_paste(text), rule, values)


def test_none_operand_raised_live():
    assert_names(explain_fixture("fixtures/other/none_tensor_operand.py"), "other.none_tensor_operand",
                 ["`NoneType` + `Tensor`", "without `return`"])


def test_variable_shim_raised_live():
    assert_names(explain_fixture("fixtures/other/variable_legacy_attribute.py"), "other.variable_legacy_attribute",
                 ["`Variable.chunk`", "`torch.chunk(x, ...)`"])


NOT_CLAIMED = [
    # the user's own loop over old gym's step: a negative control (r23_b#72, r17_a#28)
    (corpus("r23_b.yaml#72"), "*"),
    (corpus("r17_a.yaml#28"), "*"),
    # gym's own wrapper, no torch library in the traceback (https://github.com/openai/gym/issues/3165)
    ('  File "/home/anavani/anaconda3/lib/python3.9/site-packages/gym/core.py", line 379, in reset\n'
     "    obs, info = self.env.reset(**kwargs)\nValueError: too many values to unpack (expected 2)",
     "other.rl_env_api_unpack"),
    # a compiled extension's bare RuntimeError is not fairseq's registry (r15_a#95)
    (corpus("r15_a.yaml#95"), "other.fairseq_arch_not_registered"),
    # the lazy-import wrapper around an undefined symbol belongs to other.undefined_symbol (r14_b#9)
    (corpus("r14_b.yaml#9"), "other.hf_lazy_import_module_missing"),
    # the message alone, or a subscript that is not an annotation: any class (stanford_alpaca#230)
    ("TypeError: 'type' object is not subscriptable", "other.builtin_generic_old_python"),
    # torch 1.4's Sampler subscripted with typing's List, verbatim from
    # https://github.com/pyg-team/pytorch_geometric/issues/5285
    ('File "/home/data1/yxd/envs/gns/lib/python3.7/site-packages/torch_geometric/loader/dynamic_batch_sampler.py", '
     "line 9, in <module>\n    class DynamicBatchSampler(torch.utils.data.sampler.Sampler[List[int]]):\n"
     "TypeError: 'type' object is not subscriptable", "other.builtin_generic_old_python"),
    # a dict next to the tensor is a negative control (r9_a#32); None next to a number names no tensor
    (corpus("r9_a.yaml#32"), "*"),
    ("TypeError: unsupported operand type(s) for -: 'float' and 'NoneType'", "other.none_tensor_operand"),
    # torch 0.3's Variable lacking `item` is the newer-API rule's (r19_b#76)
    (corpus("r19_b.yaml#76"), "other.variable_legacy_attribute"),
    # the CVE check's sibling, torch 2.6's own new default, is torch.load's weights_only question
    ("RuntimeError: Cannot use ``weights_only=True`` with TorchScript archives passed to ``torch.load``. In PyTorch 2.6, "
     "we changed the default value of the `weights_only` argument in `torch.load` from `False` to `True`.",
     "other.torch_load_requires_torch_2_6"),
]


@pytest.mark.parametrize(("text", "rule"), NOT_CLAIMED, ids=[f"{r}-{i}" for i, (_, r) in enumerate(NOT_CLAIMED)])
def test_near_misses_are_left_to_others(text, rule):
    assert_left_alone(text, rule)
