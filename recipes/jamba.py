"""State-space (Mamba) mixers and the hybrids built on them (docs/design.md §Recurrent mixers).

A Mamba-1 mixer's channels (``mixer``: expand × hidden) are independent of each other from the convolution to the
output projection: ``in_proj`` writes x|z, the depthwise ``conv1d`` and SiLU act on each channel, ``dt_proj``, ``A_log``
and ``D`` are per channel, and the selective scan mixes a channel only with the state it reads through B and C (shared
by every channel, from ``x_proj``). The channels are an activation space: copies carry 1, ``x_proj`` and ``out_proj``
read them back by 1/count; the state size and the time-step rank are kept.

Jamba: Llama-style attention blocks and Mamba-1 blocks (``attn_layer_period``/``attn_layer_offset``), dense gated MLPs
or Mixtral-style experts of the intermediate size (``expert_layer_period``/``expert_layer_offset``), RMSNorms over dt, B
and C (sizes that are kept, sharing ``rms_norm_eps`` with the hidden norms).
"""

from hfgrow.policy import DepthRequires
from hfgrow.recipe import ConfigFields, Kind, Packed, Space, TensorRule, block_spaces, linear, reads, writes

from .llama import LAYER, RECIPE as LLAMA
from .mixtral import experts

MIXER = f"{LAYER}.mamba"
# a block's kind is i % period == offset: a new block (of its original's kind) would shift the kinds after it, and the
# tensors would no longer be the ones the grown config builds
PERIODIC = ("the blocks' kinds are periodic in their index (attention where i % attn_layer_period == attn_layer_offset, "
            "experts where i % expert_layer_period == expert_layer_offset): a new block would shift the kinds of those after it")


def mamba(module: str, bias: bool) -> tuple[TensorRule, ...]:
    """A Mamba-1 mixer under ``module``: its channels are the ``mixer`` space; ``bias``: in_proj and out_proj have one."""
    return (
        TensorRule(f"{module}.in_proj.weight", (Packed((writes("mixer"), writes("mixer"))), reads("hidden"))),  # x | z
        TensorRule(f"{module}.in_proj.bias", (Packed((writes("mixer"), writes("mixer"))),)),
        TensorRule(f"{module}.conv1d.weight", (writes("mixer"), None, None)),  # depthwise: [channels, 1, kernel]
        TensorRule(f"{module}.conv1d.bias", (writes("mixer"),)),
        *linear(f"{module}.x_proj", None, "mixer", bias=False),  # → dt_rank + 2·d_state, kept
        *linear(f"{module}.dt_proj", "mixer", None),  # dt_rank → channels
        TensorRule(f"{module}.A_log", (writes("mixer"), None)),  # [channels, d_state]
        TensorRule(f"{module}.D", (writes("mixer"),)),
        *linear(f"{module}.out_proj", "hidden", "mixer", bias=bias),
    )


RECIPE = LLAMA.extend(
    name="jamba",
    model_types=("jamba",),
    classes=("JambaModel", "JambaForCausalLM", "JambaForSequenceClassification"),
    prefix="model",
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads",
                        kv_heads="num_key_value_heads", eps=("rms_norm_eps",), mixer_expand="mamba_expand"),
    # attention without positions (no rotary): head_dim grows as plain copies
    spaces={**block_spaces(grouped=True), "final": LLAMA.spaces["final"], "mixer": Space("mixer", Kind.ACTIVATION), "kept": Space("kept", Kind.ACTIVATION)},
    body=(
        *(r for r in LLAMA.body if ".mlp." not in r.pattern and r.pattern.split(".")[0] != "norm"),
        TensorRule(f"{LAYER}.pre_ff_layernorm.weight", (writes("hidden"),), norm_input="hidden"),
        TensorRule("final_layernorm.weight", (writes("final"),), norm_input="hidden"),
        *mamba(MIXER, bias=True),
        # RMSNorms over dt (dt_rank) and B, C (d_state): sizes that are kept, with the hidden norms' eps
        *(TensorRule(f"{MIXER}.{n}_layernorm.weight", (None,), norm_input="kept") for n in ("dt", "b", "c")),
        *(TensorRule(r.pattern.replace(".mlp.", ".feed_forward."), r.axes) for r in LLAMA.body if ".mlp." in r.pattern),
        *(TensorRule(r.pattern.replace(".mlp.", ".feed_forward."), r.axes, split=r.split)
          for r in experts("ffn") if ".gate." not in r.pattern),
        *linear(f"{LAYER}.feed_forward.router", None, "hidden", bias=False, split=False),
    ),
    constraints=(DepthRequires("attn_layer_period", 1, PERIODIC, lossy_fallback=False),
                 DepthRequires("expert_layer_period", 1, PERIODIC, lossy_fallback=False)),
)
