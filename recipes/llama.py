"""LLaMA-style decoders (Llama, Mistral, Qwen2, Qwen3): pre-RMSNorm, rotary (rotate-half), GQA, gated SiLU FFN.

Optional biases (Qwen2's q/k/v, Llama's attention_bias and mlp_bias) are covered by the bias rules.

Qwen3 adds an RMSNorm over each head's dims on queries and keys, before the rotation, sharing
``rms_norm_eps`` with the hidden norms. Heads growth leaves it as it is. Under head_dim growth the
queries carry √(head_dim'/head_dim) in their aligned rotary slots and zeros elsewhere, so their mean
square over head_dim' is the small one's: the normalised query keeps that factor, which is the score
correction, and keys are plain copies; the norm weights are copied along the head layout and eps stays.
"""

import dataclasses

from hfgrow.policy import HeadDimFixed, NormsWithoutWeights, RotaryHeadDim, WeightlessNorms
from hfgrow.algebra import held_at
from hfgrow.recipe import ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, drop, embedding, keep, linear, norm, reads, writes
from . import tiny
from .tiny import like

LAYER = "layers.*"
HEADS = ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")

RECIPE = Recipe(
    name="llama",
    model_types=("llama",),
    classes=tuple(f"Llama{h}" for h in HEADS),
    prefix=("model", "transformer"),  # ForQuestionAnswering keeps the base model under `transformer`
    constraints=(RotaryHeadDim(),),
    norm="rms",
    stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads",
                        kv_heads="num_key_value_heads", head_dim="head_dim", eps=("rms_norm_eps",)),
    spaces={
        **block_spaces(rope="half", grouped=True),  # the FFN space feeds SiLU (gate) and the product (up)
        "final": Space("hidden", Kind.TIED_OUTPUT),  # the final norm → LM head, tied or not
    },
    outputs={"hidden_states": "hidden", "last_hidden_state": "final"},
    body=(
        *embedding("embed_tokens", "hidden"),
        *norm(f"{LAYER}.input_layernorm", "hidden", bias=False),
        *linear(f"{LAYER}.self_attn.q_proj", "q", "hidden"),
        *linear(f"{LAYER}.self_attn.k_proj", "k", "hidden"),
        *linear(f"{LAYER}.self_attn.v_proj", "v", "hidden"),
        *linear(f"{LAYER}.self_attn.o_proj", "hidden", "o"),
        *drop(f"{LAYER}.self_attn.rotary_emb.inv_freq"),  # saved by old transformers; sized by head_dim, rebuilt
        *norm(f"{LAYER}.post_attention_layernorm", "hidden", bias=False),
        *linear(f"{LAYER}.mlp.gate_proj", "ffn", "hidden"),
        *linear(f"{LAYER}.mlp.up_proj", "ffn", "hidden"),
        *linear(f"{LAYER}.mlp.down_proj", "hidden", "ffn"),
        *norm("norm", "final", input="hidden", bias=False),
    ),
    heads=(
        *linear("lm_head", None, "final", bias=False),
        *linear("score", None, "final"),
        *linear("qa_outputs", None, "final"),
    ),
)


def sinks(names: str = "sinks") -> tuple[TensorRule, ...]:
    """Attention sinks: one learned logit per query head beside the softmax's scores (space ``per_head``, see PER_HEAD):
    copied with its head, whose scores are the small head's."""
    return (TensorRule(f"{LAYER}.self_attn.({names})", (writes("per_head"),)),)


PER_HEAD = {"per_head": Space("heads", Kind.ACTIVATION)}  # a value per query head, as the heads are copied

MISTRAL = RECIPE.extend(name="mistral", model_types=("mistral",), classes=tuple(f"Mistral{h}" for h in HEADS))
QWEN2 = RECIPE.extend(name="qwen2", model_types=("qwen2",), classes=tuple(f"Qwen2{h}" for h in HEADS))
SMOLLM3 = RECIPE.extend(name="smollm3", model_types=("smollm3",), classes=tuple(f"SmolLM3{h}" for h in HEADS))  # NoPE layers
QWEN3 = RECIPE.extend(
    name="qwen3", model_types=("qwen3",), classes=tuple(f"Qwen3{h}" for h in HEADS),
    spaces={**RECIPE.spaces, "head": Space("head_dim", Kind.ACTIVATION, rope="half")},  # one head's dims, as q and k lay them out
    body=(*norm(f"{LAYER}.self_attn.q_norm", "head", bias=False), *norm(f"{LAYER}.self_attn.k_norm", "head", bias=False)),
)

# Qwen3-Omni's code predictor: Qwen3's blocks over input embeddings of the hidden width alone (token ids refused by its
# forward), one codec embedding and one LM head per code group but the first, the head picked by the sequence's length
QWEN3_OMNI_MOE_TALKER_CODE_PREDICTOR = QWEN3.extend(
    name="qwen3_omni_moe_talker_code_predictor", model_types=("qwen3_omni_moe_talker_code_predictor",),
    classes=("Qwen3OmniMoeTalkerCodePredictorModel", "Qwen3OmniMoeTalkerCodePredictorModelForConditionalGeneration"),
    embeds_input="hidden", body=embedding("codec_embedding.*", "hidden"), heads=linear("lm_head.*", None, "final", bias=False),
)

# Families with Llama's layout and semantics, each measured exact in every class (tests/test_families.py) rather
# than assumed: the differences they have (ReLU² MLP without a gate, sliding-window layers, YaRN by default, an
# encoder's bidirectional attention) change no tensor's growth.
ARCEE = RECIPE.extend(name="arcee", model_types=("arcee",), classes=tuple(f"Arcee{h}" for h in HEADS))  # up/down MLP, no gate
CWM = RECIPE.extend(name="cwm", model_types=("cwm",), classes=("CwmModel", "CwmForCausalLM"))  # sliding-window layers
MINISTRAL = RECIPE.extend(name="ministral", model_types=("ministral",), classes=tuple(f"Ministral{h}" for h in HEADS))
MINISTRAL3 = RECIPE.extend(name="ministral3", model_types=("ministral3",), classes=tuple(f"Ministral3{h}" for h in HEADS))
EUROBERT = RECIPE.extend(  # an encoder: pooled (mean, first or last token) → dense → act → classifier
    name="eurobert", model_types=("eurobert",),
    classes=("EuroBertModel", "EuroBertForMaskedLM", "EuroBertForSequenceClassification", "EuroBertForTokenClassification"),
    spaces={**RECIPE.spaces, "pooled": Space("hidden", Kind.ACTIVATION)},
    heads=(*linear("dense", "pooled", "final"), *linear("classifier", None, "pooled")),
    class_heads={"EuroBertForTokenClassification": linear("classifier", None, "final")},
)
# rotary on interleaved pairs (2i, 2i + 1), as RoFormer's: measured, under head_dim growth the half layout fails
INTERLEAVED = {**RECIPE.spaces, **block_spaces(rope="interleaved", grouped=True)}
ERNIE4_5 = RECIPE.extend(name="ernie4_5", model_types=("ernie4_5",), classes=("Ernie4_5Model", "Ernie4_5ForCausalLM"), spaces=INTERLEAVED)
HELIUM = RECIPE.extend(name="helium", model_types=("helium",), classes=tuple(f"Helium{h}" for h in HEADS[:4]), spaces=INTERLEAVED)
APERTUS = QWEN3.extend(  # Qwen3's attention; pre-norms under other names; an up/down MLP through xIELU, whose
    # learned scalars (and constant buffers) are elementwise, whatever the width
    name="apertus", model_types=("apertus",), classes=("ApertusModel", "ApertusForCausalLM", "ApertusForTokenClassification"),
    body=(*norm(f"{LAYER}.attention_layernorm", "hidden", bias=False), *norm(f"{LAYER}.feedforward_layernorm", "hidden", bias=False),
          *keep(f"{LAYER}.mlp.act_fn.alpha_(p|n)"), *keep(f"{LAYER}.mlp.act_fn.(beta|eps)", ndim=0)),
)
# Apertus 1.5's text model: Apertus's blocks over a vocabulary extended by visual and audio codes; its LM head may be pruned
# to the text prefix of that vocabulary (output_vocab_size rows), which no growth touches
APERTUS1P5_TEXT = APERTUS.extend(name="apertus1p5_text", model_types=("apertus1p5_text",),
                                 classes=("Apertus1p5TextModel", "Apertus1p5TextForCausalLM"))
# Qwen2-VL's and Qwen2.5-VL's text models: Qwen2's blocks with multimodal rotary sections (mrope_section, scaled with
# head_dim); base models only
QWEN2_VL_TEXT = RECIPE.extend(name="qwen2_vl_text", model_types=("qwen2_vl_text",), classes=("Qwen2VLTextModel",))
QWEN2_5_VL_TEXT = RECIPE.extend(name="qwen2_5_vl_text", model_types=("qwen2_5_vl_text",), classes=("Qwen2_5_VLTextModel",))
# Qwen3-VL's text model: Qwen3's blocks with multimodal rotary sections that its code interleaves whatever the config says
# (head_dim growth only ×4, ×7, ...); Emu3's: Llama's blocks (its images enter as VQ-VAE codes, tokens of the vocabulary)
QWEN3_VL_TEXT = QWEN3.extend(name="qwen3_vl_text", model_types=("qwen3_vl_text",), classes=("Qwen3VLTextModel",),
                             constraints=(RotaryHeadDim(interleaved=True),))
EMU3_TEXT = RECIPE.extend(name="emu3_text_model", model_types=("emu3_text_model",), classes=("Emu3TextModel", "Emu3ForCausalLM"))
# Hunyuan (v1, dense): per-head q/k norms after the rotation (query_layernorm / key_layernorm), sharing rms_norm_eps; its
# released rotary ("dynamic" with a fixed alpha, NTK by alpha^(d/(d-2))) depends on head_dim: heads growth there. HunYuan-VL's
# text model: the same blocks with multimodal sections in contiguous chunks (2·section dims each, over the whole head)
HUNYUAN_V1_DENSE = QWEN3.extend(
    name="hunyuan_v1_dense", model_types=("hunyuan_v1_dense",),
    classes=("HunYuanDenseV1Model", "HunYuanDenseV1ForCausalLM", "HunYuanDenseV1ForSequenceClassification"),
    body=(*norm(f"{LAYER}.self_attn.query_layernorm", "head", bias=False), *norm(f"{LAYER}.self_attn.key_layernorm", "head", bias=False)),
)
HUNYUAN_VL_TEXT = HUNYUAN_V1_DENSE.extend(
    name="hunyuan_vl_text", model_types=("hunyuan_vl_text",), classes=("HunYuanVLTextModel",),
    constraints=(HeadDimFixed("its q/k norms after a rotation whose pairs (j, j + head_dim/2) may turn by two position streams "
                              "(mrope_section's chunks span the whole head): no rotation, so the key copies in a longer head "
                              "change the keys' mean square on image positions"), *RECIPE.constraints),
)
# the same under other names: Qwen2.5-Omni's thinker text model and PaddleOCR-VL's (ERNIE 4.5's layout with Qwen2-VL's
# rotate-half multimodal sections; optional biases on every attention projection, o_proj's included)
QWEN2_5_OMNI_TEXT = RECIPE.extend(name="qwen2_5_omni_text", model_types=("qwen2_5_omni_text",), classes=("Qwen2_5OmniThinkerTextModel",))
PADDLEOCR_VL_TEXT = RECIPE.extend(name="paddleocr_vl_text", model_types=("paddleocr_vl_text",), classes=("PaddleOCRTextModel",))
# configurations of their own that transformers runs with Llama's classes (auto-mapped to LlamaModel / LlamaForCausalLM)
INTERNLM3 = RECIPE.extend(name="internlm3", model_types=("internlm3",), classes=("LlamaModel", "LlamaForCausalLM"))
IQUESTCODER = RECIPE.extend(name="iquestcoder", model_types=("iquestcoder",), classes=("LlamaModel", "LlamaForCausalLM"))
# EXAONE 3: Llama's blocks, run with Llama's classes, stored in its own names (transformers renames them on load and back
# on save): wte, h.*.attn.attention.{q,k,v,out}_proj, ln_1 / ln_2, mlp.c_fc_0 (gate) / c_fc_1 (up) / c_proj, ln_f; the base
# model alone keeps embed_tokens, layers and norm
EXAONE_BLOCK = "(h|layers).*"
EXAONE = RECIPE.extend(
    name="exaone", model_types=("exaone",), classes=("LlamaModel", "LlamaForCausalLM"),
    stacks=(("h", "num_hidden_layers", None), ("layers", "num_hidden_layers", None)),
    body=(*embedding("wte", "hidden"), *norm("ln_f", "final", input="hidden", bias=False),
          *norm(f"{EXAONE_BLOCK}.ln_1", "hidden", bias=False), *norm(f"{EXAONE_BLOCK}.ln_2", "hidden", bias=False),
          *(r for name, space in (("q", "q"), ("k", "k"), ("v", "v"))
            for r in linear(f"{EXAONE_BLOCK}.attn.attention.{name}_proj", space, "hidden")),
          *linear(f"{EXAONE_BLOCK}.attn.attention.out_proj", "hidden", "o"),
          *linear(f"{EXAONE_BLOCK}.mlp.c_fc_0", "ffn", "hidden"), *linear(f"{EXAONE_BLOCK}.mlp.c_fc_1", "ffn", "hidden"),
          *linear(f"{EXAONE_BLOCK}.mlp.c_proj", "hidden", "ffn")),
)
SEED_OSS = RECIPE.extend(name="seed_oss", model_types=("seed_oss",), classes=tuple(f"SeedOss{h}" for h in HEADS))
ULTRABERT = RECIPE.extend(  # an encoder; its MLM head puts an activation between the last projection and the tied decoder,
    # which the tied output's 1/k copies cannot pass: UltrabertForMaskedLM is not supported
    name="ultrabert", model_types=("ultrabert",), prefix=("model", "ultrabert"),
    classes=("UltrabertModel", "UltrabertForSequenceClassification", "UltrabertForTokenClassification", "UltrabertForQuestionAnswering"),
    heads=(*linear("classifier", None, "final"), *linear("qa_outputs", None, "final")),
)
OLMO = RECIPE.extend(  # OLMo (1): LayerNorms without weights, eps 1e-5 fixed in code
    name="olmo", model_types=("olmo",), classes=("OlmoModel", "OlmoForCausalLM"), norm="layer",
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", kv_heads="num_key_value_heads", eps=()),
    # the final norm has no weight to carry a tied output's 1/k: the LM head reads plain copies, so it must be untied;
    # q, k and v clamped at clip_qkv would see head_dim growth's score correction: not supported
    spaces={**RECIPE.spaces, "final": Space("hidden", Kind.RESIDUAL)},
    requires={"tie_word_embeddings": False, "clip_qkv": None},
    # no γ to carry what extra hidden units change in the statistics: the copies carry 1/√fill
    constraints=(NormsWithoutWeights(), *RECIPE.constraints),
)
# NanoChat: RMSNorms without weights everywhere (one of them also before the first block, and per head on q and k), a
# ReLU² MLP (fc1 / fc2), an untied LM head: the residual copies always carry 1/√fill, so no norm needs a weight
NANOCHAT = RECIPE.extend(
    name="nanochat", model_types=("nanochat",), classes=("NanoChatModel", "NanoChatForCausalLM"),
    spaces={**RECIPE.spaces, "final": Space("hidden", Kind.RESIDUAL)}, requires={"tie_word_embeddings": False},
    constraints=(NormsWithoutWeights(), *RECIPE.constraints),
    body=(*linear(f"{LAYER}.mlp.fc1", "ffn", "hidden", bias=False), *linear(f"{LAYER}.mlp.fc2", "hidden", "ffn", bias=False)),
)
# Doge: Qwen3's attention (per-head q/k norms before the rotation) with a dynamic mask: dt_proj reads the values and
# writes one logit per KV head, exp(A · softplus(·)) is added to that head's scores (the keep_window_size best keys
# kept), so it is copied with its KV head; the residual is multiplied by a learned gain per hidden unit before each
# branch is added (x ⊙ g + branch: copied with the unit, 1 in a new block); optionally (is_moe) a gated MLP plus a
# product-key mixture of one-unit experts, down_embed reading the stream and up_embed writing it, router kept whole
DOGE = QWEN3.extend(
    name="doge", model_types=("doge",), classes=("DogeModel", "DogeForCausalLM", "DogeForSequenceClassification"),
    config=dataclasses.replace(QWEN3.config, head_dim=None),
    spaces={**QWEN3.spaces, "gain": Space("hidden", Kind.ACTIVATION), "kv_per_head": Space("kv_heads", Kind.ACTIVATION)},
    body=(*linear(f"{LAYER}.self_attn.dt_proj", "kv_per_head", "v"), TensorRule(f"{LAYER}.self_attn.A", (writes("kv_per_head"),)),
          *(TensorRule(f"{LAYER}.{g}_residual", (writes("gain"),), new_block=held_at(1.0)) for g in ("input", "post_attention")),
          *linear(f"{LAYER}.mlp.router_gate", None, "hidden", bias=False, split=False),
          TensorRule(f"{LAYER}.mlp.down_embed.weight", (None, reads("hidden"))), *embedding(f"{LAYER}.mlp.up_embed", "hidden")),
)
# HRM (text): two stacks of Llama blocks (L_module, H_module, num_layers_per_stack each) run in nested cycles, each
# stack's output a final norm's, fed back into the other's input; every norm is an RMS norm without weight
# (rms_norm_eps), so, as NanoChat's, the copy convention with residual copies that keep their mean square, and an untied
# LM head. The attention output is gated per element by sigmoid(gate_proj(x)) (an activation of the attention width:
# exact copies); z_L_init, the low stack's initial state, is a vector of the stream. num_hidden_layers counts every
# block call (the blocks × the cycles, the cache's slots) and is rewritten with the blocks
HRM = "(L|H)_module.layers.*"
HRM_TEXT = RECIPE.extend(
    name="hrm_text", model_types=("hrm_text",), classes=("HrmTextModel", "HrmTextForCausalLM"), prefix="model",
    config=dataclasses.replace(RECIPE.config, kv_heads=None, depth_multiple=("num_hidden_layers",)),
    stacks=(("L_module.layers", "num_layers_per_stack", None), ("H_module.layers", "num_layers_per_stack", None)),
    spaces={**RECIPE.spaces, "final": Space("hidden", Kind.RESIDUAL), "gate": Space("attention", Kind.ACTIVATION)},
    requires={"tie_word_embeddings": False}, constraints=(NormsWithoutWeights(), *RECIPE.constraints),
)
HRM_TEXT = dataclasses.replace(HRM_TEXT, body=(
    *embedding("embed_tokens", "hidden"), TensorRule("z_L_init", (writes("hidden"),)),
    *(dataclasses.replace(r, pattern=r.pattern.replace(LAYER, HRM)) for r in RECIPE.body if r.pattern.startswith(LAYER) and "norm" not in r.pattern),
    *linear(f"{HRM}.self_attn.gate_proj", "gate", "hidden"),
    # as stored: gate|q|k|v and gate|up fused (transformers splits them on load), the output projection under attn
    TensorRule(f"{HRM}.attn.gqkv_proj.weight", (Packed((writes("gate"), writes("q"), writes("k"), writes("v"))), reads("hidden"))),
    TensorRule(f"{HRM}.mlp.gate_up_proj.weight", (Packed((writes("ffn"), writes("ffn"))), reads("hidden"))),
    *linear(f"{HRM}.attn.o_proj", "hidden", "o")))
# Cosmos3 Edge's text model: Llama's blocks with a ReLU² MLP (fc1, fc2) and multimodal rotary sections laid out
# slot by slot (slot j of the first 3·section slots follows the height or width stream by j mod 3): growing head_dim
# would move slots between streams, so heads only
COSMOS3_EDGE_TEXT = RECIPE.extend(
    name="cosmos3_edge_text", model_types=("cosmos3_edge_text",), classes=("Cosmos3EdgeTextModel",),
    body=(*linear(f"{LAYER}.mlp.fc1", "ffn", "hidden"), *linear(f"{LAYER}.mlp.fc2", "hidden", "ffn")),
    constraints=(HeadDimFixed("the rotary sections (mrope_section) interleave the position streams slot by slot, and a "
                              "longer head would move slots between streams"), *RECIPE.constraints),
)
# Muse Glimmer's text model: the embedding normalised by an RMS norm without weight (the stream starts at it), q and k
# normalised per head by one without weight (before the rotation; the queries then × qk_scale_factor), both at
# rms_norm_eps with the hidden norms: the copy convention, copies that keep their mean square. Norms before and after
# each branch scale by 1 + weight (post ones at post_norm_eps); the attention output gated per element by
# sigmoid(gate_proj(x)); sliding-window rotary blocks and full-attention NoPE ones (layer_types, layer_rope_theta 0)
CENTERED = (*norm(f"{LAYER}.input_layernorm", "hidden", bias=False, offset=1.0),
            *norm(f"{LAYER}.post_attention_layernorm", "hidden", bias=False, offset=1.0),
            *norm(f"{LAYER}.pre_feedforward_layernorm", "hidden", bias=False, offset=1.0),
            *norm(f"{LAYER}.post_feedforward_layernorm", "hidden", bias=False, offset=1.0))
MUSE_GLIMMER_TEXT = RECIPE.extend(
    name="muse_glimmer_text", model_types=("muse_glimmer_text",), classes=("MuseGlimmerTextModel",),
    config=dataclasses.replace(RECIPE.config, eps=("rms_norm_eps", "post_norm_eps")),
    spaces={**RECIPE.spaces, "gate": Space("attention", Kind.ACTIVATION)},
    body=(*CENTERED, *linear(f"{LAYER}.self_attn.gate_proj", "gate", "hidden", bias=False)),
    constraints=(WeightlessNorms("the embedding norm and the per-head q/k norms"), *RECIPE.constraints),
)

# Higgs Audio v2: Llama's blocks with a second MLP and its own two norms for audio tokens (each token takes the text or
# the audio path by its id), audio codebook embeddings (num_codebooks × codebook_size rows of the hidden width, summed
# over the codebooks) and an audio LM head over every codebook (the text LM head only when built with use_text_head)
HIGGS_AUDIO_V2 = RECIPE.extend(
    name="higgs_audio_v2", model_types=("higgs_audio_v2",), classes=("HiggsAudioV2ForConditionalGeneration",),
    body=(*embedding("embed_audio_tokens.embed_audio_tokens", "hidden"),
          *norm(f"{LAYER}.audio_input_layernorm", "hidden", bias=False), *norm(f"{LAYER}.audio_post_attention_layernorm", "hidden", bias=False),
          *(r for p in ("gate", "up") for r in linear(f"{LAYER}.audio_mlp.{p}_proj", "ffn", "hidden", bias=False)),
          *linear(f"{LAYER}.audio_mlp.down_proj", "hidden", "ffn", bias=False)),
    heads=(*linear("audio_lm_head", None, "final", bias=False), *linear("text_lm_head", None, "final", bias=False)),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["llama"] = tiny.LLAMA
TINY["mistral"] = TINY["llama"]
TINY["qwen2"] = TINY["llama"]
TINY["qwen3"] = TINY["llama"]
TINY["arcee"] = TINY["llama"]
TINY["cwm"] = TINY["llama"]
TINY["ministral"] = TINY["llama"]
TINY["ernie4_5"] = TINY["llama"]
TINY["helium"] = TINY["llama"]
TINY["seed_oss"] = TINY["llama"]
TINY["ultrabert"] = TINY["llama"]
TINY["eurobert"] = like(TINY["llama"], mask_token_id=3)
# its default rope is YaRN: head_dim growth refused
TINY["ministral3"] = TINY["llama"]
# head_dim = hidden / heads
TINY["olmo"] = like(TINY["llama"], "head_dim", "rms_norm_eps")
# layer 1 without rotary (NoPE)
TINY["smollm3"] = like(TINY["llama"], no_rope_layers=[1, 0])
# run with Llama's classes
TINY["internlm3"] = TINY["llama"]
# run with Llama's classes
TINY["iquestcoder"] = TINY["llama"]
TINY["apertus"] = TINY["llama"]
# exaone: run with Llama's classes
TINY["hunyuan_v1_dense"] = TINY["llama"]
# exaone: run with Llama's classes
TINY["emu3_text_model"] = TINY["llama"]
# exaone: run with Llama's classes
TINY["exaone"] = TINY["llama"]
# an LM head pruned to the first 90 tokens
TINY["apertus1p5_text"] = like(TINY["llama"], output_vocab_size=90)
# Doge: the dynamic mask keeps the 4 best of the tests' 9 keys; is_moe adds 16 one-unit experts (4 × 4 product keys), 2 per token
TINY["doge"] = like(TINY["llama"], "head_dim", keep_window_size=4, num_experts=16, num_experts_per_tok=2)
# HRM (text): two stacks of 2 blocks each, in 2 high cycles of 2 low cycles; weightless norms
TINY["hrm_text"] = like(TINY["llama"], "num_key_value_heads", H_cycles=2, L_cycles=2, embedding_scale=2.0)
# Cosmos3 Edge (text): ReLU² MLP, rotary sections over head_dim 4's 2 frequency slots (time, height)
TINY["cosmos3_edge_text"] = like(TINY["llama"], bos_token_id=1, eos_token_id=2,
                                 rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                  "mrope_section": [1, 1, 0]})
