"""The command line: a thin layer over the Python API (:func:`hfgrow.grow`, :func:`hfgrow.verify`,
:func:`hfgrow.inspect`) and its one options object, :class:`hfgrow.GrowthOptions`."""

from __future__ import annotations

import functools
import json
import os
import shlex
import signal
import sys
import threading
import traceback
from typing import TYPE_CHECKING, Any, Callable

import click

from .version import __version__
from .errors import ExitCode, GrowthError, PushError

if TYPE_CHECKING:  # torch and transformers load inside the commands: --help, --version and usage errors answer without them
    from .plan import GrowthOptions

DTYPE_NAMES = ("bfloat16", "float16", "float32")  # options.DTYPES' names (tests/test_speed.py checks that they agree)

EPILOG = """\b
Exit codes: 0 success (or a lossy growth --allow-lossy or --new-blocks stack
asked for), 1 internal error, 2 bad input (nothing written), 3 verification
failed or could not run (checkpoint and report written; nothing pushed), 4
written and verified but not pushed, 130 interrupted (Ctrl-C; 143 SIGTERM, 129
SIGHUP: nothing written).

\b
Examples:
  hfgrow ./my-bert --factor 2 --out ./big
  hfgrow bert-base-chinese --factor 2 --out ./big --push-to-hub me/bert-big
  hfgrow ./my-llama --hidden-size 3072 --intermediate-size 8192 --layers 32 --out ./big
  hfgrow inspect ./my-llama --factor 2
  hfgrow verify ./my-llama ./big
"""
VERIFY_EPILOG = """\b
Exit codes: 0 the two models compute the same function (PASS), 1 internal
error, 2 bad input (the pair cannot be read or related), 3 verification failed
or could not run.
"""
COMMANDS = ("grow", "inspect", "verify", "recipes")
SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Group(click.Group):
    """`hfgrow SRC ...` is `hfgrow grow SRC ...`; usage errors are one `error: ...` line (exit 2)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args:  # `hfgrow` alone: the help, on stdout
            click.echo(ctx.get_help())
            ctx.exit(0)
        if args[0] not in self.commands and args[0] not in ("-h", "--help", "--version"):
            args = ["grow", *args]  # the bare form, options before SRC included
        return super().parse_args(ctx, args)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        # torch's CPU allocator backs tensors of 2 MB and more with huge pages (read at its first such allocation):
        # first-touch page faults of the grown tensors were 40 % of a growth's arithmetic (docs/performance.md)
        os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
        as_json = wants_json(kwargs.get("args", args[0] if args else None))
        previous = {}
        if threading.current_thread() is threading.main_thread():  # signal handlers can only be set there
            for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
                if sig is not None and signal.getsignal(sig) == signal.SIG_DFL:
                    previous[sig] = signal.signal(sig, _interrupt)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as e:
            fail("error", e.format_message(), e.exit_code, as_json)
        except click.exceptions.Abort:
            interrupted(KeyboardInterrupt(), as_json)
        except Exception as e:  # a bug outside run(): one line too (and the JSON object --json promises)
            fail("internal error", f"{type(e).__name__}: {e}", ExitCode.INTERNAL, as_json)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if standalone_mode:
            sys.exit(code or 0)
        return code


@click.group(cls=Group, epilog=EPILOG, context_settings=SETTINGS, invoke_without_command=False)
@click.version_option(__version__, prog_name="hfgrow")
def main() -> None:
    """Grow a pretrained transformer into a wider (and deeper) one that computes the same function.

    \b
    hfgrow SRC --out DIR [growth options]    grow, verify, report (the `grow` command)
    hfgrow inspect SRC [growth options]      the plan, sizes and memory, writing nothing
    hfgrow verify SMALL BIG                  the verification alone, on any pair
    hfgrow recipes                           the supported architectures and classes

    SRC is a local checkpoint folder or a Hub id (bert-base-chinese, org/name).
    """


# --help groups the options as docs/usage.md's table does (click has no option sections of its own)
SECTIONS = {
    "Source and output": ("out", "overwrite", "revision"),
    "Growth": ("factor", "attention", "hidden_size", "intermediate_size", "num_heads", "num_kv_heads", "head_dim", "layers",
               "insert_at", "new_blocks", "symmetry", "seed", "convention", "allow_lossy"),
    "Ecosystem": ("adapters", "multipliers", "dense_out", "vision_tower"),
    "Output": ("dtype", "to", "max_shard_size"),
    "Hub": ("push_to_hub", "token", "private", "push_revision", "commit_message", "create_pr", "force", "base_model"),
    "Verification": ("no_verify", "device", "verify_mode", "tolerance", "text_file"),
}


class Command(click.Command):
    """A command whose --help lists its options in the sections of SECTIONS (``moved``: this command's exceptions), then
    the rest (--json, -q, -v, --help)."""

    def __init__(self, *args: Any, moved: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.moved = moved or {}

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows: dict[str, list[tuple[str, str]]] = {}
        section_of = {**{name: title for title, names in SECTIONS.items() for name in names}, **self.moved}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None and not isinstance(param, click.Argument):
                rows.setdefault(section_of.get(param.name or "", "Messages"), []).append(record)
        for title in [*SECTIONS, "Messages"]:
            if rows.get(title):
                with formatter.section(title):
                    formatter.write_dl(rows[title])


def growth_options(f: Callable) -> Callable:
    options = [
        click.option("--factor", "-k", default=None, metavar="INTEGER",
                     help="Integer factor >= 2 for every width: hidden, FFN, and heads or head_dim [default: 2 when no size is given]."),
        click.option("--attention", type=click.Choice(["heads", "head-dim"]), default="heads", show_default=True,
                     help="Grow the number of heads (and KV heads), keeping head_dim, RoPE and the score scale; or grow head_dim."),
        click.option("--hidden-size", type=int, default=None, help="Target hidden size (any for pre-norm models; post-norm: multiples)."),
        click.option("--intermediate-size", type=int, default=None, help="Target FFN size (any)."),
        click.option("--num-heads", type=int, default=None, help="Target number of attention heads."),
        click.option("--num-kv-heads", type=int, default=None,
                     help="Target number of KV heads (GQA) [default: keep the query groups, else the nearest group size]."),
        click.option("--head-dim", type=int, default=None, help="Target head_dim (rotary models: whole multiples)."),
        click.option("--layers", type=int, default=None, help="Target number of blocks per stack; new blocks are exactly the identity (pre-norm)."),
        click.option("--insert-at", default=None, metavar="I,J", help="Original blocks after which the new blocks go, e.g. 1,3 [default: spread evenly]."),
        click.option("--new-blocks", type=click.Choice(["identity", "stack-identity", "stack"]), default="identity",
                     show_default=True,
                     help="identity: new blocks, spread through the stack, are exactly the identity. stack-identity: "
                          "copies of blocks 0, 1, ... appended after the stack in order, each exactly the identity "
                          "(G_stack's order, exact). stack: the whole stack repeated in order (G_stack; --layers a "
                          "multiple of the blocks; NOT exact, reported LOSSY)."),
        click.option("--symmetry", type=click.Choice(["split", "noise", "none"]), default="split", show_default=True,
                     help="Let copies diverge in training: split their input weights unevenly, perturb them, or keep plain copies."),
        click.option("--convention", type=click.Choice(["copy", "orthogonal"]), default="copy", show_default=True,
                     help="copy: plain copies, norms and eps unchanged. orthogonal: copies x 1/sqrt(k), eps scaled."),
        click.option("--allow-lossy", is_flag=True, help="Grow even where exactness is impossible; the report states the gap."),
        click.option("--revision", default=None, metavar="REV", help="Revision (branch, tag, commit) of a Hub id SRC."),
        click.option("--seed", default=0, show_default=True, help="Seed for split shares, noise, random inputs and masks."),
    ]
    return functools.reduce(lambda g, opt: opt(g), reversed(options), f)


def verify_options(device_help: str) -> Callable[[Callable], Callable]:
    def decorate(f: Callable) -> Callable:
        options = [
            click.option("--device", default="cpu", show_default=True, metavar="DEVICE", help=device_help),
            click.option("--verify-mode", type=click.Choice(["auto", "full", "blockwise"]), default="auto", show_default=True,
                         help="full: each model whole; blockwise: one block's weights at a time (models larger than memory); auto: full when it fits."),
            click.option("--tolerance", default=1e-4, show_default=True, type=float, help="Largest fp32 relative gap that passes."),
            click.option("--text-file", type=click.Path(dir_okay=False), default=None, help="Sentences (one a line) to verify on."),
        ]
        return functools.reduce(lambda g, opt: opt(g), reversed(options), f)
    return decorate


def output_options(f: Callable) -> Callable:
    options = [
        click.option("--quiet", "-q", is_flag=True, help="Print only errors and the verdict."),
        click.option("--verbose", "-v", is_flag=True, help="Show tracebacks of internal errors."),
    ]
    return functools.reduce(lambda g, opt: opt(g), reversed(options), f)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled as Ctrl-C is: the run removes what it made and exits 128 + the signal."""

    def __init__(self, signum: int):
        super().__init__()
        self.signum = signum


def _interrupt(signum: int, frame: Any) -> None:
    raise Terminated(signum)


def interrupted(e: KeyboardInterrupt, as_json: bool = False) -> None:
    what = e.args[0] if e.args else "nothing was written"
    name = signal.Signals(e.signum).name if isinstance(e, Terminated) else "Ctrl-C"
    fail(f"interrupted ({name})", what, 128 + (e.signum if isinstance(e, Terminated) else signal.SIGINT), as_json)


def wants_json(args: Any) -> bool:
    """Whether the command line (``args``, else the process's) asks for --json: then a failure is a JSON object too."""
    return "--json" in (sys.argv[1:] if args is None else [str(a) for a in args])


def print_json(value: Any) -> None:
    """One JSON object on stdout, RFC 8259 (non-finite numbers null, with a field saying what they were)."""
    from .jsonfile import json_text

    click.echo(json_text(value))


def fail(kind: str, message: str, code: int, as_json: bool = False) -> None:
    """The end of a run that failed: ``kind: message`` on stderr, with --json the same as one JSON object on stdout
    (``verdict`` ERROR, INTERNAL ERROR or INTERRUPTED, ``exit_code``, ``message``), and exit ``code``."""
    suffix = " (rerun with -v for the traceback)" if kind == "internal error" else ""
    click.echo(f"{kind}: {message}{suffix}", err=True)
    if as_json:
        verdict = "INTERRUPTED" if kind.startswith("interrupted") else kind.upper()
        print_json({"verdict": verdict, "exit_code": code, "message": f"{kind}: {message}"})
    sys.exit(code)


def run(action: Callable[[], Any], verbose: bool, as_json: bool = False) -> Any:
    """Bad input: one line, exit 2. A bug: one line (traceback with -v), exit 1. With ``as_json`` each is also one
    JSON object on stdout (:func:`fail`)."""
    try:
        return action()
    except GrowthError as e:
        fail("error", str(e), e.exit_code, as_json)
    except KeyboardInterrupt as e:
        interrupted(e, as_json)
    except Exception as e:
        if verbose:
            traceback.print_exc()
        fail("internal error", f"{type(e).__name__}: {e}", ExitCode.INTERNAL, as_json)


@main.command(cls=Command, epilog=EPILOG, context_settings=SETTINGS)
@click.argument("src")
@click.option("--out", "-o", required=True, metavar="DIR", help="Folder for the grown checkpoint (assembled beside it, moved in when complete).")
@growth_options
@click.option("--dtype", type=click.Choice(DTYPE_NAMES), default=None, help="Output dtype of floating tensors [default: as the source].")
@click.option("--max-shard-size", default="5GB", show_default=True, metavar="SIZE", help="Largest safetensors shard, e.g. 5GB, 500MB.")
@click.option("--to", default=None, metavar="FORMATS",
              help="The grown checkpoint's formats: hf (safetensors folder), dcp (torch distributed checkpoint), titan (one "
                   "in torchtitan's names, for Llama-3 and Qwen3), or dcp,hf / titan,hf [default: the source's].")
@click.option("--overwrite", is_flag=True, help="Replace a --out that holds a checkpoint.")
@click.option("--no-verify", is_flag=True, help="Skip the verification forward passes.")
@click.option("--adapter", "adapters", multiple=True, metavar="DIR",
              help="A PEFT LoRA adapter of SRC to grow with it, into OUT/adapters/<name> (repeatable).")
@click.option("--dense-out", type=click.Choice(["keep", "grow"]), default="keep", show_default=True,
              help="sentence-transformers folders: Dense modules keep their output dimension (same embeddings) or grow it.")
@click.option("--vision-tower", type=click.Choice(["keep", "grow"]), default="keep", show_default=True,
              help="Vision-language models: keep the vision tower as it is (the projector adapts), or grow it too by --factor.")
@click.option("--multipliers", is_flag=True,
              help="Training checkpoints (Trainer, accelerate): split the optimizer's param groups by learning-rate multiplier "
                   "(hfgrow.optim.trainer_optimizer / param_groups builds the same groups to resume).")
@verify_options("Where tensors grow and the forward passes run: cpu, cuda (every GPU) or cuda:N.")
@click.option("--push-to-hub", default=None, metavar="REPO_ID",
              help="Upload the grown checkpoint (created if needed) when verification passes; the token and write access "
                   "are checked before growing.")
@click.option("--token", default=None, metavar="TOKEN", help="Hub token [default: HF_TOKEN or `hf auth login`'s]; never printed or recorded.")
@click.option("--base-model", default=None, metavar="REPO_ID",
              help="The Hub id of a local SRC, for the model card's base_model [default: SRC's, when it is a Hub id].")
@click.option("--private", is_flag=True, help="Create the Hub repository private.")
@click.option("--push-revision", default=None, metavar="BRANCH", help="Branch to push to [default: main].")
@click.option("--commit-message", default=None, metavar="MSG", help="Commit message of the upload.")
@click.option("--create-pr", is_flag=True, help="Open a pull request instead of committing to the branch.")
@click.option("--force", is_flag=True, help="Push even when verification failed or was skipped.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout (verdict, gaps, sizes, paths, timings), nothing else.")
@output_options
def grow(src: str, out: str, quiet: bool, verbose: bool, no_verify: bool, multipliers: bool, as_json: bool, **kwargs: Any) -> None:
    """Grow the checkpoint SRC (a folder or a Hub id) into --out.

    Widens hidden size, FFN size and the attention (more heads, or wider heads) by --factor or to
    the sizes given, optionally adds blocks (--layers), rewrites the config, writes sharded
    safetensors with the tokenizer, a model card and other files, then reloads both models through
    transformers and reports the gap between their outputs (growth_report.json and .md in --out).

    A training checkpoint (a Trainer's checkpoint-N, an accelerate save_state folder) grows whole:
    the optimizer state with the weights, the scheduler, RNG and trainer state copied, so that
    training resumes from --out on the grown model.
    """
    from .api import grow as grow_checkpoint  # keeps `hfgrow --help` fast
    from .optim import grow_trainer_checkpoint
    from .report import continue_line, json_summary, summary_lines
    from .source import Source
    from .plan import GrowthOptions

    options = GrowthOptions(verify=not no_verify, **kwargs)
    log = (lambda msg: None) if quiet else log_line

    failed_push: list[PushError] = []

    def action() -> dict[str, Any]:
        source = Source.at(src)  # what SRC is, decided once: the growth receives it
        if multipliers and source.training is not None:  # a training checkpoint without --multipliers: grow_checkpoint's
            return grow_trainer_checkpoint(source, out, options=options, multipliers=True, log=log, progress=not quiet)
        if multipliers and source.parts:
            raise GrowthError("--multipliers splits the optimizer's param groups, which a torch distributed checkpoint stores "
                              "pickled and hfgrow copies without loading: grow without it (hfgrow.param_groups builds the groups)")
        if multipliers:
            raise GrowthError(f"--multipliers is for training checkpoints (a Trainer's checkpoint-N, an accelerate save_state "
                              f"folder), and {src} is not one")
        try:
            return grow_checkpoint(source, out, options, log=log, progress=not quiet)
        except PushError as e:
            if e.report is None:
                raise
            failed_push.append(e)  # the checkpoint is written and verified: say so before the upload's error
            return e.report

    report = run(action, verbose, as_json)
    lines = summary_lines(report)
    lines[-1:-1] = [*training_lines(report), continue_line(report)]
    if as_json:  # one object on stdout and nothing else there
        print_json(json_summary(report))
    for line in [] if as_json else lines if not quiet else lines[-1:]:
        click.echo(line)
    if failed_push:
        click.echo(f"error: {failed_push[0]}", err=True)
        click.echo(kept_line(report, options), err=True)
        sys.exit(failed_push[0].exit_code)
    push = report.get("push")
    if push and not push["pushed"]:
        click.echo(f"not pushed to {push['repo_id']}: {push['why']}", err=True)
    v = report["verification"]
    if v is not None and not v["passed"] and not report["plan"]["approximate"]:  # lossy was asked for
        sys.exit(ExitCode.VERIFY_FAILED)
    if push and not push["pushed"]:
        sys.exit(ExitCode.NOT_PUSHED)


def log_line(msg: str) -> None:
    """One log line on stderr, never glued to a progress bar being drawn there: tqdm clears the bar, prints the line
    and draws the bar again below it."""
    from tqdm import tqdm

    tqdm.write(msg, file=sys.stderr)


def kept_line(report: dict[str, Any], options: GrowthOptions) -> str:
    """After a failed upload: where the grown checkpoint is, and the command that uploads it."""
    flags = "".join(f" {flag}" for flag, on in (("--private", options.private), ("--create-pr", options.create_pr)) if on)
    if options.push_revision:
        flags += f" --revision {shlex.quote(options.push_revision)}"
    command = f"hf upload {options.push_to_hub} {shlex.quote(report['output'])}{flags}"
    return (f"the grown checkpoint was kept in {report['output']}: upload it with `{command}` once the network or token "
            f"is fixed (rerunning with --push-to-hub grows it again, with --overwrite)")


def training_lines(report: dict[str, Any]) -> list[str]:
    """What became of a training checkpoint's state (none for a model)."""
    t = report.get("training_state")
    if not t:
        return []
    return [f"{t['format']}: grew {', '.join(t['grown'])}; copied {', '.join(t['copied']) or 'nothing else'}; "
            f"wrote {', '.join(t['written'])}"]


@main.command(cls=Command, context_settings=SETTINGS)
@click.argument("src")
@growth_options
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@output_options
def inspect(src: str, as_json: bool, quiet: bool, verbose: bool, **kwargs: Any) -> None:
    """Show what growing SRC would do: recipe, sizes, tensor groups and their rules, parameters,
    output size and peak memory. Writes nothing."""
    from .api import inspect as inspect_plan
    from .plan import GrowthOptions
    from .report import inspect_lines

    info = run(lambda: inspect_plan(src, GrowthOptions(verify=False, **kwargs)), verbose, as_json)
    lines = inspect_lines(info)
    if as_json:
        return print_json(info)
    click.echo("\n".join(lines[:1] + lines[-len(info["groups"]) - 2:-len(info["groups"]) - 1] if quiet else lines))


@main.command(cls=Command, epilog=VERIFY_EPILOG, context_settings=SETTINGS, moved={"seed": "Verification"})
@click.argument("small")
@click.argument("big")
@verify_options("Where the forward passes run: cpu, cuda (every GPU) or cuda:N.")
@click.option("--seed", default=0, show_default=True, help="Seed for random inputs and masks.")
@click.option("--json", "as_json", is_flag=True, help="Print the verification as JSON.")
@output_options
def verify(small: str, big: str, as_json: bool, quiet: bool, verbose: bool, **kwargs: Any) -> None:
    """Verify that BIG computes the same function as SMALL (two checkpoint folders or Hub ids):
    forward passes of both, logits compared and hidden states against the expansion of SMALL's."""
    from .api import verify as verify_pair
    from .report import verdict_line, verdict_word

    result = run(lambda: verify_pair(small, big, progress=not quiet and not as_json, **kwargs), verbose, as_json)
    if as_json:
        print_json({**result, "verdict": verdict_word(result)})
    elif not quiet:
        click.echo(verdict_line(result))
    click.echo(verdict_word(result)) if not as_json else None
    if not result["passed"]:
        sys.exit(ExitCode.VERIFY_FAILED)


@main.command(context_settings=SETTINGS)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def recipes(as_json: bool) -> None:
    """List the supported architectures and their classes (with --json: the gaps the coverage sweep measured)."""
    from importlib.resources import files

    from .recipes import RECIPES

    coverage = json.loads((files("hfgrow.recipes") / "coverage.json").read_text())
    table = {r.name: {"model_types": list(r.model_types), "classes": list(r.classes),
                      "measured": {t: coverage["measured"][t] for t in r.model_types if t in coverage["measured"]}}
             for r in RECIPES}
    if as_json:
        return print_json(table)
    for line in recipe_lines(table, coverage):
        click.echo(line)


def recipe_lines(table: dict[str, dict[str, Any]], coverage: dict[str, Any]) -> list[str]:
    """`hfgrow recipes` for people: one aligned row per recipe (its model types, then its classes), naming the
    transformers installed and, where it differs, the one the coverage sweep ran on."""
    from importlib.metadata import version

    installed, swept = version("transformers"), coverage["transformers"]
    rows = [(", ".join(e["model_types"]), ", ".join(e["classes"])) for e in table.values()]
    width = min(max(len(types) for types, _ in rows), 28)
    lines = [f"hfgrow {__version__} on transformers {installed}: {sum(len(e['model_types']) for e in table.values())} model "
             f"types supported, in {len(table)} recipes", "", f"{'model type':{width}}  classes"]
    for types, classes in rows:
        lines += [types, f"{'':{width}}  {classes}"] if len(types) > width else [f"{types:{width}}  {classes}"]
    sweep = f"the coverage sweep ran on transformers {swept}" + (f", {installed} is installed" if swept != installed else "")
    lines += ["", f"{len(coverage['not_supported'])} other model types are not supported ({sweep}; `hfgrow recipes --json` "
                  f"has the measured gaps, docs/architectures.md the reasons)"]
    return lines
