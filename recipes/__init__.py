"""One small declarative recipe per architecture family (installed as ``hfgrow.recipes``).

To add a family, write a module here that declares all hfgrow knows of it: its recipes (named publicly, or FAMILY), refusals (REFUSED),
verification inputs (FEEDS) and tiny test configurations (TINY), collected at the end of this file (see
``cosmos3_omni.py`` and docs/adding-a-recipe.md); nothing to list here.
"""
from . import encoder_refused, multimodal_refused, vision_refused

# families (model types) and classes hfgrow knows and refuses, with the reason
REFUSED = {
    "marian": "Marian's sinusoidal positions are never stored: transformers computes them from the width on load, and "
              "the sinusoid of a wider model is not a copy of the small one's (no growth can be exact)",
    # the mixtures of experts of the coverage sweep that are not grown (issue 24): layouts the spaces of one width per
    # dimension cannot declare
    "hy_v4": "HY-V4's hyper-connections keep hc_mult residual streams and mix them with weights read from all streams "
             "at once: a residual stream with a stream axis, which no recipe space describes",
    # text decoders of issue 32 not grown yet: the work each needs named ("not done yet")
    "hy_v4_vl_text": "not done yet: HY-V4-VL's text model is HY-V4's, whose hyper-connections keep hc_mult residual streams "
                     "mixed by weights read from all of them at once (a residual stream with a stream axis, which no recipe "
                     "space describes)",
    "qwen4_exp_text": "not done yet: Qwen4-Exp's hyper-connections keep hc_count residual streams mixed by a low-rank gate read "
                      "from all of them at once (a residual stream with a stream axis, which no recipe space describes), "
                      "beside gated delta nets, a sparse-attention indexer and hashed n-gram per-layer embeddings",
    "inkling_text": "not done yet: Inkling's sliding-window layers take heads, KV heads and head_dim of their own (swa_*), keys "
                    "and values pass short convolutions, each head adds a relative-position bias from its own projection "
                    "(r_proj, d_rel), scores are scaled by 1/head_dim after per-head q/k norms, and shared experts are "
                    "scored by the router beside the routed ones: a layout no recipe declares",
    "inkling2_text": "not done yet: Inkling's layout (sliding-window heads of their own, short convolutions, per-head relative "
                     "biases) with q/k clipped to a fixed L2 norm per head (head_dim growth would change which heads clip) "
                     "and attention residuals (each block reads a softmax mix of earlier blocks' outputs, scored by a learned "
                     "query over the whole hidden width): a layout no recipe declares",
    "inkling2_loop_text": "not done yet: Inkling 2's layout (see inkling2_text) with a span of blocks run loop_num_passes "
                          "times, message gates of rank loop_gate_rank mixing the previous pass's residual blocks: a layout no "
                          "recipe declares",
    "glm5_next_text": "GLM-5-Next's hyper-connections keep hc_mult residual streams mixed by weights read from all of them "
                      "(a residual stream with a stream axis), beside recurrent linear-attention layers",
    "dots3_note_text": "Dots3-Note's sliding-window layers take attention shapes of their own from per_layer_config (heads, "
                       "latent ranks and head sizes keyed by block number), and its latent attention multiplies the "
                       "normalised latents by √(hidden_size / rank), a constant the hidden size changes",
    "mimo_v2_flash": "MiMo-V2-Flash's sliding-window layers have twice the KV heads of its full-attention layers: query "
                     "heads grouped per layer type, which one KV-head width per model cannot declare",
    "ernie4_5_vl_moe_text": "ERNIE 4.5 VL's text model keeps two expert widths in one list (moe_intermediate_size = [text, "
                            "vision]) and a pre-rotated 3-D rotary layout whose sections follow head_dim",
    "neomme": "NeoMME's heads read hidden units themselves: the masked-LM head through the tied embedding projection "
              "after a weightless norm (each unit's copies would be summed, with no norm weight to carry 1/k), the "
              "retrieval head by a prefix of the hidden vector (dense_dim)",
    "muse_glimmer_assistant": "Muse Glimmer's assistant is a drafter with no embedding of its own: its inputs (noise_embeds, and "
                              "context_hidden_states at the target model's target_layer_ids) live in another model's hidden "
                              "space and follow its blocks, so it can only grow with that model, by the same expansion",
    "gemma4_vision": "its pooler multiplies its output, the residual stream itself, by √hidden_size: a wider encoder would have "
                     "to carry 1/√k in the stream, which its pre-norms absorb only with eps/k while the q/k/v and post norms "
                     "sharing rms_norm_eps need eps as it is (one eps, two scales)",
    "voxtral_realtime_text": "every block scales its MLP input by a projection of t_cond, a time embedding of the hidden width that "
                             "VoxtralRealtime computes outside the text model as a sinusoid of hidden_size: the wider sinusoid is "
                             "no copy of the small one, so the grown text model is not exact where it runs",
    "t5_gemma_module": "the encoder or decoder sub-config of a T5Gemma model (t5gemma): no model class is a checkpoint of this "
                       "type alone, and T5Gemma itself is not supported yet",
    "t5gemma2_text": "the text encoder sub-config of a T5Gemma 2 model (t5gemma2): its class (T5Gemma2TextEncoder) is not "
                     "exported by transformers, and T5Gemma 2 itself is not supported yet",
    "t5gemma2_decoder": "the decoder sub-config of a T5Gemma 2 model (t5gemma2): its class (T5Gemma2Decoder) is not exported by "
                        "transformers and reads the encoder's outputs, and T5Gemma 2 itself is not supported yet",
    "phi4_multimodal": "Phi-4-multimodal's image and audio embedders live inside its text model's embedding module, with the "
                       "text sizes the config's own (no text sub-config): not a text model beside towers",
    # text decoders (issue 32: transformers 5.24 gave them tensor-parallel plans, so the sweep lists them)
    "codegen": "not done yet: CodeGen fuses q, v and k in one qkv_proj laid out over mp_num = 4 model-parallel shards "
               "(hard-coded: [q | v | k] per shard of heads/4 heads), a packing over a fixed shard count no recipe space "
               "declares yet; the rest is GPT-J's layout (recipes/gptj.py)",
    "diffllama": "differential attention pairs query head h with head h + heads/2 (values and outputs are split in halves "
                 "over the head axis), so whole-head copies must keep the pairs, a head order no recipe space declares; "
                 "its λ is a dot product of vectors over head_dim and λ_init follows each block's index (not done yet)",
    "minimax": "not done yet: lightning-attention blocks (linear attention whose per-head decays transformers derives from "
               "num_attention_heads and each block's index over num_hidden_layers and stores as buffers, an RMSNorm over "
               "the whole attention width, a sigmoid output gate) beside softmax-attention blocks and Mixtral's experts",
    "dory": "Dory (nGPT) keeps every hidden state on the unit sphere: weightless L2 norms (x/‖x‖, not RMS) on the stream, "
            "q, k and each branch's output, which the copy convention changes by √k, and scales of √head_dim, "
            "hidden^¼ and √hidden in its learned sqk, s_gate and suv gains; exact growth needs an isometric expansion "
            "(not done yet)",
    # speech (issue 32): the real obstacle where one is known; "not done yet" where the layout is growable but unwritten
    "speech_to_text": "Speech2Text's sinusoidal positions are never stored: transformers computes them from the width on load, and the sinusoid of a wider model is not a copy of the small one's (no growth can be exact)",
    "speecht5": "SpeechT5's sinusoidal positions are never stored: transformers computes them from the width on load, and the sinusoid of a wider model is not a copy of the small one's (no growth can be exact) (its text decoder's and its scaled speech encodings alike)",
    "seamless_m4t": "SeamlessM4T's sinusoidal positions are never stored: transformers computes them from the width on load, and the sinusoid of a wider model is not a copy of the small one's (no growth can be exact)",
    "seamless_m4t_v2": "SeamlessM4T v2's sinusoidal positions are never stored: transformers computes them from the width on load, and the sinusoid of a wider model is not a copy of the small one's (no growth can be exact)",
    "canary": "Canary's decoder adds a sinusoid of hidden_size computed on load (never stored) to its token embeddings "
              "before its first LayerNorm, not through a projection that could read the small one's frequencies: the "
              "wider sinusoid is not a copy of the small one's; and its cross attention reads the Parakeet encoder at "
              "the decoder's width, so the encoder cannot grow with the decoder kept (as Cohere ASR's does)",
    "pop2piano": "Pop2Piano's encoder reads the feature extractor's frames directly as its input embeddings, d_model "
                 "wide: a wider model reads other inputs, so no growth computes the same function of the same audio",
    "moonshine_streaming": "not done yet: Moonshine Streaming's encoder (encoder_config: a width of its own, sliding-window "
                           "attention, an embedder of frame CMVN, asinh compression and causal convolutions) and its decoder "
                           "(the top-level sizes) are two widths, which one recipe plans only with the decoder kept (as Cohere "
                           "ASR's), and the decoder's proj from the encoder's width is an identity, stored nowhere, where the "
                           "two widths are equal: growing the encoder alone would need that layer written",
    "dia": "not done yet: Dia's encoder-decoder over text bytes and several audio codebook channels, a layout no recipe describes",
    "vibevoice": "not done yet: VibeVoice joins acoustic and semantic tokenizer encoders and a diffusion head to a Qwen2 "
                 "text model, none of which a recipe describes",
    "speech-encoder-decoder": "a composite of any speech encoder and any text decoder (two sub-configs): no recipe joins "
                              "the two yet",
    **vision_refused.REFUSED,
    **encoder_refused.REFUSED,
    **multimodal_refused.REFUSED,
}


