"""The multimodal model types of the coverage sweep that no recipe joins yet, each refused with what blocks it (listed in
REFUSED). One table: a reason, then the model types it holds.

Most of these are not mathematics but work not done: the towers mechanism (hfgrow/towers.py) keeps a vision tower and
grows the text model, so a join needs only rules for what lies between them, and verification inputs that reach the
text model. What each lacks is named: a merger inside the vision tower that writes the text width, an audio projector
of another kind than recipes/audio_joins.py declares, a projector with attention or learned queries, a text model hfgrow does not grow, weights
that are not a transformers layout. "Not yet declared" says plainly that the rules are not written.
"""

NOT_DECLARED = "not yet declared: "
AUDIO = (NOT_DECLARED + "its audio reaches the text model through audio placeholder tokens ({}); recipes/audio_joins.py "
         "joins the audio-language models whose projector is plain layers into the text width, and verification generates "
         "audio in their layouts alone (hfgrow/signals.py AUDIO)")
TEXT = "its text model is not grown by hfgrow ({}), so neither is the whole model"
PROJECTOR = (NOT_DECLARED + "the text model and the kept vision tower are supported, but the projector between them ({}) "
             "has no rules yet")
SAVED_NAMES = (NOT_DECLARED + "transformers saves its text model under the original repository's names (the whole model's "
               "conversion mapping: {})")
ENCODER_DECODER = (NOT_DECLARED + "an encoder-decoder over images ({}): no recipe joins its vision encoder to a text "
                   "decoder that reads it by cross-attention")

