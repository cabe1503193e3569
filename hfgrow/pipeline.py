"""The pipeline: read → plan → grow the tensors into a temporary folder → verify → publish (move into place, push).

It knows nothing of the side-cars that ride along (sentence-transformers modules, PEFT adapters, training
state): they come as :class:`~hfgrow.components.Component` objects, called at fixed stages. Only
:mod:`hfgrow.api` and :mod:`hfgrow.optim`, above it, choose them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

from . import hub
from .card import model_card
from .checkpoint import CheckpointReader, format_size, sync_folder
from .dcp import check_growth, formats_of, hf_views, output_bytes, write_grown
from .components import Component, Log, owned_files
from .errors import GrowthError, PushError
from .inputs import check_verification_inputs
from .output import OutputFolder, check_out, check_place, display
from .phases import Phases
from .plan import GrowthOptions, GrowthPlan, make_plan
from .report import plan_line, write_report
from .source import Source
from .view import check_references
from .version import __version__


def run(src: str | os.PathLike | Source, out: str | os.PathLike, options: GrowthOptions, components: Sequence[Component] = (),
        *, log: Log | None = None, progress: bool = False, place: OutputFolder | None = None) -> dict[str, Any]:
    """Grow the checkpoint in ``src`` (a path, a Hub id, or the :class:`~hfgrow.source.Source` the caller decided)
    into ``out``, with ``components`` riding along; return the report (also written to ``out``). Raises
    :class:`GrowthError` for bad input, leaving ``out`` as it was. ``place``: ``out`` already locked by the caller
    (which read more of the source first)."""
    log = log or (lambda msg: None)
    options.validate()
    source = Source.at(src)
    shown = os.fspath(out)  # the report and card record paths as the user gave them, never the machine's absolute path
    out = Path(os.path.abspath(out))
    if source.folder is not None:  # local paths are checked before anything else
        check_out(out, source.folder, options.overwrite, owned_files(list(components), source.folder))
    else:  # a Hub id: what can be known before its download
        check_place(out)
    # locked before anything is read: a second run to this --out is refused at once, not after its planning
    with contextlib.nullcontext(place) if place else OutputFolder(out, options.overwrite, log) as place:
        report = _grow(source, (out, shown), options, components, place, log, progress)
    if options.push_to_hub:
        _push_and_record(report, out, options, log)
    return report


def _grow(source: Source, outs: tuple[Path, str], options: GrowthOptions, components: Sequence[Component],
          place: OutputFolder, log: Log, progress: bool) -> dict[str, Any]:
    """Read, plan, grow into ``place``'s temporary folder, verify and publish; ``outs``: --out and how it was typed."""
    out, shown = outs
    start = time.perf_counter()
    source = _resolve(source, out, options, components)
    folder, hub_id = source.folder, source.hub_id
    reader = source.reader  # a Hugging Face folder or a torch distributed checkpoint: opened here, its config read once
    formats = formats_of(reader, options)
    check_growth(reader, formats, options)
    if options.push_to_hub and not hub_id:  # token and write access, before a long growth (a Hub id's: before its download)
        hub.check_push(options.push_to_hub, options.token, options.create_pr)
    plan = make_plan(reader, options)
    active = _prepare(components, folder, plan)
    _log_plan(plan, log)
    _check_disk(out, output_bytes(plan, reader, formats, options.verify))
    phases = Phases()
    phases.add("planning", time.perf_counter() - start)  # the source found, read, planned and checked: nothing written yet
    with _write_errors(out):
        written = time.perf_counter()
        entries, not_copied = _write(active, folder, place.tmp, plan, reader, formats, progress, phases)
        grow_s = time.perf_counter() - start
        timings = {"grow": round(grow_s, 3), "written_in": round(time.perf_counter() - written, 3), **phases.rounded()}
        verification = _verify(active, folder, (place.tmp, shown), plan, (reader, formats), log, progress) if options.verify else None
        source_name = source.name
        report = {
            "hfgrow": __version__,
            "verdict": None,  # written with the report
            "source": source_name,
            "hub_id": hub_id,
            "base_model": options.base_model or hub_id,
            "output": shown,
            "command": options.command(source_name, shown),
            "plan": plan.summary(),
            "not_copied": not_copied,
            "written": {"formats": list(formats), "files": sum(f.is_file() for f in place.tmp.rglob("*"))},
            **entries,
            "verification": verification,
            "timings_s": {**timings, "verify": round(time.perf_counter() - start - grow_s, 3)},
        }
        write_report(report, place.tmp)
        model_card(report, hub.source_card_data(folder), report["command"], options.push_to_hub or shown,
                   tokenizer=any(place.tmp.glob("tokenizer*"))).save(place.tmp / "README.md")
        sync_folder(place.tmp)  # every byte on disk before the folder takes its name
        place.publish()
    return report


