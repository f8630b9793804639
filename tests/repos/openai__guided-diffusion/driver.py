# Builds guided-diffusion's UNet (its parts come from guided_diffusion/nn.py)
# and runs one denoising step of a 32x32 batch, class-conditional as a variant.
import torch
from oracle_driver_api import variant

from guided_diffusion.unet import UNetModel

if __name__ == "__main__":
    model = UNetModel(
        image_size=32, in_channels=3, model_channels=32, out_channels=3, num_res_blocks=1,
        attention_resolutions=(2,), channel_mult=(1, 2), num_heads=2,
    )
    x = torch.randn(2, 3, 32, 32)
    t = torch.randint(0, 1000, (2,))
    eps = model(x, t)
    with variant("class_conditional"):
        model = UNetModel(
            image_size=32, in_channels=3, model_channels=32, out_channels=6, num_res_blocks=1,
            attention_resolutions=(2,), channel_mult=(1, 2), num_heads=2, num_classes=10,
            use_scale_shift_norm=True, resblock_updown=True,
        )
        y = torch.randint(0, 10, (2,))
        eps = model(x, t, y)
