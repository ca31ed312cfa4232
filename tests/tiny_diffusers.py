"""Tiny random diffusers pipelines, built in code and saved as local model folders (no download).

They run the real pipelines (InstructPix2Pix, Stable Diffusion inpainting, FLUX.1-Fill) and drivemt's loading
and editing code around them, in a second or two on a CPU; their pictures are noise, as the weights are random.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["build_tiny_pipelines"]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _clip_tokenizer(folder: Path) -> object:
    from transformers import CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for c in _LETTERS:
        vocab[c] = len(vocab)
        vocab[c + "</w>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    return CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), model_max_length=77)


def _clip_text(vocab: int) -> object:
    import torch
    from transformers import CLIPTextConfig, CLIPTextModel

    torch.manual_seed(0)
    config = CLIPTextConfig(
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=1,
        hidden_size=32,
        intermediate_size=37,
        num_attention_heads=4,
        num_hidden_layers=2,
        vocab_size=vocab,
        projection_dim=32,
        max_position_embeddings=77,
    )
    return CLIPTextModel(config)


def _unet(in_channels: int) -> object:
    import torch
    from diffusers import UNet2DConditionModel

    torch.manual_seed(0)
    return UNet2DConditionModel(
        block_out_channels=(32, 64),
        layers_per_block=1,
        sample_size=16,
        in_channels=in_channels,
        out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32,
        norm_num_groups=8,
    )


def _vae(latent: int = 4, blocks: int = 2, **extra: object) -> object:
    import torch
    from diffusers import AutoencoderKL

    torch.manual_seed(0)
    return AutoencoderKL(
        block_out_channels=[16, 32][:blocks],
        in_channels=3,
        out_channels=3,
        down_block_types=["DownEncoderBlock2D"] * blocks,
        up_block_types=["UpDecoderBlock2D"] * blocks,
        latent_channels=latent,
        norm_num_groups=8,
        **extra,
    )


def build_tiny_pipelines(root: Path) -> dict[str, Path]:
    """Save the three tiny pipelines under ``root``; returns their folders by name (ip2p, sd-inpaint, flux-fill)."""
    import torch
    from diffusers import (
        EulerAncestralDiscreteScheduler,
        FlowMatchEulerDiscreteScheduler,
        FluxFillPipeline,
        FluxTransformer2DModel,
        PNDMScheduler,
        StableDiffusionInpaintPipeline,
        StableDiffusionInstructPix2PixPipeline,
    )
    from transformers import T5Config, T5EncoderModel, T5TokenizerFast

    tok: object = _clip_tokenizer(root / "clip-tokenizer")
    vocab = len(tok)  # type: ignore[arg-type]
    folders = {name: root / name for name in ("ip2p", "sd-inpaint", "flux-fill")}
    common = {"safety_checker": None, "feature_extractor": None, "requires_safety_checker": False}
    StableDiffusionInstructPix2PixPipeline(
        vae=_vae(), text_encoder=_clip_text(vocab), tokenizer=tok, unet=_unet(8),
        scheduler=EulerAncestralDiscreteScheduler(), **common,
    ).save_pretrained(folders["ip2p"])  # fmt: skip
    StableDiffusionInpaintPipeline(
        vae=_vae(), text_encoder=_clip_text(vocab), tokenizer=tok, unet=_unet(9),
        scheduler=PNDMScheduler(skip_prk_steps=True, steps_offset=1), **common,
    ).save_pretrained(folders["sd-inpaint"])  # fmt: skip
    pieces = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -2.0)]
    pieces += [("\u2581" + c, -3.0) for c in _LETTERS] + [(c, -4.0) for c in _LETTERS]
    t5_tok = T5TokenizerFast(vocab=pieces, extra_ids=0, model_max_length=32)
    torch.manual_seed(0)
    t5 = T5EncoderModel(
        T5Config(vocab_size=len(t5_tok), d_model=32, d_kv=8, d_ff=37, num_layers=2, num_heads=4,
                 pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    )  # fmt: skip
    torch.manual_seed(0)
    # One latent channel and no downsampling: packed latents 4 + masked image 4 + mask 4 = 12 input channels.
    transformer = FluxTransformer2DModel(
        patch_size=1, in_channels=12, out_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=16,
        num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32, axes_dims_rope=[4, 4, 8],
    )  # fmt: skip
    FluxFillPipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=_vae(latent=1, blocks=1, shift_factor=0.0609, scaling_factor=1.5035, use_quant_conv=False,
                 use_post_quant_conv=False),
        text_encoder=_clip_text(vocab), tokenizer=tok, text_encoder_2=t5, tokenizer_2=t5_tok, transformer=transformer,
    ).save_pretrained(folders["flux-fill"])  # fmt: skip
    return folders
