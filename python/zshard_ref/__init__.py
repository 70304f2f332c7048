"""zshard_ref: the independent NumPy reference of the training steps in
docs/models.md, the oracle the compiled and generated steps are compared to.

It shares no code with the generator and uses only the standard library and
NumPy; every operator has a hand-written backward (no autodiff).
"""

from .adamw import AdamWConfig, adamw_step, adamw_update, clip_coefficient
from .gpt import GptConfig
from .llama import LlamaConfig
from .mlp import MlpConfig
from .safetensors_io import load_file, read_file, save_file
from .step import check_params, init_params, loss_and_grads, param_specs, train_step

__all__ = [
    "AdamWConfig", "GptConfig", "MlpConfig", "adamw_step", "adamw_update", "clip_coefficient",
    "check_params", "init_params", "LlamaConfig", "load_file", "loss_and_grads", "param_specs",
    "read_file", "save_file", "train_step",
]