def _resolve(source: Source, out: Path, options: GrowthOptions, components: Sequence[Component]) -> Source:
    """The source with its folder (a Hub id downloaded), with ``--out`` and the verification inputs checked."""
    if options.push_to_hub and hub.is_hub_id(source.given):
        hub.check_push(options.push_to_hub, options.token, options.create_pr)
    source = source.resolved(options.revision, options.token)
    folder, hub_id = source.folder, source.hub_id
    if hub_id:  # a Hub id: checked once it is a folder in the cache
        check_out(out, folder, options.overwrite, owned_files(list(components), folder))
    check_references(folder)  # what the libraries would read: no reference out of the folder (hfgrow.view)
    if options.verify:  # sentences and tokenizer checked now, not after the growth
        check_verification_inputs(folder, options.text_file)
    return source


def _prepare(components: Sequence[Component], src: Path, plan: GrowthPlan) -> list[Component]:
    """The components that take part, each checked before anything is written; a lossy one needs ``allow_lossy``."""
    before = len(plan.approximate)
    active = [c for c in components if c.prepare(src, plan)]
    lossy = plan.approximate[before:]
    if lossy and not plan.options.allow_lossy:
        raise GrowthError(f"not lossless: {lossy[0]} (--allow-lossy grows anyway and reports the gap)")
    return active


def _log_plan(plan: GrowthPlan, log: Log) -> None:
    log(f"{plan.recipe.name} ({plan.model_class or 'base model'}): {plan_line(plan.summary())}, "
        f"{len(plan.tensors)} tensors")
    for note in plan.notes:
        log(f"note: {note}")
    for why in plan.approximate:
        log(f"warning: not lossless: {why}")


def _check_disk(out: Path, needed: int) -> None:
    parent = next(p for p in out.parents if p.exists())
    free = shutil.disk_usage(parent).free
    if needed > free:
        raise GrowthError(f"the grown checkpoint needs {format_size(needed)} and {parent} has {format_size(free)} free")


@contextlib.contextmanager
def _write_errors(out: Path) -> Iterator[None]:
    """Writing the temporary folder fails in one line (reading errors are GrowthErrors already)."""
    try:
        yield
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise GrowthError(f"the disk holding {display(out.parent)} is full: the partial output was removed") from None
        if e.errno == errno.EFBIG:  # a file-size limit (ulimit -f) or a filesystem's largest file (FAT32: 4 GB)
            raise GrowthError(f"a file of the grown checkpoint is larger than the file-size limit (ulimit -f) or {display(out.parent)}'s "
                              f"filesystem allows: the partial output was removed (safetensors: --max-shard-size writes smaller shards)") from None
        if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.ENAMETOOLONG):
            raise GrowthError(f"cannot write in {display(out.parent)}: {os.strerror(e.errno)} (the partial output was removed)") from None
        raise


def _write(components: Sequence[Component], src: Path, folder: Path, plan: GrowthPlan, reader: CheckpointReader,
           formats: tuple[str, ...], progress: bool, phases: Phases) -> tuple[dict[str, Any], dict[str, str]]:
    """The components' files, then the weights, into ``folder``; returns the components' report entries and the
    source files left behind (those a component writes aside)."""
    entries: dict[str, Any] = {}
    for c in components:  # the small parts first: their problems show before the long part
        entries.update(c.write(src, folder, plan))
    grown, not_copied = write_grown(plan, reader, folder, formats, progress, phases)
    entries.update(grown)
    owned = {Path(f).parts[0] for f in owned_files(list(components), src)}
    return entries, {k: v for k, v in not_copied.items() if k.rstrip("/") not in owned}


