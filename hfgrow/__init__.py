"""hfgrow: grow pretrained Hugging Face transformers into wider models that compute the same function."""

__version__ = "0.1.0"

from .api import grow_model, inspect, verify  # noqa: E402
from .errors import ExitCode, GrowthError, PushError  # noqa: E402
from .grow import grow  # noqa: E402
from .plan import GrowthOptions  # noqa: E402
from .optim import grow_optimizer_state, grow_trainer_checkpoint, param_groups  # noqa: E402

__all__ = ["ExitCode", "GrowthError", "GrowthOptions", "PushError", "grow", "grow_model", "grow_optimizer_state", "grow_trainer_checkpoint",
           "inspect", "param_groups", "verify", "__version__"]
