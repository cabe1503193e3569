"""Verification inputs that are not only text, generated from the config, seeded (a growth is exact for every input, so
random inputs show a wrong one as well as real ones, and need no processor):

- audio, keyed on the model class's ``main_input_name``: ``input_features`` (log-mel spectrograms for Whisper: its
  encoder takes exactly 2 · max_source_positions mel frames) and ``input_values`` (raw audio for wav2vec2 and HuBERT,
  long enough for the convolutional feature encoder to give FRAMES frames), with decoder token ids for an
  encoder-decoder;
- images, keyed on what the class's ``forward`` takes: a vision tower or an image classifier reads ``pixel_values``
  alone; a dual encoder (CLIP, SigLIP) reads token ids and pixel values, one image per sentence, at the size and
  channels the (vision) config declares;
- a vision-language model (its recipe module's Feed names one of ``IMAGES``) reads one image per sentence in its processor's
  layout, and each sentence holds that image's placeholder tokens (as many as the image gives features, between the
  family's markers), so that the projected image features are merged into the text stream the model reads;
- an audio-language model (its Feed names one of ``AUDIO``) reads one recording per sentence, of the length
  its encoder takes, and each sentence holds that recording's audio placeholder tokens (an omni thinker's between its
  audio start and end tokens, after an image's; VibeVoice-ASR's with ``sample`` False, a 0-d tensor).
"""

from __future__ import annotations

import inspect
from fractions import Fraction
from typing import Any, Callable

import torch

from . import image_layouts
from .errors import GrowthError
from .recipe import Feed

BATCH = 2  # signals per verification
FRAMES = 32  # feature-encoder frames of a raw waveform (enough for an x-vector's TDNN layers)
DECODER_TOKENS = 8  # decoder token ids beside an encoder-decoder's signal
IMAGE_COUNT = 4  # images per verification pass when the model reads no text

Inputs = tuple[dict[str, torch.Tensor], str, Any]  # the inputs, their description, the mask token id (or None)


def main_input(cls: str | None) -> str:
    """What the transformers class ``cls`` reads first (its ``main_input_name``); ``input_ids`` for an unknown class."""
    import transformers

    return getattr(getattr(transformers, cls or "", None), "main_input_name", "input_ids")


def feed(config: Any) -> Feed:
    """How verification feeds ``config``'s model type: what its recipe module declares (recipes' FEEDS), or nothing more
    than what its class's ``forward`` names."""
    from .recipes import FEEDS

    return FEEDS.get(getattr(config, "model_type", None), NO_FEED)


NO_FEED = Feed()


def _positive(config: Any, name: str) -> int:
    value = getattr(config, name, None)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise GrowthError(f"config.json: '{name}' should be a positive integer to generate verification inputs, got {value!r}")
    return value


def decoder_ids(config: Any, g: torch.Generator) -> dict[str, torch.Tensor]:
    """Random decoder token ids, for a class that takes them beside its signal."""
    length = min(DECODER_TOKENS, getattr(config, "max_target_positions", None) or DECODER_TOKENS)
    return {"decoder_input_ids": torch.randint(0, _positive(config, "vocab_size"), (BATCH, length), generator=g)}


def _mel(config: Any, g: torch.Generator) -> tuple[dict[str, torch.Tensor], str]:
    """Whisper: [batch, num_mel_bins, 2 · max_source_positions] (its second convolution has stride 2)."""
    bins, frames = _positive(config, "num_mel_bins"), 2 * _positive(config, "max_source_positions")
    return {"input_features": torch.randn(BATCH, bins, frames, generator=g)}, \
        f"generated audio: {BATCH} random log-mel spectrograms of {bins} bins × {frames} frames"


def waveform_length(kernels: list[int], strides: list[int], frames: int) -> int:
    """The shortest raw waveform from which convolutions of these kernels and strides give ``frames`` frames."""
    length = frames
    for kernel, stride in zip(reversed(kernels), reversed(strides)):
        length = (length - 1) * stride + kernel
    return length


def _waveform(config: Any, g: torch.Generator) -> tuple[dict[str, torch.Tensor], str]:
    """wav2vec2 and HuBERT: [batch, samples], long enough for FRAMES frames of the feature encoder."""
    kernels, strides = list(getattr(config, "conv_kernel", None) or ()), list(getattr(config, "conv_stride", None) or ())
    if not kernels or len(kernels) != len(strides):
        raise GrowthError("config.json: 'conv_kernel' and 'conv_stride' should be lists of one length to generate verification inputs")
    length = waveform_length(kernels, strides, FRAMES)
    return {"input_values": torch.randn(BATCH, length, generator=g)}, \
        f"generated audio: {BATCH} random waveforms of {length} samples ({FRAMES} frames)"