def _modules() -> list:
    """Every module of this package, imported, in the order of their names."""
    import importlib
    import pkgutil

    return [importlib.import_module(f"{__name__}.{info.name}")
            for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name)]


def _declared(name: str) -> dict:
    """What the modules of this package declare under ``name`` (a dict keyed by model type), merged in module order."""
    merged: dict = {}
    for module in _modules():
        merged.update(getattr(module, name, {}))
    return merged


def _recipes_of(module) -> list:
    """A module's recipes: its FAMILY where it declares one, else every recipe it names publicly, alone or in a tuple
    (its RECIPES), in the order it names them."""
    from hfgrow.recipe import Recipe

    if hasattr(module, "FAMILY"):
        return list(module.FAMILY)
    named = (value for name, value in vars(module).items() if not name.startswith("_"))
    return [recipe for value in named for recipe in (value if isinstance(value, tuple) else (value,))
            if isinstance(recipe, Recipe)]


def _discovered() -> tuple:
    """Every module's recipes (see _recipes_of), each once, modules in the order of their names, and in a module those
    named after a model type of theirs first: where a model type has several recipes, the first is its default
    (hfgrow.plan.find_recipe: CLIP's towers joined, before its vision tower under a classifier)."""
    found: dict = {}
    for module in _modules():
        for recipe in sorted(_recipes_of(module), key=lambda recipe: recipe.name not in recipe.model_types):
            found.setdefault(id(recipe), recipe)
    return tuple(found.values())


# what each family's module declares about itself, collected here (a new family is its module alone, no line above):
# its recipes (FAMILY, else every recipe it names publicly); REFUSED, the model types it knows and refuses, with the reason; TINY, its model types' tiny test
# configurations (hfgrow.testing builds them); FEEDS, how verification feeds them beyond what their classes' forward
# names (hfgrow.signals reads it)
RECIPES = _discovered()
REFUSED = {**REFUSED, **_declared("REFUSED")}
TINY = _declared("TINY")
FEEDS = _declared("FEEDS")
