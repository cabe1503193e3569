"""The source of a growth, decided once: what the input is, where its files are, its config.

:meth:`Source.at` builds it at the entry (:func:`hfgrow.grow`, :func:`hfgrow.verify`, the CLI's ``grow``), from file
names alone: nothing is read before ``--out`` is checked and locked. :meth:`Source.resolved` downloads a Hub id into
the HF cache. :attr:`Source.reader` opens its weights' headers once, through the source-file policy
(:mod:`hfgrow.checkpoint`, :mod:`hfgrow.dcp`), and reads config.json once (:class:`~hfgrow.checkpoint.ConfigOnce`).
Planning and verification receive that reader and never decide again what the input is.

The side-cars (sentence-transformers modules, PEFT adapters, training state: :mod:`hfgrow.components`) look at the
folder themselves, as they always did; :attr:`Source.kind` only names what was found.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from pathlib import Path
from typing import Any

from . import dcp, hub, training_state
from .checkpoint import FolderConfig
from .training_state import Layout


@dataclasses.dataclass(frozen=True)
class Source:
    """What a growth (or a verification) reads. ``folder`` is None for a Hub id until :meth:`resolved`."""

    given: str  # as the user gave it: a folder or a Hub id (reports and cards name it so)
    folder: Path | None
    hub_id: str | None = None
    training: Layout | None = None  # a Trainer checkpoint's or an accelerate save_state folder's layout
    parts: tuple[str, ...] = ()  # a torch distributed checkpoint's folders (("",): itself); () for any other source

    @classmethod
    def at(cls, src: str | os.PathLike | Source) -> Source:
        """The source ``src`` names, decided from its file names (a Source is returned as it is)."""
        if isinstance(src, Source):
            return src
        given = os.fspath(src)
        folder = Path(given)
        if not folder.is_dir():  # a Hub id (or nothing: hub.resolve says so)
            return cls(given, None)
        return cls(given, folder, training=training_state.detect(folder), parts=dcp.dcp_parts(folder))

    def resolved(self, revision: str | None = None, token: str | None = None) -> Source:
        """This source with its folder: a Hub id downloaded (only the files a growth needs: hfgrow.hub), a local
        folder as it is (``revision`` refused there)."""
        folder, hub_id = hub.resolve(self.given, revision, token)
        if self.folder is not None:
            return self
        return dataclasses.replace(self, folder=folder, hub_id=hub_id)  # a snapshot holds no training state, no DCP files

    @functools.cached_property
    def reader(self) -> Any:
        """The reader of its weights (a Hugging Face folder's or a torch distributed checkpoint's), opened on first use
        and kept: its config.json is read once, whoever asks."""
        if self.folder is None:
            raise ValueError("a Hub id's Source is read once resolved")
        return dcp.open_reader(self.folder, self.parts, None if self.parts else self.configs)

    @functools.cached_property
    def configs(self) -> FolderConfig:
        """A Hugging Face folder's config.json, read once, before its weights or with them (a DCP folder's is its
        reader's: it reads the tensors to name a class config.json leaves out)."""
        if self.folder is None:
            raise ValueError("a Hub id's Source is read once resolved")
        return FolderConfig(self.folder)

    def config(self) -> dict:
        """Its config.json's object (read once: a copy each call)."""
        return self.reader.config()

    def transformers_config(self) -> Any:
        """Its config as the installed transformers reads it (read once, never its code: a copy each call); a Hugging
        Face folder's without opening its weights."""
        return self.reader.transformers_config() if self.parts else self.configs.transformers_config()

    @property
    def name(self) -> str:
        """How reports name it: its Hub id, else the folder as the user gave it."""
        return self.hub_id or self.given

    @property
    def kind(self) -> str:
        """What the input is, in words."""
        folder = self.folder
        if folder is None:
            return "Hub id"
        if self.training is not None:
            return self.training.name
        if self.parts:
            return "torch distributed checkpoint"
        if (folder / "modules.json").is_file():
            return "sentence-transformers folder"
        if (folder / "adapter_config.json").is_file():
            return "PEFT adapter"
        return "Hub snapshot" if self.hub_id else "Hugging Face folder"
