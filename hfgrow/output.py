"""The output folder: checked before anything is grown, locked for the whole run, assembled in a
temporary folder beside it and published by one atomic rename. A run removes only what it made itself.

The invariants (docs/usage.md, "Where the output goes"):

* nothing of the user's is deleted: a failed or interrupted run removes its temporary folder and the
  parents it created *if they are still empty*; ``--overwrite`` replaces only files an earlier run recorded
  that it wrote (:data:`MANIFEST`) or files this run writes (and, in a folder without a record, shards of another
  count), and refuses anything else, or a recorded file edited since (:func:`replaceable`, checked again at the
  final rename);
* nothing is written through a link: the lock and hfgrow's own marker files are opened with O_NOFOLLOW and
  must be regular files, and the temporary folder stays private (0700) until it is published;
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
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Callable

from .checkpoint import SAFE_INDEX, source_files, sync_dir
from .errors import GrowthError
from .jsonfile import parse_json

_OLD = "old-"  # a temporary folder holding the old --out while the new one moves in (where renameat2 is missing)
OWNER = ".hfgrow-pid"  # in a temporary folder: the process assembling it (removed before it moves into place)
MOVED = ".hfgrow-moved.json"  # in an …old-* folder: what it holds (the old --out: its path, device and inode)
_NAME_KEEP = 120  # of --out's name in the names of the temporary folder and the lock (NAME_MAX is 255)


def _reason(e: OSError) -> str:
    return os.strerror(e.errno) if e.errno else str(e)


def umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


MANIFEST = ".hfgrow-files.json"  # in a grown folder: every file the run wrote, what a later --overwrite may replace
_SHARD = re.compile(r"model-\d{5}-of-\d{5}\.safetensors")
_HASHED = 64 << 20  # files up to this size are hashed in the record; larger ones (weights) by their size
_FIXED = ("config.json", "model.safetensors", SAFE_INDEX, "README.md", "growth_report.json", "growth_report.md", MANIFEST)


def entries(folder: Path) -> list[str]:
    """What replacing ``folder`` would delete, as relative paths: every file, link and other non-folder
    (links to folders included, never followed), and every empty folder (``name/``)."""
    def fail(e: OSError) -> None:
        raise GrowthError(f"cannot list {e.filename}: {_reason(e)}")

    found = []
    for root, dirs, files in os.walk(folder, onerror=fail):
        rel = Path(root).relative_to(folder)
        links = [d for d in dirs if os.path.islink(os.path.join(root, d))]
        dirs[:] = [d for d in dirs if d not in links]
        found += [(rel / f).as_posix() for f in (*files, *links)]
        if not (dirs or files or links) and rel != Path("."):
            found.append(rel.as_posix() + "/")
    return sorted(found)


def _fingerprint(path: Path) -> str | None:
    """A file's size, and for a file of at most :data:`_HASHED` bytes its SHA-256: enough to tell that a file hfgrow
    wrote was edited since (a README, a tokenizer) without reading gigabytes of weights again."""
    try:
        st = os.stat(path, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size > _HASHED:
            return str(st.st_size)
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        return f"{st.st_size}:{digest.hexdigest()}"
    except OSError:
        return None


def _read_small(path: Path, limit: int) -> bytes | None:
    """At most ``limit`` bytes of the regular file ``path``, never through a link, never blocking on a FIFO; None
    when it is not such a file or cannot be read."""
    try:
        fd = _open_regular(path, os.O_RDONLY)
    except (OSError, GrowthError):
        return None
    try:
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_record(folder: Path) -> dict:
    data = _read_small(folder / MANIFEST, 10**7)
    try:
        record = parse_json(data, MANIFEST) if data is not None else {}
    except GrowthError:
        return {}
    return record if isinstance(record, dict) else {}


def _inside(name: object) -> bool:
    """A record's file name: a plain relative path below the folder (no '..', not absolute, no empty part)."""
    if not isinstance(name, str) or not name or "\0" in name or "\\" in name or name.startswith("/"):
        return False
    parts = name.rstrip("/").split("/")
    return all(p not in ("", ".", "..") for p in parts)


def record_problem(folder: Path) -> str | None:
    """Why the record in ``folder`` is not one hfgrow wrote (None when it is, or there is none): it names a file
    outside the folder (hfgrow records only what it wrote in it)."""
    record = _read_record(folder)
    files, prints = record.get("files"), record.get("fingerprints")
    names = [*(files if isinstance(files, list) else ()), *(prints if isinstance(prints, dict) else ())]
    outside = next((n for n in names if not _inside(n)), None)
    if outside is None:
        return None
    return (f"holds a {MANIFEST} that is not hfgrow's record: it names {str(outside)[:80]!r}, outside the folder "
            f"(move the folder away, or remove that file)")


