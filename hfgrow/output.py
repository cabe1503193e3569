"""The output folder: checked before anything is grown, locked for the whole run, assembled in a
temporary folder beside it and published by one atomic rename. A run removes only what it made itself.

The invariants (README, "Where the output goes"):

* nothing of the user's is deleted: a failed or interrupted run removes its temporary folder and the
  parents it created *if they are still empty*; ``--overwrite`` replaces only a folder that holds a
  checkpoint and nothing else (:func:`replaceable`);
* one run's output is never replaced by another's: a lock beside ``--out`` excludes concurrent runs,
  and the destination is re-checked and taken atomically at the final rename (``renameat2`` with
  RENAME_NOREPLACE or RENAME_EXCHANGE where the kernel has it);
* bad paths are refused before growing (exit 2), never discovered after.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import functools
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from .checkpoint import is_checkpoint_file, sync_dir
from .errors import GrowthError

OWNER = ".hfgrow-pid"  # in a temporary folder: the process assembling it (removed before it moves into place)
_NAME_KEEP = 120  # of --out's name in the names of the temporary folder and the lock (NAME_MAX is 255)


def _reason(e: OSError) -> str:
    return os.strerror(e.errno) if e.errno else str(e)


def umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


MODULE_FILES = ("config.json", "model.safetensors", "pytorch_model.bin")  # a sentence-transformers module's folder


def _ours(folder: Path, p: Path) -> bool:
    """Whether ``p`` is part of a checkpoint hfgrow writes: its files, the sentence-transformers files and the module
    folders its modules.json names, adapters/<name>/ of grown adapters."""
    from . import adapters, sentence

    def holds_only(path: Path, names: tuple[str, ...]) -> bool:
        return all(f.is_file() and not f.is_symlink() and f.name in names for f in path.iterdir())

    if p.is_symlink():
        return False
    if p.is_file():
        return is_checkpoint_file(p.name) or p.name in (sentence.MODULES, *sentence.CONFIGS)
    if not p.is_dir():
        return False
    if p.name == "adapters":
        return all(a.is_dir() and not a.is_symlink() and holds_only(a, (adapters.CONFIG, adapters.WEIGHTS)) for a in p.iterdir())
    try:
        listed = {m.get("path") for m in json.loads((folder / sentence.MODULES).read_text())}
    except (OSError, ValueError, AttributeError, TypeError):
        return False
    return p.name in listed and holds_only(p, MODULE_FILES)


def replaceable(folder: Path) -> tuple[bool, str]:
    """Whether ``--overwrite`` may replace ``folder``: a checkpoint a model library made (a config and
    weights) and nothing foreign — no subfolder, no link, no file that is not part of a checkpoint.
    Returns (yes, the reason when not)."""
    entries = sorted(folder.iterdir())
    foreign = [p.name + ("/" if p.is_dir() else "") for p in entries if not _ours(folder, p)]
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        return False, f"holds {shown}, which {'is' if len(foreign) == 1 else 'are'} not part of a checkpoint"
    names = {p.name for p in entries}
    if "config.json" not in names or not any(re.fullmatch(r"model.*\.safetensors|pytorch_model.*\.bin", n) for n in names):
        return False, "holds no checkpoint (config.json and weights)"
    return True, ""


def check_out(out: Path, src: Path | None, overwrite: bool) -> None:
    """Everything about ``--out`` that can be known before growing (exit 2 with one line)."""
    shown = repr(str(out))
    if not out.name:
        raise GrowthError(f"--out {shown} is the root of the filesystem")
    limit = _name_max(out)
    if len(os.fsencode(out.name)) > limit:
        raise GrowthError(f"--out {shown}: the name is longer than the {limit} bytes the filesystem allows")
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise GrowthError(f"--out {shown}: {str(parent)!r} is not a folder")
    if out.is_symlink():
        raise GrowthError(f"--out {shown} is a symbolic link{'' if out.exists() else ' to nothing'}: give a real folder")
    if src is not None:
        real_out, real_src = _real(out), src.resolve()
        if real_out == real_src or real_out in real_src.parents:
            raise GrowthError("--out must not be the source folder or contain it")
        if real_src in real_out.parents:
            raise GrowthError("--out must not be inside the source folder")
    if not out.exists():
        return
    if not out.is_dir():
        raise GrowthError(f"--out {shown} exists and is not a folder")
    if any(out.iterdir()):
        if not overwrite:
            raise GrowthError(f"--out {shown} exists and is not empty (use --overwrite to replace it)")
        ok, why = replaceable(out)
        if not ok:
            raise GrowthError(f"--overwrite replaces only a folder holding a checkpoint and nothing else: {shown} {why}")


def _real(path: Path) -> Path:
    """``path`` with its existing part resolved (symlinks included), the rest appended."""
    path = Path(os.path.abspath(path))
    existing = next(p for p in (path, *path.parents) if p.exists())
    return existing.resolve() / path.relative_to(existing)


def _name_max(out: Path) -> int:
    parent = next((p for p in Path(os.path.abspath(out)).parents if p.is_dir()), Path("/"))
    try:
        return os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


class OutputFolder:
    """``--out`` for the duration of one run: its lock, the parents this run created, the temporary
    folder the checkpoint is assembled in, and the final move into place.

    >>> with OutputFolder(out, overwrite=False) as folder:   # locked; folder.tmp exists
    ...     write(folder.tmp)
    ...     folder.publish()                                   # the only step that touches --out
    """

    def __init__(self, out: str | os.PathLike, overwrite: bool, log: Callable[[str], None] = lambda msg: None):
        self.out = Path(os.path.abspath(out))
        self.overwrite = overwrite
        self.log = log
        self.tmp: Path | None = None
        self.published = False
        self._created: list[Path] = []  # parents this run made, outermost first
        self._lock_fd: int | None = None
        stem = self.out.name[:_NAME_KEEP]
        self._lock_path = self.out.parent / f".{stem}.hfgrow.lock"
        self._tmp_prefix = f".{stem}.hfgrow-"

    def __enter__(self) -> "OutputFolder":
        try:
            self._make_parents()
            self._lock()
            self._remove_stale()
            self.tmp = Path(tempfile.mkdtemp(prefix=self._tmp_prefix, dir=self.out.parent))
            os.chmod(self.tmp, 0o777 & ~umask())  # mkdtemp makes it 0700; the output follows the umask
            (self.tmp / OWNER).write_text(str(os.getpid()))
        except OSError as e:
            self.close()
            raise GrowthError(f"cannot write --out {str(self.out)!r}: {_reason(e)}") from None
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the steps ---------------------------------------------------------------------------------

    def _make_parents(self) -> None:
        missing = [p for p in (self.out.parent, *self.out.parent.parents) if not p.exists()]
        for p in reversed(missing):
            try:
                p.mkdir()  # mode 0777 less the umask, as mkdir(1)
            except FileExistsError:
                continue  # made by someone else meanwhile: not ours to remove
            self._created.append(p)

    def _lock(self) -> None:
        while True:
            fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise GrowthError(f"another hfgrow run (pid {owner}) is writing --out {str(self.out)!r}: "
                                  "wait for it to finish") from None
            try:  # the file may have been unlinked by the run that held it: then lock the new one
                if os.fstat(fd).st_ino == os.stat(self._lock_path).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._lock_fd = fd

    def _remove_stale(self) -> None:
        """Temporary folders of earlier runs to this --out that were killed: their process is gone."""
        for tmp in self.out.parent.glob(f"{glob_escape(self._tmp_prefix)}*"):
            try:
                os.kill(int((tmp / OWNER).read_text()), 0)
            except ProcessLookupError:
                shutil.rmtree(tmp, ignore_errors=True)
            except (OSError, ValueError):
                continue  # not ours to judge (no marker, or no permission)

    def publish(self) -> None:
        """Move the assembled checkpoint to --out, re-checking the destination at the last moment."""
        assert self.tmp is not None
        (self.tmp / OWNER).unlink(missing_ok=True)
        out = self.out
        if out.is_symlink() or (out.exists() and not out.is_dir()):
            raise GrowthError(f"--out {str(out)!r} was replaced by a file or link while growing: the grown checkpoint was not moved there")
        if out.is_dir() and any(out.iterdir()):
            ok, why = replaceable(out)
            if not self.overwrite or not ok:
                raise GrowthError(f"--out {str(out)!r} was filled by something else while growing ({why or 'without --overwrite'}): "
                                  "it was left as it is and the grown checkpoint was removed")
            listing = sorted(p.name for p in out.iterdir())
            self.log(f"replacing {out}: {len(listing)} files ({', '.join(listing[:6])}{', …' if len(listing) > 6 else ''})")
            if _rename(self.tmp, out, _EXCHANGE):  # tmp now holds the old checkpoint
                self.published = True
                shutil.rmtree(self.tmp, ignore_errors=True)
            else:
                old = Path(tempfile.mkdtemp(prefix=f"{self._tmp_prefix}old-", dir=out.parent))
                os.rename(out, old / "x")
                os.rename(self.tmp, out)
                self.published = True
                shutil.rmtree(old, ignore_errors=True)
        else:
            if out.is_dir():  # empty: take its place, unless something arrives meanwhile
                try:
                    out.rmdir()
                except OSError:
                    raise GrowthError(f"--out {str(out)!r} was filled by something else while growing: it was left as it is") from None
            try:
                if not _rename(self.tmp, out, _NOREPLACE):
                    if out.exists():
                        raise FileExistsError(errno.EEXIST, "exists")
                    os.rename(self.tmp, out)
            except (FileExistsError, IsADirectoryError):
                raise GrowthError(f"--out {str(out)!r} was created by something else while growing: it was left as it is") from None
            except OSError as e:
                if e.errno != errno.ENOTEMPTY:
                    raise
                raise GrowthError(f"--out {str(out)!r} was created by something else while growing: it was left as it is") from None
            self.published = True
        self.tmp = None
        sync_dir(out.parent)

    def close(self) -> None:
        """Remove what this run made and did not publish, then release the lock."""
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None
        if self._lock_fd is not None:
            try:
                os.unlink(self._lock_path)  # while holding it (see _lock for a run that opened it meanwhile)
            except OSError:
                pass
            os.close(self._lock_fd)
            self._lock_fd = None
        if not self.published:
            for p in reversed(self._created):  # innermost first; a folder that holds anything stays
                try:
                    p.rmdir()
                except OSError:
                    break
        self._created = []


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


# renameat2(2): atomic "rename unless the target exists" and "swap two paths" (Linux ≥ 3.15; glibc ≥ 2.28)
_NOREPLACE, _EXCHANGE = 1, 2
_AT_FDCWD = -100


def _rename(src: Path, dst: Path, flags: int) -> bool:
    """renameat2 with ``flags``; False where the platform or filesystem lacks it (the caller falls back)."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(dst))


@functools.cache
def _renameat2():
    try:
        fn = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn
