# Builds vit-pytorch's ViT and a masked autoencoder around it (mae.py takes
# the encoder's Transformer from vit.py) and runs both on a batch.
import torch

from vit_pytorch.mae import MAE
from vit_pytorch.vit import ViT

if __name__ == "__main__":
    v = ViT(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4, mlp_dim=128, dim_head=16)
    img = torch.randn(2, 3, 32, 32)
    preds = v(img)
    mae = MAE(encoder=v, masking_ratio=0.75, decoder_dim=32, decoder_depth=1)
    loss = mae(img)
