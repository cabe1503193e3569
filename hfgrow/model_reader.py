"""A model in memory read as a checkpoint: what :func:`hfgrow.grow_model` and the optimizer's plans grow from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .checkpoint import TensorInfo


class StateDictReader:
    """The reader interface of :class:`CheckpointReader` over a model in memory."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.state = model.state_dict()
        self.tensors = {k: TensorInfo(k, tuple(v.shape), v.dtype, "<memory>") for k, v in self.state.items()}

    def get(self, name: str) -> torch.Tensor:
        return self.state[name].detach().cpu()

    def config(self) -> dict[str, Any]:
        config = self.model.config.to_dict()
        config["architectures"] = [type(self.model).__name__]
        return config

    def transformers_config(self) -> Any:
        return self.model.config

    def extra_files(self) -> tuple[dict[str, Path], dict[str, str]]:
        return {}, {}