def _verify(components: Sequence[Component], src: Path, written: tuple[Path, str], plan: GrowthPlan,
            source: tuple[Any, tuple[str, ...]], log: Log, progress: bool) -> dict[str, Any]:
    """Forward passes of both models (through Hugging Face views of them where either is not such a folder: ``source``
    is the reader and the output formats), then each component's own comparison. ``written``: the temporary folder
    and --out as typed, which names it in what is reported (the temporary folder is gone when the report is read)."""
    from .verification import verify_pair  # imports transformers: only when asked for

    folder, shown = written
    o = plan.options
    log("verifying: forward passes of both models")
    try:
        with hf_views(src, folder, source[0], plan, source[1]) as (small, big):
            verification = verify_pair(small, big, maps=plan.maps, recipe=plan.recipe, device=o.device, mode=o.verify_mode,
                                       tolerance=o.tolerance, text_file=o.text_file, seed=o.seed,
                                       storage_rounding=plan.rounding_dtype(), log=log, progress=progress,
                                       small_reader=source[0])  # the source's reader: its config read once, not again
    except GrowthError as e:  # e.g. out of memory: the growth is complete and worth keeping
        error = str(e)
        for path in sorted({str(folder), str(folder.resolve())}, key=len, reverse=True):
            error = error.replace(path, shown)
        log(f"verification could not run: {error}")
        verification = {"passed": False, "error": error, "device": o.device}
    for c in components:
        c.verify(src, folder, plan, verification, log)
    return verification


def _push_and_record(report: dict[str, Any], out: Path, options: GrowthOptions, log: Log) -> None:
    try:
        report["push"] = _push(report, out, options, log)
    except KeyboardInterrupt as e:
        e.args = (f"the grown checkpoint is in {display(out)}, not pushed",)
        raise
    _rewrite_report(report, out)  # the local report records the push (the uploaded one cannot)


def _rewrite_report(report: dict[str, Any], out: Path) -> None:
    """The report in the published ``out`` re-written with the push's outcome, each file replaced whole (written beside
    it first): a full disk keeps the report written with the checkpoint, and is one line, exit 2, as while growing."""
    push = report.get("push") or {}
    outcome = f"pushed to {push.get('url')}" if push.get("pushed") else f"not pushed: {push.get('why')}"
    try:
        with tempfile.TemporaryDirectory(prefix=".hfgrow-report-", dir=out) as tmp:
            write_report(report, Path(tmp))
            for name in ("growth_report.json", "growth_report.md"):
                os.replace(Path(tmp) / name, out / name)
    except OSError as e:
        why = (f"the disk holding {display(out)} is full" if e.errno in (errno.ENOSPC, errno.EDQUOT)
               else f"cannot write in {display(out)}: {os.strerror(e.errno) if e.errno else type(e).__name__}")
        raise GrowthError(f"{why}: its growth report does not record the push ({outcome}); the checkpoint there is "
                          f"complete") from None


def _push(report: dict[str, Any], out: Path, options: GrowthOptions, log: Log) -> dict[str, Any]:
    v = report["verification"]
    if (v is None or not v["passed"] or report["plan"]["approximate"]) and not options.force:
        why = ("verification was skipped" if v is None else "verification could not run" if "error" in v
               else "the growth is lossy" if report["plan"]["approximate"] else "verification failed")
        return {"repo_id": options.push_to_hub, "pushed": False, "why": f"{why} (--force pushes anyway)"}
    log(f"pushing to {options.push_to_hub}")
    try:
        url = hub.push(out, options.push_to_hub, private=options.private, revision=options.push_revision,
                       commit_message=options.commit_message, create_pr=options.create_pr, token=options.token)
    except PushError as e:
        report["push"] = {"repo_id": options.push_to_hub, "pushed": False, "why": str(e)}
        _rewrite_report(report, out)
        e.report = report  # the caller can still say what was grown, verified and kept
        raise
    log(f"pushed: {url}")
    return {"repo_id": options.push_to_hub, "pushed": True, "url": url}