def _channel_waveform(config: Any, g: torch.Generator) -> tuple[dict[str, torch.Tensor], str]:
    """OmniASR: [batch, 1 channel, samples], its feature encoder's kernels and strides in ``audio_config``."""
    inputs, description = _waveform(config.audio_config, g)
    return {"input_values": inputs["input_values"][:, None]}, description


def _frames(config: Any, g: torch.Generator) -> tuple[dict[str, torch.Tensor], str]:
    """wav2vec2-BERT: [batch, FRAMES, feature_projection_input_dim] stacked filterbank features."""
    width = _positive(config, "feature_projection_input_dim")
    return {"input_features": torch.randn(BATCH, FRAMES, width, generator=g)}, \
        f"generated audio: {BATCH} random feature sequences of {FRAMES} frames × {width}"


def _mel_frames(config: Any, g: torch.Generator) -> tuple[dict[str, torch.Tensor], str]:
    """LASR, Parakeet, Cohere ASR and Granite Speech 5: [batch, frames, num_mel_bins] (its encoder's sizes in ``encoder_config``, or
    its own for an encoder alone; Granite's mel frames delta-expanded and stacked in pairs: 4 × num_mel_bins), enough
    frames for its subsampler."""
    encoder = getattr(config, "encoder_config", None) or config
    bins = _positive(encoder, "num_mel_bins") * feed(config).stacked_mels
    return {"input_features": torch.randn(BATCH, FRAMES, bins, generator=g)}, \
        f"generated audio: {BATCH} random log-mel spectrograms of {FRAMES} frames × {bins} bins"


def _spectrogram(config: Any, g: torch.Generator) -> tuple[dict[str, torch.Tensor], str]:
    """The audio spectrogram transformer: [batch, max_length frames, num_mel_bins] (its patches tile both axes)."""
    frames, bins = _positive(config, "max_length"), _positive(config, "num_mel_bins")
    return {"input_values": torch.randn(BATCH, frames, bins, generator=g)}, \
        f"generated audio: {BATCH} random log-mel spectrograms of {frames} frames × {bins} bins"


