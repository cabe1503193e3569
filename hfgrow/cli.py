"""The command line: a thin layer over :func:`hfgrow.grow` and :class:`hfgrow.GrowthOptions`."""

from __future__ import annotations

import sys
import traceback

import click

from . import __version__
from .errors import ExitCode, GrowthError
from .plan import DTYPES, GrowthOptions

EPILOG = """\b
Exit codes: 0 success, 2 bad input (nothing written), 3 verification failed
(checkpoint and report written), 1 internal error.

\b
Example:
  hfgrow ./my-bert --factor 2 --out ./big
  hfgrow ./my-llama --hidden-size 3072 --intermediate-size 8192 --layers 32 --out ./big
"""


class OneLineErrors(click.Command):
    """Usage errors as one ``error: ...`` line (exit 2), like every other bad input."""

    def main(self, *args, standalone_mode: bool = True, **kwargs):
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as e:
            click.echo(f"error: {e.format_message()}", err=True)
            sys.exit(e.exit_code)
        except click.exceptions.Abort:
            click.echo("interrupted: nothing was written", err=True)
            sys.exit(130)
        if standalone_mode:
            sys.exit(code or 0)
        return code


@click.command(cls=OneLineErrors, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("src")
@click.option("--out", "-o", required=True, help="Folder for the grown checkpoint (assembled beside it, moved in when complete).")
@click.option("--factor", "-k", default=None, help="Integer factor >= 2 for every width: hidden, FFN, and heads or head_dim [default: 2 when no size is given].")
@click.option("--attention", type=click.Choice(["heads", "head-dim"]), default="heads", show_default=True,
              help="Grow the number of heads (and KV heads), keeping head_dim, RoPE and the score scale; or grow head_dim.")
@click.option("--hidden-size", type=int, default=None, help="Target hidden size (need not be a multiple; post-norm models: multiples only).")
@click.option("--intermediate-size", type=int, default=None, help="Target FFN size (any).")
@click.option("--num-heads", type=int, default=None, help="Target number of attention heads.")
@click.option("--head-dim", type=int, default=None, help="Target head_dim (rotary models: whole multiples).")
@click.option("--layers", type=int, default=None, help="Target number of blocks per stack; new blocks are exactly the identity (pre-norm models).")
@click.option("--insert-at", default=None, help="Original blocks after which the new blocks go, e.g. 1,3 [default: spread evenly].")
@click.option("--symmetry", type=click.Choice(["split", "noise", "none"]), default="split", show_default=True,
              help="Break the symmetry of copies so they can diverge in training: uneven splits, cancelling noise, or plain copies.")
@click.option("--convention", type=click.Choice(["copy", "orthogonal"]), default="copy", show_default=True,
              help="copy: plain copies, norms and eps unchanged. orthogonal: the seed's 1/sqrt(k) copies, eps scaled.")
@click.option("--allow-lossy", is_flag=True, help="Grow even where exactness is impossible (e.g. YaRN rope under head_dim growth); the report states the gap.")
@click.option("--dtype", type=click.Choice(sorted(DTYPES)), default=None, help="Output dtype of floating tensors [default: as the source].")
@click.option("--max-shard-size", default="5GB", show_default=True, help="Largest safetensors shard, e.g. 5GB, 500MB.")
@click.option("--overwrite", is_flag=True, help="Replace a non-empty --out.")
@click.option("--no-verify", is_flag=True, help="Skip the verification forward passes.")
@click.option("--device", default="cpu", show_default=True, help="Device for verification: cpu or cuda.")
@click.option("--tolerance", default=1e-4, show_default=True, type=float, help="Largest fp32 relative logit gap that passes.")
@click.option("--text-file", type=click.Path(dir_okay=False), default=None, help="Sentences (one a line) to verify on.")
@click.option("--seed", default=0, show_default=True, help="Seed for random inputs and masks.")
@click.option("--quiet", "-q", is_flag=True, help="Print only errors and the verdict.")
@click.option("--verbose", "-v", is_flag=True, help="Show tracebacks of internal errors.")
@click.version_option(__version__, prog_name="hfgrow")
def main(src, out, factor, attention, hidden_size, intermediate_size, num_heads, head_dim, layers, insert_at, symmetry,
         convention, allow_lossy, dtype, max_shard_size, overwrite, no_verify, device, tolerance, text_file, seed, quiet, verbose):
    """Grow the checkpoint in SRC into a wider model that computes the same function.

    Widens hidden size, FFN size and the attention (more heads, or wider heads) by --factor or to
    the sizes given, optionally adds blocks (--layers), rewrites the config, writes sharded
    safetensors with the tokenizer and other files, then reloads both models through transformers
    and reports the gap between their outputs (growth_report.json and growth_report.md in --out).
    """
    from .grow import grow  # keeps `hfgrow --help` fast
    from .report import summary_lines

    options = GrowthOptions(factor=factor, attention=attention, hidden_size=hidden_size, intermediate_size=intermediate_size,
                            num_heads=num_heads, head_dim=head_dim, layers=layers, insert_at=insert_at, symmetry=symmetry,
                            convention=convention, allow_lossy=allow_lossy, dtype=dtype, max_shard_size=max_shard_size,
                            overwrite=overwrite, verify=not no_verify, device=device, tolerance=tolerance,
                            text_file=text_file, seed=seed)
    log = (lambda msg: None) if quiet else (lambda msg: click.echo(msg, err=True))
    try:
        report = grow(src, out, options, log=log)
    except GrowthError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted: nothing was written", err=True)
        sys.exit(130)
    except Exception as e:  # a bug: one line unless -v, never a half-written checkpoint (grow cleans up)
        if verbose:
            traceback.print_exc()
        click.echo(f"internal error: {type(e).__name__}: {e} (rerun with -v for the traceback)", err=True)
        sys.exit(ExitCode.INTERNAL)
    lines = summary_lines(report)
    for line in lines if not quiet else lines[-1:]:
        click.echo(line)
    v = report["verification"]
    if v is not None and not v["passed"] and not report["plan"]["approximate"]:  # lossy was asked for
        sys.exit(ExitCode.VERIFY_FAILED)
