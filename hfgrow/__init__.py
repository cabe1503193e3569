"""hfgrow: grow pretrained Hugging Face transformers into wider models that compute the same function."""

from .api import grow, grow_model, inspect, verify
from .errors import ExitCode, GrowthError, PushError
from .plan import GrowthOptions
from .optim import grow_optimizer_state, grow_trainer_checkpoint, param_groups
from .version import __version__

__all__ = ["ExitCode", "GrowthError", "GrowthOptions", "PushError", "grow", "grow_model", "grow_optimizer_state", "grow_trainer_checkpoint",
           "inspect", "param_groups", "verify", "__version__"]