def read_manifest(folder: Path) -> set[str]:
    """The files an earlier hfgrow run recorded that it wrote in ``folder`` (none when there is no readable record;
    only names inside the folder)."""
    files = _read_record(folder).get("files")
    return {f for f in files if _inside(f)} if isinstance(files, list) else set()


def changed(folder: Path) -> list[str]:
    """The files an earlier hfgrow run recorded in ``folder`` that are no longer what it wrote (edited since):
    someone's work, which ``--overwrite`` must not replace. A record without fingerprints (older hfgrow) names none;
    a name outside the folder is never looked at (:func:`record_problem`)."""
    prints = _read_record(folder).get("fingerprints")
    if not isinstance(prints, dict):
        return []
    found = set(entries(folder))  # never a name reached through a link
    return sorted(f for f, was in prints.items() if f in found and f != MANIFEST and _fingerprint(folder / f) != was)


def write_manifest(folder: Path) -> list[str]:
    """Record in ``folder`` every file in it (and the record itself), with each file's fingerprint; returns the list."""
    (folder / MANIFEST).unlink(missing_ok=True)
    found = entries(folder)
    files = sorted({*found, MANIFEST})
    prints = {f: fp for f in found if (fp := _fingerprint(folder / f)) is not None}
    fd = _open_regular(folder / MANIFEST, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "w") as f:
        json.dump({"written_by": "hfgrow", "files": files, "fingerprints": prints}, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    return files


def planned(src: Path | None, owned: set[str] = frozenset()) -> set[str]:
    """The files a growth of ``src`` writes, as far as they are known before growing: the fixed names, the source's
    copied files and ``owned``, the files its side-cars write (:meth:`hfgrow.components.Component.owned_files`);
    shard names match :data:`_SHARD`."""
    names = set(_FIXED) | set(owned)
    if src is not None and src.is_dir():
        names |= set(source_files(src)[0])
    return names


def foreign(found: list[str], allowed: set[str], shards: bool = False) -> list[str]:
    """The entries of ``found`` hfgrow may not replace: neither in ``allowed`` (nor, with ``shards``, a shard name:
    in a folder without a record, a checkpoint sharded differently is replaced whole), and for an empty folder, no
    folder of an allowed file."""
    folders = {p.as_posix() + "/" for a in allowed for p in Path(a).parents if p != Path(".")}
    return [f for f in found if f not in allowed and f not in folders and not (shards and _SHARD.fullmatch(f))]


def replaceable(folder: Path, src: Path | None = None, owned: set[str] = frozenset()) -> tuple[bool, str]:
    """Whether ``--overwrite`` may replace ``folder`` before a growth of ``src`` (whose side-cars write ``owned``): it
    holds only files an earlier hfgrow run recorded that it wrote or files this growth writes, and without a record
    it is a checkpoint (a config and weights). Returns (yes, the reason when not)."""
    found = entries(folder)
    record = read_manifest(folder)
    if problem := record_problem(folder):
        return False, problem
    if edited := changed(folder):
        return False, _edited(edited)
    others = foreign(found, record | planned(src, owned), shards=not record)
    if others:
        return False, (f"holds {', '.join(others)}, which {'is' if len(others) == 1 else 'are'} not part of a checkpoint "
                       "hfgrow wrote or writes now")
    if not record and not ("config.json" in found and any(re.fullmatch(r"model.*\.safetensors", f) for f in found)):
        return False, "holds no checkpoint (config.json and weights)"
    return True, ""


def _edited(files: list[str]) -> str:
    return (f"holds {', '.join(files)}, which {'was' if len(files) == 1 else 'were'} changed after hfgrow wrote "
            f"{'it' if len(files) == 1 else 'them'} (move {'it' if len(files) == 1 else 'them'} away first)")


def display(path: str | os.PathLike) -> str:
    """``path`` as a message shows it: relative to the current folder when it lies inside it (the user typed it so, or
    could have), else absolute; quoted."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    return repr(absolute if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative)


def check_place(out: Path) -> None:
    """What about ``--out`` can be known without the source: a name, parents that are folders, not a link, a place
    that can be written (exit 2 with one line)."""
    shown = display(out)
    if not out.name:
        raise GrowthError(f"--out {shown} is the root of the filesystem")
    limit = _name_max(out)
    if len(os.fsencode(out.name)) > limit:
        raise GrowthError(f"--out {shown}: the name is longer than the {limit} bytes the filesystem allows")
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise GrowthError(f"--out {shown}: {display(parent)} is not a folder")
    if out.is_symlink():
        raise GrowthError(f"--out {shown} is a symbolic link{'' if out.exists() else ' to nothing'}: give a real folder")
    _check_writable(out)


def check_out(out: Path, src: Path | None, overwrite: bool, owned: set[str] = frozenset()) -> None:
    """Everything about ``--out`` that can be known before growing (exit 2 with one line); ``owned``: the files the
    growth's side-cars write, which ``overwrite`` may replace."""
    shown = display(out)
    check_place(out)
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
        ok, why = replaceable(out, src, owned)
        if not ok:
            raise GrowthError(f"--overwrite replaces only what hfgrow wrote: {shown} {why}")


def _check_writable(out: Path) -> None:
    """The checkpoint is assembled beside ``out`` and renamed into place: the folder that will hold it must be
    writable, and ``out``, where it exists, a writable folder that a rename can replace (not a mount point)."""
    shown = display(out)
    out = Path(os.path.abspath(out))
    if out.is_dir() and os.path.ismount(out):
        raise GrowthError(f"--out {shown} is a mount point, which the grown checkpoint cannot be renamed onto: "
                          f"give a folder inside it (e.g. {display(out / 'grown')})")
    parent = next(p for p in out.parents if p.exists())
    for path in ((out,) if out.is_dir() else ()) + (parent,):
        why = _unwritable(path)
        if why:
            raise GrowthError(f"cannot write --out {shown}: {display(path)}: {why}")


def _unwritable(path: Path) -> str | None:
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return os.strerror(errno.EROFS)
    except (OSError, AttributeError):
        pass
    return None if os.access(path, os.W_OK | os.X_OK) else os.strerror(errno.EACCES)


def _open_regular(path: Path, flags: int, mode: int = 0o666) -> int:
    """``os.open`` that refuses a symbolic link or anything but a regular file at ``path`` (GrowthError): hfgrow
    never writes through a link planted where it writes its own files."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as e:
        if e.errno != errno.ELOOP:
            raise
        raise GrowthError(f"{display(path)} is a symbolic link, where hfgrow writes a file of its own: refused (remove it)") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise GrowthError(f"{display(path)} is not a regular file, where hfgrow writes a file of its own: refused (remove it)")
    return fd


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
        self._before: set[str] = set()  # what --out held once locked
        stem = self.out.name[:_NAME_KEEP]
        self._lock_path = self.out.parent / f".{stem}.hfgrow.lock"
        self._tmp_prefix = f".{stem}.hfgrow-"

    def __enter__(self) -> "OutputFolder":
        try:
            self._make_parents()
            self._lock()
            self._remove_stale()
            # mkdtemp makes it 0700: no one else can plant a link in it while it is written (it follows the umask once published)
            self.tmp = Path(tempfile.mkdtemp(prefix=self._tmp_prefix, dir=self.out.parent))
            _write_own(self.tmp / OWNER, str(os.getpid()))
            self._before = set(entries(self.out)) if self.out.is_dir() else set()
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
            fd = _open_regular(self._lock_path, os.O_RDWR | os.O_CREAT)  # never a link's target truncated
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
        """Temporary folders of earlier runs to this --out that were killed: folders of this user whose process
        (their :data:`OWNER` file, read without following a link or waiting on a FIFO) is gone. One killed between
        the two renames of :meth:`_replace` left the old checkpoint in ``…old-*/x`` and no --out: it is moved back
        when that folder's :data:`MOVED` record proves hfgrow moved it there (when --out is there, the new checkpoint
        was published and the old one goes). Anything else is not ours to judge, and is left as it is."""
        for tmp in self.out.parent.glob(f"{glob_escape(self._tmp_prefix)}*"):
            try:
                st = os.lstat(tmp)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                continue  # a link, a file, or another user's folder
            pid = _read_small(tmp / OWNER, 32)
            if pid is None or not re.fullmatch(rb"\s*[1-9]\d{0,9}\s*", pid) or _alive(int(pid)):
                continue
            if tmp.name.startswith(self._tmp_prefix + _OLD) and not self._restore(tmp):
                continue
            shutil.rmtree(tmp, ignore_errors=True)

    def _restore(self, old: Path) -> bool:
        """Move back the old --out that a killed run left in ``old``/x, if ``old``'s record says that this path was
        moved there and ``x`` is still that folder (its device and inode). Returns whether ``old`` may be removed."""
        data = _read_small(old / MOVED, 4096)
        try:
            record = parse_json(data, MOVED) if data is not None else None
        except GrowthError:
            record = None
        if not isinstance(record, dict) or record.get("out") != str(self.out):
            return False  # no proof that hfgrow moved anything here
        try:
            st = os.lstat(old / "x")
        except FileNotFoundError:
            return True  # killed before the move, or after moving it back
        if not stat.S_ISDIR(st.st_mode) or [st.st_dev, st.st_ino] != [record.get("device"), record.get("inode")]:
            return False
        if os.path.lexists(self.out):
            return (self.out / MANIFEST).is_file()  # else not the published checkpoint: leave both as they are
        os.rename(old / "x", self.out)
        self.log(f"restored {display(self.out)}, which an interrupted run had moved aside")
        return True

    def publish(self) -> None:
        """Move the assembled checkpoint to --out, re-checking the destination at the last moment."""
        assert self.tmp is not None
        (self.tmp / OWNER).unlink(missing_ok=True)
        written = write_manifest(self.tmp)
        os.chmod(self.tmp, 0o777 & ~umask())  # 0700 while written; the output follows the umask
        out = self.out
        if out.is_symlink() or (out.exists() and not out.is_dir()):
            raise GrowthError(f"--out {str(out)!r} was replaced by a file or link while growing: the grown checkpoint was not moved there")
        if out.is_dir() and any(out.iterdir()):
            self._replace(set(written))
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

    def _replace(self, written: set[str]) -> None:
        """--out holds files: swap it with the assembled checkpoint if all of them are an earlier hfgrow run's
        (its record) or files this run wrote, else leave it as it is."""
        out, found, record = self.out, entries(self.out), read_manifest(self.out)
        # the same files replaceable() accepted before growing: without a record, any checkpoint file name
        others = foreign(found, record | written | (set() if record else set(_FIXED)), shards=not record) if self.overwrite else found
        if self.overwrite and (problem := record_problem(self.out)):
            raise GrowthError(f"--out {str(out)!r} {problem}: it was left as it is and the grown checkpoint was removed")
        if self.overwrite and (edited := changed(self.out)):
            raise GrowthError(f"--out {str(out)!r} {_edited(edited)}: it was left as it is and the grown checkpoint was removed")
        if others:
            arrived = [f for f in others if f not in self._before]
            what = (f"was filled by something else while growing ({', '.join(arrived)})" if arrived or not self.overwrite else
                    f"holds {', '.join(others)}, which hfgrow neither wrote before nor writes now")
            raise GrowthError(f"--out {str(out)!r} {what}: it was left as it is and the grown checkpoint was removed")
        self.log(f"replacing {display(out)}: {len(found)} files ({', '.join(found)})")
        if _rename(self.tmp, out, _EXCHANGE):  # tmp now holds the old checkpoint
            self.published = True
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:  # two renames: the old checkpoint waits in a marked folder that the next run restores if this one dies
            old = move_aside(out, self._tmp_prefix)
            try:
                os.rename(self.tmp, out)
            except BaseException:
                os.rename(old / "x", out)  # the user's checkpoint back where it was
                shutil.rmtree(old, ignore_errors=True)
                raise
            self.published = True
            shutil.rmtree(old, ignore_errors=True)

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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process
    return True


def _write_own(path: Path, text: str) -> None:
    os.write(fd := _open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL), text.encode())
    os.close(fd)


def move_aside(out: Path, prefix: str) -> Path:
    """``out`` moved into a new private folder beside it (``prefix`` + ``old-*``/x) holding this process's pid
    (:data:`OWNER`) and a record of what was moved (:data:`MOVED`: the path, its device and inode), by which a later
    run knows, should this one be killed, that the folder is hfgrow's to move back (:meth:`OutputFolder._restore`)."""
    old = Path(tempfile.mkdtemp(prefix=f"{prefix}{_OLD}", dir=out.parent))
    st = os.lstat(out)
    _write_own(old / OWNER, str(os.getpid()))
    _write_own(old / MOVED, json.dumps({"written_by": "hfgrow", "out": str(out), "device": st.st_dev, "inode": st.st_ino}))
    os.rename(out, old / "x")
    return old


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