GROUPS: dict[str, tuple[str, ...]] = {
    "its connector adds a fixed 2-D sine-cosine position table of out_hidden_size (the text width) that transformers "
    "rebuilds from that width on load (a buffer, never stored): a wider table holds each small column once beside new "
    "frequencies, not copies of the small one's, and the LayerNorm after it (ln_mid) reads every unit, so no growth of "
    "the text width is exact": ("granite_docling",),
    # audio-language models not joined (issue 32): what lies between the audio and the text that no rule declares yet
    # fun_asr_nano: joined in recipes/omni_joins.py
    # vibevoice_asr: joined in recipes/omni_joins.py
    AUDIO.format("a FastConformer encoder beside diarization and word-timestamp models of their own (diarization_config, "
                 "word_timestamp_config) before a Nemotron-H text model: no layout generates their inputs"): ("nemo_speechlm",),
    AUDIO.format("a USM conformer and a timm MobileNetV5 vision tower, each entering through a multimodal embedder that ends "
                 "in a weightless RMSNorm over the text width"): ("gemma3n",),
    # qwen2_5_omni_thinker, qwen3_omni_moe_thinker: joined in recipes/omni_joins.py
    AUDIO.format("its decoder reads Mimi codec tokens: codec mimi has no recipe"): ("kyutai_speech_to_text",),
    # the thinkers alone are joined (recipes/omni_joins.py)
    "the whole model (thinker, talker that reads the thinker's hidden states, vocoder) defines no forward, only generate "
    "(speech sampled from its talker and vocoder): verification cannot compare the grown model's outputs; grow its "
    "thinker (model_type qwen2_5_omni_thinker or qwen3_omni_moe_thinker, joined)": ("qwen2_5_omni", "qwen3_omni_moe"),
    SAVED_NAMES.format("Molmo2: transformer.blocks.N with q|k|v fused as att_proj, up|gate as ff_proj, the embedding "
                       "split into wte.embedding and wte.new_embedding, read as molmo2_text's; but molmo2_text has no recipe yet (Qwen3's or OLMo "
                       "2's q/k norms by qk_norm_type, post-norm blocks under norm_after, rotary scaled by block number in "
                       "rope_scaling_layers); its adapter would join as Aya Vision's, a pooling attention at the vision "
                       "width then a SwiGLU whose down_proj writes the text width"): ("molmo2",),
    NOT_DECLARED + "its text model is the model itself (Llama's sizes at the top of its config, no text_config), with "
    "aligner cross-attention inside its decoder layers (one every num_hidden_layers // aligner_num_add_layers blocks, "
    "scores scaled by num_attention_heads^-1/2) over the SaProt encoder's resampled latents; verification generates no "
    "protein sequences": ("evolla",),
    # instructblipvideo, aria, idefics2: joined in recipes/resampler_joins.py
    TEXT.format("kosmos_2_text_model, kosmos_2_5_text_model: they add sinusoidal positions that transformers computes "
                "from embed_dim on load (M2M-100's, never stored), and a wider model's sinusoid is not a copy of the small "
                "one's, so no growth is exact"): ("kosmos-2", "kosmos-2.5"),
    NOT_DECLARED + "gated cross-attention layers inside the text model read the perceiver's image latents (its text "
    "model is the model itself, no text sub-config)": ("idefics",),
    TEXT.format("mllama_text_model: cross-attention layers between its blocks read the vision features"): ("mllama",),
    TEXT.format("hyper-connections: several residual streams mixed by weights read from all of them"): ("qwen4_exp", "hy_v4_vl"),
    TEXT.format("glm5_next_text is refused"): ("glm5_next",),
    TEXT.format("dots3_note_text is refused; an audio tower too"): ("dots3_note",),
    TEXT.format("ernie4_5_vl_moe_text is refused"): ("ernie4_5_vl_moe",),
    TEXT.format("voxtral_realtime_text is refused; an audio tower too"): ("voxtral_realtime",),
    TEXT.format("inkling_text, inkling2_text or inkling2_loop_text: not done yet, layouts no recipe declares"): ("inkling2", "inkling2_loop", "inkling_mm_model"),
    # emu3, apertus1p5: joined in recipes/vlm_joins.py (images as discrete codes, issue 32, helper mm3)
    "its vision tower is a timm model (vision_config: timm_wrapper, config.architecture names a timm architecture): no "
    "transformers module layout for a recipe to declare": ("fast_vlm", "perception_lm"),
    ENCODER_DECODER.format("Pix2Struct, PP-FormulaNet, UDOP, VisionEncoderDecoderModel's pairs, T5Gemma 2, Florence-2's "
                           "BART over DaViT features"): ("pix2struct", "pp_formulanet", "udop", "vision-encoder-decoder",
                                                         "t5gemma2", "florence2"),
    NOT_DECLARED + "BLIP's text decoder (BERT-like, with cross-attention into the vision features in every block) has no "
    "recipe": ("blip",),
    NOT_DECLARED + "PI0's action expert (a Gemma DiT) attends jointly with the PaliGemma model over one sequence, with "
    "action and time embeddings of its own": ("pi0",),
    PROJECTOR.format("vision_adapter's two layers and vision_projection"): ("muse_glimmer",),
    AUDIO.format("its audio tower and adapter have no rules, nor its vision adapter and projection"): ("muse_spark",),
    NOT_DECLARED + "MiniCPM-V 4.6's merger (joined, recipes/text_joins.py) before a Qwen3.5 text model whose canvas M-RoPE "
    "positions (get_rope_index) are laid out from the image start, end, slice and newline markers around each crop and "
    "from mm_token_type_ids, which verification does not generate yet": ("minicpmv4_7",),
    PROJECTOR.format("an RMSNorm and two layers over RADIO's features (RADIO has no recipe or fixture)"): ("nemotron_h_omni",),
    PROJECTOR.format("Gemma 4 Unified's vision embedder: patches of model_patch_size² × 3 pixels through its own "
                     "mm_embed_dim layers and learned positions into a multimodal embedder of the text width, no vision "
                     "tower"): ("gemma4_unified",),
    NOT_DECLARED + "a block-diffusion model (DiffusionGemmaForBlockDiffusion reads decoder_input_ids beside the prompt, "
    "with self-conditioning logits): Gemma 4's multimodal embedder would join its vision tower, but hfgrow's verification "
    "generates no image inputs for a block-diffusion decoder yet": ("diffusion_gemma",),
}

REFUSED = {model_type: why for why, types in GROUPS.items() for model_type in types}
