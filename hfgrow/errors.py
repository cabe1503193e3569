"""Errors a user can act on, and the exit codes the CLI maps them to."""

from __future__ import annotations


class ExitCode:
    """Documented process exit codes (docs/usage.md, "Exit codes")."""

    OK = 0
    INTERNAL = 1  # a bug in hfgrow: please report it
    BAD_INPUT = 2  # unusable arguments or checkpoint; nothing was written
    VERIFY_FAILED = 3  # the grown checkpoint was written but its verification failed or could not run
    NOT_PUSHED = 4  # the grown checkpoint was written and verified, but --push-to-hub did not happen


class GrowthError(Exception):
    """Bad input or an impossible request: shown to the user as one line, exit code 2."""

    exit_code = ExitCode.BAD_INPUT


class PushError(GrowthError):
    """The checkpoint is written; the upload failed (exit code 4)."""

    exit_code = ExitCode.NOT_PUSHED
    report: dict | None = None  # the growth report of the checkpoint kept on disk, when the pipeline knows it


def first_line(e: BaseException) -> str:
    """The first line of an exception's message (its type when it has none): a library's error shown in one line."""
    text = str(e).strip().splitlines()
    return text[0].strip() if text else type(e).__name__
