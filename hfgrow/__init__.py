"""hfgrow: grow pretrained Hugging Face transformers into wider models that compute the same function.

The package's names load on first use (PEP 562), so that the command line's ``--help``, ``--version``, completion and
usage errors answer without importing torch or transformers.
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import ExitCode, GrowthError, PushError
from .version import __version__

_LAZY = {"grow": "api", "grow_model": "api", "inspect": "api", "verify": "api", "GrowthOptions": "plan",
         "grow_optimizer_state": "optim", "grow_trainer_checkpoint": "optim", "param_groups": "optim"}

__all__ = ["ExitCode", "GrowthError", "GrowthOptions", "PushError", "grow", "grow_model", "grow_optimizer_state", "grow_trainer_checkpoint",
           "inspect", "param_groups", "verify", "__version__"]


def __getattr__(name: str) -> Any:
    """A public name imported from its module when first asked for; any other name, the submodule of that name."""
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    elif name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:
        try:
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":  # a module that exists but fails to import: its own error
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