def _moonshine_waveform(config: Any, g: torch.Generator) -> tuple[dict[str, torch.Tensor], str]:
    """Moonshine: [batch, samples], its front-end's kernels and strides fixed in the code (127/64, 7/3, 3/2)."""
    length = waveform_length([127, 7, 3], [64, 3, 2], FRAMES // 4)
    return {"input_values": torch.randn(BATCH, length, generator=g)}, \
        f"generated audio: {BATCH} random waveforms of {length} samples ({FRAMES // 4} frames)"


# the signals a Feed names (a model type whose input name another family reads otherwise)
SIGNALS = {"spectrogram": _spectrogram, "channel_waveform": _channel_waveform, "filterbank_frames": _frames,
           "mel_frames": _mel_frames, "fixed_front_end_waveform": _moonshine_waveform}

GENERATORS: dict[str, Callable[[Any, torch.Generator], tuple[dict[str, torch.Tensor], str]]] = {
    "input_features": _mel,
    "input_values": _waveform,
}


def signal_inputs(cls: str | None, config: Any, seed: int) -> tuple[dict[str, torch.Tensor], str] | None:
    """Generated inputs and their description for a class that reads a signal, None for one that reads tokens.
    ``config``: the transformers config."""

    import transformers

    make = SIGNALS.get(feed(config).signal or "") or GENERATORS.get(main_input(cls))
    if make is None:
        return None
    g = torch.Generator().manual_seed(seed)
    inputs, description = make(config, g)
    if "decoder_input_ids" in inspect.signature(getattr(transformers, cls).forward).parameters:  # an encoder-decoder
        inputs.update(decoder_ids(config, g))
        description += " and random decoder token ids"
    return inputs, description


def forward_inputs(cls: str | None) -> set[str]:
    """The names of the inputs the transformers class ``cls`` takes (empty for an unknown class)."""
    import transformers

    model = getattr(transformers, cls or "", None)
    return set(inspect.signature(model.forward).parameters) if model is not None else set()


ANY_IMAGE_SIZE = 32


def _side(size: Any) -> tuple[int, int]:
    """An image_size field (one side, or height and width) as (height, width)."""
    return (int(size[0]), int(size[1])) if isinstance(size, (list, tuple)) else (int(size), int(size))


def pixel_values(config: Any, n: int, seed: int) -> tuple[torch.Tensor, str]:
    """``n`` random images of the config's size and channels (its vision_config where it has one), and a description."""
    vision = getattr(config, "vision_config", None) or config
    # a convolutional network reads images of any size (ResNet's config has none): 32×32, which every stride divides
    height, width = _side(getattr(vision, "image_size", ANY_IMAGE_SIZE))
    channels = int(getattr(vision, "num_channels", 3))
    g = torch.Generator().manual_seed(seed + 2)  # apart from the token ids' and the masks' generators
    return torch.randn(n, channels, height, width, generator=g), f"random pixel values ({n} images, {channels}×{height}×{width})"


def image_token(config: Any) -> int:
    """A vision-language config's image placeholder token id."""
    value = getattr(config, "image_token_id", None)
    if value is None and feed(config).video_only:  # InstructBLIP-Video's features fill its video tokens
        return _positive(config, "video_token_index")
    return _positive(config, "image_token_index") if value is None else value


def _class_token(config: Any) -> bool:
    """The image features include the vision tower's class token: LLaVA's 'full' strategy over a tower that has one
    (CLIP's; SigLIP's has none)."""
    return (getattr(config, "vision_feature_select_strategy", "default") == "full"
            and getattr(config.vision_config, "model_type", "") != "siglip_vision_model")  # model type: the tower without one


def _llava(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """LLaVA: [n, channels, height, width]; a feature per patch (and the class token's under 'full'), or per s × s
    patches where a pixel shuffle puts them side by side (Aya Vision's downsample_factor s, InternVL's downsample_ratio
    1 / s; the class token dropped)."""
    vision = config.vision_config
    height, width = _side(vision.image_size)
    patch = _side(vision.patch_size)
    full = _class_token(config)
    shuffle = getattr(config, "downsample_factor", None) or round(1 / getattr(config, "downsample_ratio", 1))
    pixels = torch.randn(n, int(getattr(vision, "num_channels", 3)), height, width, generator=g)
    return {"pixel_values": pixels}, (height // patch[0]) * (width // patch[1]) // shuffle ** 2 + full, [], []


def _pixtral(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Mistral 3, LightOnOCR: [n, channels, height, width] with image_sizes; a feature per spatial_merge_size² patches."""
    images, _, before, after = _llava(config, n, g)
    height, width = _side(config.vision_config.image_size)
    side = _positive(config.vision_config, "patch_size") * _positive(config, "spatial_merge_size")
    return {**images, "image_sizes": torch.tensor([[height, width]] * n)}, (height // side) * (width // side), before, after


def _queries(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """BLIP-2: [n, channels, height, width]; num_query_tokens features per image (the Q-Former's queries)."""
    images, _, before, after = _llava(config, n, g)
    return images, _positive(config, "num_query_tokens"), before, after


def _instructed(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """InstructBLIP: BLIP-2's images and queries, with the instruction the Q-Former reads (qformer_input_ids, of its
    own vocabulary)."""
    images, count, before, after = _queries(config, n, g)
    ids = torch.randint(1, int(config.qformer_config.vocab_size), (n, 4), generator=g)
    return {**images, "qformer_input_ids": ids, "qformer_attention_mask": torch.ones_like(ids)}, count, before, after


FRAMES_PER_VIDEO = 4  # a video-only model's frames (Feed.video_only): InstructBLIP-Video's processor samples 4


def _instructed_video(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """InstructBLIP-Video: InstructBLIP's inputs, each image a video of FRAMES_PER_VIDEO frames [n, frames, channels,
    height, width]; num_query_tokens features a frame."""
    images, count, before, after = _instructed(config, n, g)
    frames = torch.randn(n, FRAMES_PER_VIDEO - 1, *images["pixel_values"].shape[1:], generator=g)
    video = torch.cat([images["pixel_values"].unsqueeze(1), frames], dim=1)
    return {**images, "pixel_values": video}, count * FRAMES_PER_VIDEO, before, after


def _aria(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Aria: [n, channels, height, width]; as many features as projector_patch_to_query_dict gives the image's patches
    (its projector's learned queries)."""
    images, patches, before, after = _llava(config, n, g)
    return images, int(config.projector_patch_to_query_dict[patches]), before, after


def _perceived(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Idefics2: [n, 1 image, channels, height, width] with its pixel_attention_mask; resampler_n_latents features an
    image (its perceiver's learned latents)."""
    images, _, before, after = _llava(config, n, g)
    pixels = images["pixel_values"].unsqueeze(1)
    mask = torch.ones(n, 1, *pixels.shape[-2:], dtype=torch.bool)
    return {"pixel_values": pixels, "pixel_attention_mask": mask}, _positive(config.perceiver_config, "resampler_n_latents"), before, after


def _windowed(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Granite 4 Vision: LLaVA-NeXT's tiles, each tile's patches per side times downsample_rate (its window Q-Formers'
    queries over their windows)."""
    images, _, before, after = _llava_next(config, n, g)
    vision = config.vision_config
    side = _side(vision.image_size)[0]
    per_side = int(side // _side(vision.patch_size)[0] * Fraction(config.downsample_rate))
    height, width = (int(x) for x in config.image_grid_pinpoints[0])
    rows, columns = height // side * per_side, width // side * per_side
    return images, per_side * per_side + rows * (columns + 1), before, after


def _sam(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """GOT-OCR2: [n, channels, height, width]; a feature per 4 × 4 patches (two stride-2 convolutions)."""
    images, count, before, after = _llava(config, n, g)
    return images, count // 16, before, after


def _video_llava(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Video-LLaVA: LLaVA's images, as pixel_values_images (its videos are pixel_values_videos)."""
    images, count, before, after = _llava(config, n, g)
    return {"pixel_values_images": images["pixel_values"]}, count, before, after


def _llava_next(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """LLaVA-NeXT: each image of the first grid pinpoint's size, as the processor tiles it: [n, 1 + tiles, channels, side,
    side] (a resized whole image, then the tiles) with its image_sizes; a feature per patch of the whole image, then per
    patch of the tiles' grid with an image_newline after each of its rows."""
    vision = config.vision_config
    side, patch = _side(vision.image_size)[0], _side(vision.patch_size)[0]
    pinpoints = getattr(config, "image_grid_pinpoints", None) or [[side, side]]
    height, width = int(pinpoints[0][0]), int(pinpoints[0][1])
    tiles, per_side = (height // side) * (width // side), side // patch
    pixels = torch.randn(n, 1 + tiles, int(getattr(vision, "num_channels", 3)), side, side, generator=g)
    full = _class_token(config)
    rows, columns = height // side * per_side, width // side * per_side
    count = per_side * per_side + full + rows * (columns + 1)
    return {"pixel_values": pixels, "image_sizes": torch.tensor([[height, width]] * n)}, count, [], []


def _qwen2_vl(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Qwen2-VL, Qwen2.5-VL: each image a grid of 1 × 2m × 2m patches (m: the spatial merge size), flattened into rows of
    channels × temporal_patch_size × patch_size² values, with its image_grid_thw; a feature per m × m patches, between
    vision_start and vision_end (GLM-4V's image_start and image_end; the model derives its multimodal rotary positions from
    them); HyperCLOVAX's, without."""
    vision = config.vision_config
    merge, patch = int(vision.merge_kernel_size[0]) if feed(config).merge_kernel else _positive(vision, "spatial_merge_size"), \
        _positive(vision, "patch_size")
    side = 2 * merge
    # Kimi K2.5's tower reads 3 channels (fixed in code); its patches are 2-D, of one frame, as PaddleOCR-VL's
    channels = 3 if feed(config).merge_kernel else getattr(vision, "in_channels", None) or _positive(vision, "num_channels")
    frames = getattr(vision, "temporal_patch_size", None) or 1  # PaddleOCR-VL's: one frame
    pixels = torch.randn(n * side * side, channels * frames * patch * patch, generator=g)
    if feed(config).flat_patches:  # PaddleOCR-VL: each patch [channels, patch, patch]
        pixels = pixels.view(-1, channels, patch, patch)
    grid = torch.tensor([[1, side, side]] * n)
    marks = next((m for m in ("vision", "image") if getattr(config, f"{m}_start_token_id", None) is not None), None)  # GLM-4V: image_*
    ends = ([_positive(config, f"{marks}_start_token_id")], [_positive(config, f"{marks}_end_token_id")]) if marks else ([], [])
    return {"pixel_values": pixels, "image_grid_thw": grid}, side * side // merge ** 2, *ends


def _gemma3(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Gemma 3: [n, channels, height, width]; mm_tokens_per_image features per image, between boi and eoi."""
    pixels, _ = pixel_values(config, n, int(torch.randint(0, 2 ** 31, (1,), generator=g)))
    ends = [_positive(config, "boi_token_index")], [_positive(config, "eoi_token_index")]
    return {"pixel_values": pixels}, _positive(config, "mm_tokens_per_image"), *ends


def _idefics3(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Idefics3, SmolVLM: [n, 1 image, channels, height, width] with its pixel_attention_mask; a feature per
    scale_factor² patches (the connector's pixel shuffle)."""
    vision = config.vision_config
    height, width = _side(vision.image_size)
    patch, scale = _side(vision.patch_size)[0], _positive(config, "scale_factor")
    pixels = torch.randn(n, 1, int(getattr(vision, "num_channels", 3)), height, width, generator=g)
    mask = torch.ones(n, 1, height, width, dtype=torch.bool)
    return {"pixel_values": pixels, "pixel_attention_mask": mask}, (height // patch) * (width // patch) // scale ** 2, [], []


def _llama4(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Llama 4: each image one tile, [n, channels, side, side]; a feature per patch after the adapter's pixel shuffle
    (patches × pixel_shuffle_ratio², the class token dropped), between image_start (boi) and image_end (eoi)."""
    vision = config.vision_config
    side, patch = _positive(vision, "image_size"), _positive(vision, "patch_size")
    pixels = torch.randn(n, int(getattr(vision, "num_channels", 3)), side, side, generator=g)
    count = round((side // patch) ** 2 * float(vision.pixel_shuffle_ratio) ** 2)
    ends = [_positive(config, "boi_token_index")], [_positive(config, "eoi_token_index")]
    return {"pixel_values": pixels}, count, *ends


def _gemma4(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Gemma 4: each image GRID[1] × GRID[2] patches, [n, patches, 3 · patch_size²] with their (x, y) positions
    (image_position_ids); a feature per pooling_kernel_size² patches, between boi and eoi."""
    vision = config.vision_config
    patch, pool = _positive(vision, "patch_size"), _positive(vision, "pooling_kernel_size")
    rows, columns = GRID[1], GRID[2]
    pixels = torch.rand(n, rows * columns, 3 * patch * patch, generator=g)
    ys, xs = torch.meshgrid(torch.arange(rows), torch.arange(columns), indexing="ij")
    positions = torch.stack([xs.flatten(), ys.flatten()], dim=-1).expand(n, -1, -1)
    ends = [_positive(config, "boi_token_id")], [_positive(config, "eoi_token_id")]
    return {"pixel_values": pixels, "image_position_ids": positions}, rows * columns // pool ** 2, *ends


def _hunyuan_vl(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """HunYuan-VL: Qwen2-VL's patch rows and image_grid_thw (one frame); m × m patches merged into one feature, a newline
    feature after each merged row, a begin and an end feature: every one an image token."""
    images, _, _, _ = _qwen2_vl(config, n, g)
    rows = 2  # _qwen2_vl's grid of 2m × 2m patches: 2 × 2 merged
    return images, rows * (rows + 1) + 2, [], []


def _global_view(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Unlimited OCR: a global view each, [n, channels, side, side] at the SAM encoder's image_size (no local tiles); q × q
    features (its patches per side over 4: two stride-2 convolutions), an image_newline after each row, a view_separator."""
    sam = config.vision_config.sam_config
    side = _side(sam.image_size)[0]
    q = side // _side(sam.patch_size)[0] // 4
    return {"pixel_values": torch.randn(n, int(getattr(sam, "num_channels", 3)), side, side, generator=g)}, q * (q + 1) + 1, [], []


def _queried(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """DeepSeek-OCR 2: Unlimited OCR's global views, the SAM encoder's q × q features read by the encoder's learned
    queries (144 of them up to 12 × 12 features, 256 beyond: DeepseekOcr2VisionModel's), then a view_separator."""
    images, _, before, after = _global_view(config, n, g)
    sam = config.vision_config.sam_config
    q = _side(sam.image_size)[0] // _side(sam.patch_size)[0] // 4
    return images, (144 if q * q <= 144 else 256) + 1, before, after


def _high_res(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """DeepSeek-VL hybrid: LLaVA's images for SigLIP, and high_res_pixel_values at the SAM tower's image_size."""
    images, count, before, after = _llava(config, n, g)
    side = _side(config.high_res_vision_config.image_size)
    high = torch.randn(n, int(getattr(config.high_res_vision_config, "num_channels", 3)), *side, generator=g)
    return {**images, "high_res_pixel_values": high}, count, before, after
def _fuyu(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """Fuyu: no vision tower, each image patch (patch_size² × num_channels values) one image token."""
    size, channels = _positive(config, "patch_size"), _positive(config, "num_channels")
    count = 4
    return {"pixel_values": torch.randn(n, count, size * size * channels, generator=g)}, count, [], []


def _minicpm(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int, list[int], list[int]]:
    """MiniCPM-V 4.6 / MiniCPM-OCR: every image's patches packed in one row (NaViT: [1, channels, patch, patches ×
    patch]) and each image's patch grid (target_sizes), 8 × 8 patches merged 2 × 2 by the merger, and 2 × 2 before by
    the vision tower's window merger unless downsample_mode is "4x" (MiniCPM-OCR's default): 4 or 16 image tokens."""
    vision = config.vision_config
    size, channels, side = _positive(vision, "patch_size"), _positive(vision, "num_channels"), 8
    pixels = torch.randn(1, channels, size, n * side * side * size, generator=g)
    merged = side // (2 if getattr(config, "downsample_mode", "16x") == "4x" else 4)
    return {"pixel_values": pixels, "target_sizes": torch.tensor([[side, side]] * n)}, merged ** 2, [], []


# the image layouts a Feed names: each the model's images for n sentences, how many features one gives, and the tokens
# before and after them (images that enter as a VQ tokenizer's codes are token ids: Feed.coded_images)
IMAGES: dict[str, Callable[[Any, int, torch.Generator], tuple[dict[str, torch.Tensor], int, list[int], list[int]]]] = {
    "patch_features": _llava, "tiles": _llava_next, "patch_rows": _qwen2_vl, "soft_tokens": _gemma3, "pixel_shuffle": _idefics3,
    "shuffled_tile": _llama4, "images_beside_videos": _video_llava, "sized_merged_patches": _pixtral, "queries": _queries,
    "convolved": _sam, "instructed_queries": _instructed, "instructed_video": _instructed_video, "patch_queries": _aria,
    "perceived_latents": _perceived, "windowed_tiles": _windowed, "positioned_patches": _gemma4, "newline_rows": _hunyuan_vl,
    "global_view": _global_view, "queried_view": _queried, "high_res": _high_res, "raw_patches": _fuyu,
    "packed_rows": _minicpm, "naflex": image_layouts.naflex, "merged_rows": image_layouts.merged_rows,
    "strided": image_layouts.strided,
}


def image_text_inputs(config: Any, seed: int, inputs: dict[str, torch.Tensor], source: str) -> tuple[dict[str, torch.Tensor], str]:
    """A vision-language model's inputs: the sentences ``inputs`` (BATCH of them, one verification batch, where the
    pixel values are rows of patches), each after an image's placeholder tokens, and the images in the processor's
    layout."""
    g = torch.Generator().manual_seed(seed + 2)
    how = feed(config)
    n = BATCH if how.patch_rows else inputs["input_ids"].shape[0]
    images, count, before, after = IMAGES[how.images](config, n, g)
    ids, mask = inputs["input_ids"][:n], inputs.get("attention_mask", torch.ones_like(inputs["input_ids"]))[:n]
    special = torch.tensor([image_token(config), *before, *after, *(getattr(config, f, None) or -1 for f in (
        "video_token_id", "video_token_index", "vision_start_token_id", "vision_end_token_id", "boi_token_index", "eoi_token_index",
        "image_start_token_id", "image_end_token_id", "video_start_token_id", "video_end_token_id", "boi_token_id", "eoi_token_id",
        "audio_token_id", "boa_token_id"))])
    vocab = int(config.text_config.vocab_size)
    plain = next(i for i in range(vocab) if i not in special)  # a sentence's token that is a marker: a plain token instead
    ids = ids.masked_fill(torch.isin(ids, special), plain)
    block = torch.tensor(before + [image_token(config)] * count + after).expand(ids.shape[0], -1)
    ids = torch.cat([block, ids], dim=1)
    fed = {"input_ids": ids, "attention_mask": torch.cat([torch.ones_like(block), mask], dim=1), **images}
    if how.type_ids:  # image tokens marked as the processor marks them
        fed[how.type_ids] = (ids == image_token(config)).long()
    shape = "×".join(map(str, next(iter(images.values())).shape))
    kept = f" (the first {n})" if n < inputs["input_ids"].shape[0] else ""
    return fed, f"{source}{kept}; an image each (pixel values {shape}), as {count} image tokens before it"


def embeddings(config: Any, seed: int) -> tuple[dict[str, torch.Tensor], str]:
    """Random input embeddings of the hidden width, for a class that reads no token ids: DECODER_TOKENS positions (fewer
    where num_code_groups is smaller: Qwen3-Omni's code predictor picks its LM head by the sequence's length)."""
    hidden = _positive(config, "hidden_size")
    length = min(DECODER_TOKENS, getattr(config, "num_code_groups", None) or DECODER_TOKENS)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(BATCH, length, hidden, generator=g)
    return {"inputs_embeds": x, "attention_mask": torch.ones(BATCH, length, dtype=torch.long)}, \
        f"random input embeddings ({BATCH} × {length} positions × {hidden})"


GRID = (1, 4, 4)  # each generated image's patch grid (frames, rows, columns): merges of 2×2 patches fit it


def patches(config: Any, seed: int, takes: set[str]) -> tuple[dict[str, torch.Tensor], str]:
    """Vision encoders that read images as flattened patches (Qwen2-VL's layout): ``pixel_values`` (or
    ``hidden_states``) [patches, channels · frames per patch · patch_size²] and ``grid_thw`` [images, 3]."""
    size = _positive(config, "patch_size")
    channels = getattr(config, "in_channels", None) or getattr(config, "num_channels", None) or 3
    frames = getattr(config, "temporal_patch_size", None) or getattr(config, "patch_temporal", None) or 1
    width = channels * frames * size * size
    grid = torch.tensor([GRID] * BATCH)
    g = torch.Generator().manual_seed(seed + 2)
    pixels = torch.randn(int(grid.prod(-1).sum()), width, generator=g)
    # grid_thw first: a batch is as many images as it has rows (the patches of every image are one sequence)
    return {"grid_thw": grid, "pixel_values" if "pixel_values" in takes else "hidden_states": pixels}, \
        f"random flattened patches ({BATCH} images of {GRID[1]}×{GRID[2]} patches of {width} values)"


def with_signals(cls: str | None, config: Any, seed: int, tokens: Callable[[Any], Inputs], text_file: Any = None) -> Inputs:
    """The inputs of a model of class ``cls``: generated audio where it reads a signal, ``tokens(text_config)`` where it
    reads token ids, random pixel values where it reads images (as many as sentences where it reads both)."""
    signals = signal_inputs(cls, config, seed)
    if signals is not None:
        if text_file:
            raise GrowthError(f"--text-file gives sentences, but {cls} reads no text: its inputs are generated")
        return (*signals, None)
    takes = forward_inputs(cls)
    if "grid_thw" in takes and "input_ids" not in takes:
        if text_file:
            raise GrowthError(f"--text-file gives sentences, but {cls} reads no text: its inputs are generated")
        return (*patches(config, seed, takes), None)
    how = feed(config)
    if how.audio and "input_ids" in takes:  # recordings before the sentences
        inputs, source, mask_id = tokens(config.text_config)
        if how.images:  # an omni thinker: an image, then the recording before it
            inputs, source = image_text_inputs(config, seed, inputs, source)
        return (*audio_text_inputs(config, seed, inputs, source), mask_id)
    if how.coded_images:
        return tokens(getattr(config, "text_config", None) or config)
    if not takes & {"pixel_values", "pixel_values_images"}:  # Video-LLaVA's images: pixel_values_images
        return tokens(config)
    if "input_ids" not in takes:
        pixels, described = pixel_values(config, IMAGE_COUNT, seed)
        return {"pixel_values": pixels}, described, None
    inputs, source, mask_id = tokens(getattr(config, "text_config", None) or config)
    if how.images:
        return (*image_text_inputs(config, seed, inputs, source), mask_id)
    pixels, described = pixel_values(config, inputs["input_ids"].shape[0], seed)
    return {**inputs, "pixel_values": pixels}, f"{source}; {described}", mask_id


# audio-language models (issue 32): an audio tower, a projector into the text width, and a text model that reads the projected
# audio features in place of the embeddings of its audio placeholder tokens. Each layout: the model's audio inputs for n
# sentences (one recording each, of the length its encoder takes), and how many features one recording gives.
AudioLayout = Callable[[Any, int, torch.Generator], tuple[dict[str, torch.Tensor], int]]


def halved(length: int, times: int) -> int:
    """A length after ``times`` convolutions of kernel 3, stride 2 and padding 1."""
    for _ in range(times):
        length = (length - 1) // 2 + 1
    return length


def _mels(config: Any, n: int, g: torch.Generator, frames: int, mask: str | None = None) -> dict[str, torch.Tensor]:
    """``n`` random log-mel spectrograms of the audio config's bins × ``frames``, with a mask of valid frames named ``mask``."""
    bins = _positive(config.audio_config, "num_mel_bins")
    features = {"input_features": torch.randn(n, bins, frames, generator=g)}
    return {**features, mask: torch.ones(n, frames, dtype=torch.long)} if mask else features


def _qwen2_audio(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int]:
    """Qwen2-Audio: Whisper's encoder (2 · max_source_positions frames, halved once) and an average pool of 2."""
    frames = 2 * _positive(config.audio_config, "max_source_positions")
    return _mels(config, n, g, frames, "feature_attention_mask"), (halved(frames, 1) - 2) // 2 + 1


def _voxtral(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int]:
    """Voxtral: Whisper's encoder (2 · max_source_positions frames, halved once), its output read intermediate_size
    values at a time (hidden_size · 4: four frames a feature)."""
    audio = config.audio_config
    frames = 2 * _positive(audio, "max_source_positions")
    return _mels(config, n, g, frames), halved(frames, 1) * _positive(audio, "hidden_size") // _positive(audio, "intermediate_size")


def _glmasr(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int]:
    """GLM-ASR: 2 · max_position_embeddings frames, halved once, then merged four frames a feature."""
    frames = 2 * _positive(config.audio_config, "max_position_embeddings")
    return _mels(config, n, g, frames, "input_features_mask"), (halved(frames, 1) - 4) // 4 + 1


def _qwen3_asr(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int]:
    """Qwen3-ASR: a window of 2 · n_window frames, halved three times (its encoder counts 13 features a whole window: the
    released n_window, 50)."""
    window = 2 * _positive(config.audio_config, "n_window")
    return _mels(config, n, g, window, "input_features_mask"), halved(window, 3)


def _omniasr(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int]:
    """OmniASR: raw audio [n, 1, samples], long enough for FRAMES frames of its convolutional front-end."""
    audio = config.audio_config
    length = waveform_length(list(audio.conv_kernel), list(audio.conv_stride), FRAMES)
    return {"input_values": torch.randn(n, 1, length, generator=g)}, FRAMES


def _qwen3_omni(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int]:
    """Qwen3-Omni's thinker: Qwen3-ASR's encoder, its mask named feature_attention_mask."""
    window = 2 * _positive(config.audio_config, "n_window")
    return _mels(config, n, g, window, "feature_attention_mask"), halved(window, 3)


def _vibevoice(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int]:
    """VibeVoice-ASR: raw audio [n, 1, 8 · hop_length samples], a latent per hop; ``sample`` False (a 0-d tensor, kept
    whole by the batches): its forward adds Gaussian noise to the acoustic latents otherwise."""
    hop = _positive(config.acoustic_tokenizer_encoder_config, "hop_length")
    return {"input_values": torch.randn(n, 1, 8 * hop, generator=g), "sample": torch.tensor(False)}, 8


def _fun_asr(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int]:
    """FunASR-Nano: [n, 8 frames, input_size] (its feature extractor's stacked mel frames) and their mask, a feature each."""
    width = _positive(config.audio_config, "input_size")
    return {"input_features": torch.randn(n, 8, width, generator=g), "input_features_mask": torch.ones(n, 8, dtype=torch.long)}, 8


def _moss(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int]:
    """MOSS Transcribe-Diarize: Whisper's encoder (2 · max_source_positions frames, halved once), merged audio_merge_size
    frames a feature (the last group padded)."""
    frames, merge = 2 * _positive(config.audio_config, "max_source_positions"), _positive(config, "audio_merge_size")
    return _mels(config, n, g, frames, "input_features_mask"), -(-halved(frames, 1) // merge)


def _granite_speech(config: Any, n: int, g: torch.Generator) -> tuple[dict[str, torch.Tensor], int]:
    """Granite Speech: [n, window_size frames, input_dim] (a window of the Q-Former's), window_size / downsample_rate
    features (its queries)."""
    window, dim = _positive(config, "window_size"), _positive(config.encoder_config, "input_dim")
    return {"input_features": torch.randn(n, window, dim, generator=g)}, window // _positive(config, "downsample_rate")


# the audio layouts a Feed names
AUDIO: dict[str, AudioLayout] = {"pooled_mels": _qwen2_audio, "regrouped_mels": _voxtral, "merged_mels": _glmasr,
                                 "windowed_mels": _qwen3_asr, "channel_waveform": _omniasr, "merged_whisper_mels": _moss,
                                 "query_windows": _granite_speech, "windowed_mels_attention": _qwen3_omni,
                                 "latent_waveform": _vibevoice, "stacked_frames": _fun_asr}


def audio_token(config: Any) -> int:
    """An audio-language config's audio placeholder token id."""
    value = getattr(config, "audio_token_id", None)
    return _positive(config, "audio_token_index") if value is None else value


def audio_text_inputs(config: Any, seed: int, inputs: dict[str, torch.Tensor], source: str) -> tuple[dict[str, torch.Tensor], str]:
    """An audio-language model's inputs: the sentences ``inputs``, each after a recording's audio placeholder tokens (as many
    as the recording gives features), and the recordings in the model's layout."""
    g = torch.Generator().manual_seed(seed + 2)
    ids = inputs["input_ids"]
    how = feed(config)
    audio, count = AUDIO[how.audio](config, ids.shape[0], g)
    token = audio_token(config)
    marks = (getattr(config, f"audio_{e}_token_id", None) if how.audio_marks else None for e in ("start", "end"))
    before, after = ([m] if m is not None else [] for m in marks)  # an omni thinker's (its rotary positions read them)
    special = torch.tensor([token, *before, *after])
    plain = next(i for i in range(int(config.text_config.vocab_size)) if i not in special)
    block = torch.tensor(before + [token] * count + after).expand(ids.shape[0], -1)
    mask = inputs.get("attention_mask", torch.ones_like(ids))
    fed = {**inputs, "input_ids": torch.cat([block, ids.masked_fill(torch.isin(ids, special), plain)], dim=1),
            "attention_mask": torch.cat([torch.ones_like(block), mask], dim=1), **audio}
    shape = "×".join(map(str, next(iter(audio.values())).shape))
    return fed, f"{source}; a recording each (audio {shape}), as {count} audio tokens before it"
