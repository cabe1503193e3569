"""The Hugging Face Hub: Hub ids in (through the HF cache), grown checkpoints out (with a model card)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .errors import GrowthError, PushError

# What a growth needs from a repository: never other frameworks' weights, never the whole repo.
# top-level files only: not consolidated.safetensors, adapters, onnx/ or checkpoint-*/ copies
WEIGHTS = ["model*.safetensors", "model.safetensors.index.json"]
LEGACY_WEIGHTS = ["pytorch_model*.bin", "pytorch_model.bin.index.json"]
OTHER = [
    "config.json", "generation_config.json", "README.md",
    "tokenizer*", "vocab*", "merges.txt", "spiece.model", "sentencepiece*.model", "special_tokens_map.json",
    "added_tokens.json", "*.tiktoken", "chat_template*",
    # sentence-transformers: the module list, its configs, and the module folders (1_Pooling/, 2_Dense/, …)
    "modules.json", "sentence_bert_config.json", "config_sentence_transformers.json", "[0-9]*_*/*",
]
_HUB_ID = re.compile(r"[\w.-]+(/[\w.-]+)?")  # fullmatch: no final newline


def is_hub_id(src: str) -> bool:
    return not Path(src).exists() and bool(_HUB_ID.fullmatch(src)) and not src.startswith((".", "/"))


def resolve(src: str | os.PathLike, revision: str | None = None, token: str | None = None) -> tuple[Path, str | None]:
    """A local folder for ``src``, and its Hub id (None for a local folder).

    A Hub id is downloaded through huggingface_hub into the HF cache (or found there, offline with
    HF_HUB_OFFLINE=1), honouring ``revision`` and HF_TOKEN; only the files a growth needs, and only
    safetensors weights where the repository has them.
    """
    text = str(src)
    if Path(text).is_dir():
        if revision:
            raise GrowthError("--revision applies to Hub ids, and the source is a local folder")
        return Path(text), None
    if not is_hub_id(text):
        raise GrowthError(f"source {text!r} is not a folder, nor a Hub id such as 'bert-base-chinese' or 'org/name'")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    at = f" at revision {revision}" if revision else ""
    try:
        folder = Path(snapshot_download(text, revision=revision, allow_patterns=WEIGHTS + OTHER, token=token))
        if not any(folder.glob("model*.safetensors")):  # an older repository: PyTorch .bin weights
            folder = Path(snapshot_download(text, revision=revision, allow_patterns=LEGACY_WEIGHTS + OTHER, token=token))
    except GatedRepoError:
        raise GrowthError(f"{text} is gated: accept its terms on the Hub and set HF_TOKEN") from None
    except RepositoryNotFoundError:
        raise GrowthError(f"no folder {text!r} exists, and no model {text!r} is on the Hub (or it is private: set HF_TOKEN)") from None
    except RevisionNotFoundError:
        raise GrowthError(f"{text} has no revision {revision or 'main'!r}") from None
    except (LocalEntryNotFoundError, OfflineModeIsEnabled):
        raise GrowthError(f"no folder {text!r} exists, and as a Hub id {text}{at} is not in the HF cache and the Hub cannot be "
                          f"reached (offline mode?)") from None
    except Exception as e:  # network failures come in many types; one line is what the user needs
        raise GrowthError(f"cannot download {text}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    if not (folder / "config.json").is_file():
        raise GrowthError(f"{text}{at} has no config.json: not a transformers model")
    return folder, text


def source_card_data(folder: Path) -> dict[str, Any]:
    """license, pipeline_tag, language and tags from the source's model card, when it has one."""
    path = folder / "README.md"
    if not path.is_file() or not path.read_text(encoding="utf-8", errors="replace").startswith("---"):
        return {}  # no metadata block
    from huggingface_hub import ModelCard

    try:
        data = ModelCard.load(path).data.to_dict()
    except Exception:
        return {}
    keys = ("license", "license_name", "license_link", "pipeline_tag", "language", "tags", "datasets")
    return {k: data[k] for k in keys if data.get(k)}


def check_push(repo_id: str, token: str | None = None, create_pr: bool = False) -> None:
    """Before anything is grown: a token that huggingface_hub finds (``token``, HF_TOKEN or the login cache), the Hub
    reachable, and write access to ``repo_id`` (or, for a repository yet to be created, a namespace of the token's
    user; with ``create_pr``, a repository that exists). One line (exit 2) otherwise; the token is never printed."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, LocalTokenNotFoundError, OfflineModeIsEnabled, RepositoryNotFoundError

    where = f"--push-to-hub {repo_id}"
    api = HfApi(token=token)
    try:
        me = api.whoami()
        role = (me.get("auth") or {}).get("accessToken", {}).get("role")
        if role == "read":
            raise GrowthError(f"{where}: the Hub token is read-only (use a token with write access): nothing was grown")
        try:
            api.auth_check(repo_id, repo_type="model", write=not create_pr)  # a pull request needs no write access
        except RepositoryNotFoundError:  # to be created: in the user's namespace or one of their organisations'
            if create_pr:
                raise GrowthError(f"{where}: --create-pr opens a pull request on a repository that exists, and this one "
                                  f"does not (or is private to others): nothing was grown") from None
            namespace = repo_id.split("/")[0] if "/" in repo_id else me.get("name")
            mine = {me.get("name"), *(o.get("name") for o in me.get("orgs") or [])}
            if namespace not in mine:
                raise GrowthError(f"{where}: no such repository, and the token's user ({me.get('name')}) cannot create one "
                                  f"in {namespace!r}: nothing was grown") from None
    except LocalTokenNotFoundError:
        raise GrowthError(f"{where}: no Hub token (set HF_TOKEN, run `hf auth login`, or pass --token): nothing was grown") from None
    except OfflineModeIsEnabled:
        raise GrowthError(f"{where}: HF_HUB_OFFLINE is set, so nothing can be pushed: nothing was grown") from None
    except HfHubHTTPError as e:
        status = getattr(e.response, "status_code", None)
        why = ("the token is invalid" if status == 401 else "the token cannot write to it" if status == 403
               else str(e).splitlines()[0])
        raise GrowthError(f"{where}: {why}: nothing was grown") from None
    except GrowthError:
        raise
    except Exception as e:  # no network, DNS, a proxy: one line
        raise GrowthError(f"{where}: the Hub cannot be reached ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}): nothing was grown") from None


def push(folder: Path, repo_id: str, *, private: bool = False, revision: str | None = None,
         commit_message: str | None = None, create_pr: bool = False, token: str | None = None) -> str:
    """Create the repository if needed and upload ``folder`` through huggingface_hub; returns the commit URL.

    The token comes from huggingface_hub (HF_TOKEN or the login cache) and is never printed.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, private=private, exist_ok=True, repo_type="model")
        if revision:  # the branch to commit to, or to open the pull request against
            api.create_branch(repo_id, branch=revision, exist_ok=True, repo_type="model")
        info = api.upload_folder(repo_id=repo_id, folder_path=str(folder), repo_type="model", revision=revision,
                                 commit_message=commit_message or f"Upload grown checkpoint ({folder.name}) with hfgrow",
                                 create_pr=create_pr)
    except HfHubHTTPError as e:
        raise PushError(f"push to {repo_id} failed: {str(e).splitlines()[0]}") from None
    except KeyboardInterrupt:
        raise PushError(f"push to {repo_id} interrupted") from None
    except Exception as e:
        raise PushError(f"push to {repo_id} failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    return str(getattr(info, "pr_url", None) or getattr(info, "commit_url", "") or info)
