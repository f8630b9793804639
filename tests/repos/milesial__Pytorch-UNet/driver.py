# Builds the U-Net of milesial/Pytorch-UNet and runs one forward pass, with
# transposed convolutions and (as a variant) bilinear upsampling.
import torch
from oracle_driver_api import variant

from unet.unet_model import UNet

if __name__ == "__main__":
    x = torch.randn(2, 3, 64, 96)
    net = UNet(n_channels=3, n_classes=2, bilinear=False)
    logits = net(x)
    with variant("bilinear"):
        net = UNet(n_channels=3, n_classes=2, bilinear=True)
        logits = net(x)
