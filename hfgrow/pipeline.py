"""The pipeline: resolve → plan → stream tensors into a temporary folder → verify → move into place."""

from __future__ import annotations

import errno
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from . import adapters, hub, sentence
from .card import model_card
from .checkpoint import CheckpointReader, format_size, sync_folder
from .errors import GrowthError
from .inputs import check_verification_inputs
from .output import OutputFolder, check_out
from .plan import GrowthOptions, make_plan
from .tensors import write_checkpoint
from .version import __version__
from .report import write_report

Log = Callable[[str], None]


def grow(src: str | os.PathLike, out: str | os.PathLike, options: GrowthOptions | None = None, *, log: Log | None = None,
         progress: bool = False, extra: Callable[[Path], dict[str, Any]] | None = None, **kwargs: Any) -> dict[str, Any]:
    """Grow the checkpoint in ``src`` into ``out`` and return the report (also written to ``out``).

    Options come as a :class:`GrowthOptions` or as its fields by keyword:
    ``grow("small", "big", factor=2)``. Raises :class:`GrowthError` for bad input, leaving ``out``
    as it was. ``extra`` (a training checkpoint's state, :mod:`hfgrow.training_state`) is called with
    the temporary folder once the weights are in it: it writes its files there (they leave
    ``not_copied``) and returns entries for the report.
    """
    options = options or GrowthOptions()
    if kwargs:
        options = GrowthOptions(**{**options.__dict__, **kwargs})
    log = log or (lambda msg: None)
    options.validate()
    out = Path(os.path.abspath(out))
    if Path(src).is_dir():  # local paths are checked before anything else
        check_out(out, Path(src), options.overwrite)
    start = time.perf_counter()
    folder, hub_id = hub.resolve(src, options.revision)
    source_name = hub_id or str(src)
    src = folder
    if hub_id:  # a Hub id: checked once it is a folder in the cache
        check_out(out, src, options.overwrite)
    if options.verify:  # sentences and tokenizer checked now, not after the growth
        check_verification_inputs(src, options.text_file)
    reader = CheckpointReader(src)
    plan = make_plan(reader, options)
    for adapter in options.adapters:  # checked before anything is written
        adapters.check(adapter)
    st_modules = sentence.modules(src)  # a sentence-transformers folder: its modules grow with the transformer
    if st_modules:
        why = sentence.check(st_modules, sentence.output_space(plan), options.dense_out)
        if why and not options.allow_lossy:
            raise GrowthError(f"not lossless: {why} (--allow-lossy grows anyway and reports the gap)")
        if why:
            plan.approximate.append(why)
    w = plan.widths
    log(f"{plan.recipe.name} ({plan.model_class or 'base model'}): hidden {w.hidden[0]} → {w.hidden[1]}, FFN {w.ffn[0]} → {w.ffn[1]}, "
        f"{w.heads[0]} → {w.heads[1]} heads of {w.head_dim[0]} → {w.head_dim[1]}, "
        f"{len(plan.tensors)} tensors into {len(plan.shards)} shard(s)")
    for note in plan.notes:
        log(f"note: {note}")
    for why in plan.approximate:
        log(f"warning: not lossless: {why}")

    parent = next(p for p in out.parents if p.exists())
    free, needed = shutil.disk_usage(parent).free, plan.summary()["output_bytes"]
    if needed > free:
        raise GrowthError(f"the grown checkpoint needs {format_size(needed)} and {parent} has {format_size(free)} free")
    with OutputFolder(out, options.overwrite, log) as place:
        try:
            # the small parts first: their problems show before the long part
            st_report = sentence.write(src, place.tmp, st_modules, sentence.output_space(plan), options.dense_out) if st_modules else None
            grown_adapters = [adapters.grow_adapter(a, place.tmp / "adapters" / adapters.name(a), plan, str(out))
                              for a in options.adapters]
            not_copied = write_checkpoint(plan, reader, place.tmp, progress)
            before = set(os.listdir(place.tmp))
            entries = extra(place.tmp) if extra is not None else {}
            not_copied = {k: v for k, v in not_copied.items() if k.rstrip("/") in before or not (place.tmp / k.rstrip("/")).exists()}
            if st_modules:  # written above, not left behind
                not_copied = {k: v for k, v in not_copied.items() if k.rstrip("/") not in sentence.written(st_modules)}
            grow_s = time.perf_counter() - start
            verification = None
            if options.verify:
                from .verification import verify_pair  # imports transformers: only when asked for

                log("verifying: forward passes of both models")
                try:
                    verification = verify_pair(src, place.tmp, maps=plan.maps, recipe=plan.recipe, device=options.device,
                                               mode=options.verify_mode, tolerance=options.tolerance, text_file=options.text_file,
                                               seed=options.seed, storage_rounding=plan.rounding_dtype(), log=log, progress=progress)
                except GrowthError as e:  # e.g. out of memory: the growth is complete and worth keeping
                    log(f"verification could not run: {e}")
                    verification = {"passed": False, "error": str(e), "device": options.device}
                for a in grown_adapters:
                    log(f"verifying: adapter {Path(a['source']).name} through PEFT")
                    adapters.add_to_verification(verification, a, src, place.tmp, plan)
                if st_modules:
                    log("verifying: sentence embeddings through sentence-transformers")
                    sentence.add_to_verification(verification, src, place.tmp, options.text_file, options.device, options.tolerance)
            report = {
                "hfgrow": __version__,
                "source": source_name,
                "hub_id": hub_id,
                "output": str(out),
                "command": options.command(source_name, str(out)),
                "plan": plan.summary(),
                "not_copied": not_copied,
                **({"sentence_transformers": st_report} if st_report else {}),
                **({"adapters": grown_adapters} if grown_adapters else {}),
                "verification": verification,
                "timings_s": {"grow": round(grow_s, 3), "verify": round(time.perf_counter() - start - grow_s, 3)},
                **entries,
            }
            write_report(report, place.tmp)
            model_card(report, hub.source_card_data(src), report["command"]).save(place.tmp / "README.md")
            sync_folder(place.tmp)  # every byte on disk before the folder takes its name
            place.publish()
        except OSError as e:  # writing the temporary folder; reading errors are GrowthErrors already
            if e.errno in (errno.ENOSPC, errno.EDQUOT):
                raise GrowthError(f"the disk holding {out.parent} is full: the partial output was removed") from None
            if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.ENAMETOOLONG):
                raise GrowthError(f"cannot write in {out.parent}: {os.strerror(e.errno)} (the partial output was removed)") from None
            raise
    if options.push_to_hub:
        try:
            report["push"] = _push(report, out, options, log)
        except KeyboardInterrupt as e:
            e.args = (f"the grown checkpoint is in {out}, not pushed",)
            raise
        write_report(report, out)  # the local report records the push (the uploaded one cannot)
    return report


def _push(report: dict[str, Any], out: Path, options: GrowthOptions, log: Log) -> dict[str, Any]:
    v = report["verification"]
    if (v is None or not v["passed"]) and not options.force:
        why = ("verification was skipped" if v is None else "verification could not run" if "error" in v
               else "the growth is lossy" if report["plan"]["approximate"] else "verification failed")
        return {"repo_id": options.push_to_hub, "pushed": False, "why": f"{why} (--force pushes anyway)"}
    log(f"pushing to {options.push_to_hub}")
    try:
        url = hub.push(out, options.push_to_hub, private=options.private, revision=options.push_revision,
                       commit_message=options.commit_message, create_pr=options.create_pr)
    except GrowthError as e:
        report["push"] = {"repo_id": options.push_to_hub, "pushed": False, "why": str(e)}
        write_report(report, out)
        raise
    log(f"pushed: {url}")
    return {"repo_id": options.push_to_hub, "pushed": True, "url": url}
