"""Models of several towers with sizes of their own (CLIPModel: a text and a vision tower, their sizes in text_config and
vision_config): what planning one tower as a model of its own needs, a view of the checkpoint that holds its keys and
reads its sub-config, and the grown sub-configs joined back into the whole config."""

from __future__ import annotations

from typing import Any, Mapping

import torch

from .checkpoint import CheckpointReader, TensorInfo
from .config_rewrite import sub_config
from .errors import GrowthError


class TowerReader:
    """A checkpoint seen as one tower: its keys alone, its sub-config as config.json (naming the tower's class), and
    the installed transformers' reading of that sub-config."""

    def __init__(self, reader: CheckpointReader, keys: set[str], sub: str, cls: str):
        import copy

        self.reader, self.folder = reader, reader.folder
        self.tensors: dict[str, TensorInfo] = {k: v for k, v in reader.tensors.items() if k in keys}
        whole, part = reader.config(), sub_config(reader.config(), sub)
        self._config = {**part, "architectures": [cls]}
        # the tower as the whole model builds it: a field the whole config sets wins over the sub-config's namesake
        # (CLIPModel's projection_dim sizes the projections; text_config's is unused there and stays as it is)
        self._cfg = copy.deepcopy(getattr(reader.transformers_config(), sub))
        for k in part:
            if k in whole and k not in UNSHARED:
                setattr(self._cfg, k, whole[k])

    def config(self) -> dict[str, Any]:
        return dict(self._config)

    def transformers_config(self) -> Any:
        return self._cfg

    def get(self, name: str) -> torch.Tensor:
        return self.reader.get(name)


UNSHARED = ("model_type", "architectures", "dtype", "torch_dtype", "transformers_version")


def joined_config(config: dict[str, Any], grown: dict[str, tuple[dict[str, Any], dict[str, Any]]], dtype: str | None,
                  twins: Mapping[str, str]) -> dict[str, Any]:
    """``config`` with what each tower's plan changed in its sub-config (``grown``: by sub-config name, the tower's
    config before and after) and the output dtype; ``twins``: fields of one tower (``sub.field``) that must equal
    another's and grow with it (SigLIP's text projection_size, the vision hidden size)."""
    towers = {sub: {**config[sub], **{k: v for k, v in after.items() if k != "architectures" and before.get(k) != v}}
              for sub, (before, after) in grown.items()}
    for twin, name in twins.items():
        (sub, field), (other, source) = twin.split(".", 1), name.split(".", 1)
        if config[sub].get(field) != config[other].get(source):
            raise GrowthError(f"config.json: {twin}={config[sub].get(field)!r} must equal {name}={config[other].get(source)!r}, "
                              f"which it follows")
        towers[sub][field] = towers[other][source]
    return {**config, **towers, **({"dtype": dtype} if dtype else {})}
