"""State-space (Mamba) mixers (docs/design.md §Recurrent mixers), and the Mamba and Falcon-Mamba models built of them.

A Mamba-1 mixer's channels (``mixer``: expand × hidden) are independent of each other from the convolution to the
output projection: ``in_proj`` writes x|z, the depthwise ``conv1d`` and SiLU act on each channel, ``dt_proj``, ``A_log``
and ``D`` are per channel, and the selective scan mixes a channel only with the state it reads through B and C (shared
by every channel, from ``x_proj``). The channels are an activation space: copies carry 1, ``x_proj`` and ``out_proj``
read them back by 1/count; the state size and the time-step rank are kept.

Mamba: pre-RMSNorm blocks of one mixer each, the LM head tied to the embedding by default, no attention.
Falcon-Mamba: Mamba's layout with weightless RMSNorms over dt, B and C (sizes that are kept, under an eps of their own).

Mamba-2: in_proj packs z | x | B | C | dt, the convolution runs over x | B | C, A_log, D and dt_bias are per head (heads of
a head_dim that is kept), head h reads the B and C of its group, and a gated RMSNorm normalises each group of channels.
Channels and heads are copied adjacently (big channel J copies J / k, big head j copies j / k: the head of its
channels, in the same group), n_groups and d_state are kept, so B and C are the small model's; by whole factors only,
as each group of the gated norm must hold every channel of its small group as often.
"""

from hfgrow.policy import WholeMultiplesOnly
from hfgrow.recipe import ConfigFields, Kind, Packed, Recipe, Space, TensorRule, embedding, linear, norm, reads, writes
from .tiny import like

LAYER = "layers.*"
# the mixer's channels, and a size that never grows (a norm over B, C or dt: what its eps must be)
MIXER_SPACES = {"mixer": Space("mixer", Kind.ACTIVATION), "kept": Space("kept", Kind.ACTIVATION)}


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



RECIPE = Recipe(
    name="mamba",
    model_types=("mamba",),
    classes=("MambaModel", "MambaForCausalLM"),
    prefix="backbone",
    norm="rms",
    stacks=(("layers", "num_hidden_layers", None),),
    # no attention (heads=None), no FFN (ffn=None); the mixer's intermediate_size is stored, expand × hidden_size
    config=ConfigFields(hidden="hidden_size", ffn=None, heads=None, eps=("layer_norm_epsilon",), mixer_expand="expand",
                        mixer_size="intermediate_size"),
    spaces={"hidden": Space("hidden", Kind.RESIDUAL), "final": Space("hidden", Kind.TIED_OUTPUT), **MIXER_SPACES},
    outputs={"hidden_states": "hidden", "last_hidden_state": "final"},
    body=(
        *embedding("embeddings", "hidden"),
        *norm(f"{LAYER}.norm", "hidden", bias=False),
        *mamba(f"{LAYER}.mixer", bias=True),
        *norm("norm_f", "final", input="hidden", bias=False),
    ),
    heads=linear("lm_head", None, "final", bias=False),
)
FALCON_MAMBA = RECIPE.extend(name="falcon_mamba", model_types=("falcon_mamba",),
                             classes=("FalconMambaModel", "FalconMambaForCausalLM"))

X_B_C = (writes("mixer"), writes("mixer_state"), writes("mixer_state"))  # what the convolution runs over
MIXER2_SPACES = {**MIXER_SPACES, "mixer_heads": Space("mixer_heads", Kind.ACTIVATION),
                 "mixer_state": Space("mixer_state", Kind.ACTIVATION)}
WHOLE_GROUPS = WholeMultiplesOnly("the gated RMSNorm over each group of the mixer's channels needs every channel copied as "
                                  "often (docs/design.md §Recurrent mixers)")


def mamba2(module: str, out_bias: bool = True) -> tuple[TensorRule, ...]:
    """A Mamba-2 mixer under ``module`` (the table every Mamba-2 hybrid shares): in_proj writes z | x | B | C | dt, the
    convolution runs over x | B | C, dt_bias, A_log and D are per head, a gated RMSNorm over groups of the channels,
    out_proj reads the channels back."""
    parts = Packed((writes("mixer"), *X_B_C, writes("mixer_heads")))
    return (
        TensorRule(f"{module}.in_proj.weight", (parts, reads("hidden"))),
        TensorRule(f"{module}.in_proj.bias", (parts,)),
        TensorRule(f"{module}.conv1d.weight", (Packed(X_B_C), None, None)),
        TensorRule(f"{module}.conv1d.bias", (Packed(X_B_C),)),
        *(TensorRule(f"{module}.{name}", (writes("mixer_heads"),)) for name in ("dt_bias", "A_log", "D")),
        *norm(f"{module}.norm", "mixer", bias=False),  # the gated RMSNorm over groups of channels
        *linear(f"{module}.out_proj", "hidden", "mixer", bias=out_bias),
    )


MAMBA2 = RECIPE.extend(
    name="mamba2", model_types=("mamba2",), classes=("Mamba2Model", "Mamba2ForCausalLM"),
    config=ConfigFields(hidden="hidden_size", ffn=None, heads=None, eps=("layer_norm_epsilon",), mixer_expand="expand",
                        mixer_heads="num_heads", mixer_state=("n_groups", "state_size")),
    spaces={**RECIPE.spaces, **MIXER2_SPACES},
    body=mamba2(f"{LAYER}.mixer"),
    constraints=(WHOLE_GROUPS,),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# the LM head tied to the embedding (Mamba's default)
TINY["mamba"] = {"vocab_size": 97, "hidden_size": 16, "num_hidden_layers": 2, "state_size": 5, "conv_kernel": 3,
                 "expand": 2, "time_step_rank": 3, "layer_norm_epsilon": 0.05, "use_bias": True, "use_conv_bias": True,
                 "use_mambapy": False, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
TINY["falcon_mamba"] = like(TINY["mamba"], mixer_rms_eps=0.05, tie_word_embeddings=False)
# two groups of two heads; chunks shorter than the inputs
TINY["mamba2"] = like(TINY["mamba"], "time_step_rank", "use_mambapy", num_heads=4, head_dim=8, n_groups=2, chunk_size=4)