# Muse Glimmer (text): a sliding-window rotary block, then a full-attention NoPE one (layer_rope_theta 0)
TINY["muse_glimmer_text"] = like(TINY["cosmos3_edge_text"], "rope_parameters", sliding_window=4, post_norm_eps=0.02,
                                 qk_scale_factor=2.5, layer_types=["sliding_attention", "full_attention"],
                                 layer_rope_theta=[10000.0, 0])
TINY["qwen2_vl_text"] = like(TINY["cosmos3_edge_text"], rope_parameters=tiny.MROPE)
TINY["qwen2_5_vl_text"] = TINY["qwen2_vl_text"]
TINY["qwen2_5_omni_text"] = TINY["qwen2_5_vl_text"]
# its code interleaves the sections
TINY["qwen3_vl_text"] = like(TINY["llama"], rope_parameters=tiny.MROPE)
# HunYuan-VL (text): sections in contiguous chunks of 2·section dims over the whole head (streams T, H, W by chunk)
TINY["hunyuan_vl_text"] = TINY["qwen3_vl_text"]
# biases on q, k, v and o
TINY["paddleocr_vl_text"] = like(TINY["qwen2_vl_text"], use_bias=True)
# 5 codec embeddings and LM heads
TINY["qwen3_omni_moe_talker_code_predictor"] = like(TINY["llama"], num_code_groups=6)
TINY["nanochat"] = like(TINY["llama"], final_logit_softcapping=15.0)
# Higgs Audio v2: 2 codebooks of 7 codes; token 5 marks an audio position (its embedding the codebooks' sum); Llama 3's rotary
TINY["higgs_audio_v2"] = like(TINY["cosmos3_edge_text"], "rope_parameters", num_codebooks=2, codebook_size=7,
                              audio_token_id=5, audio_bos_token_id=6, audio_delay_token_id=7, audio_stream_bos_id=5,
                              audio_stream_eos_id=6)
