# Runs TorchShapeFlow's annotated example models and functions (examples/,
# `Annotated[torch.Tensor, Shape(...)]` parameters, checked by that tool
# statically, never at run time) with small sizes. `torchshapeflow` itself is
# put on the path with `--path CHECKOUT/src` (its `Shape` is a plain class).
# The examples folder is not a package: each target is imported under its
# own file name. One argument chooses the part that runs, so that each of
# error_cases.py's deliberate bugs gets its own run and the clean files'
# answers carry no error:
#   clean          attention_scores, transformer_block, vit_patch_embed, simple_cnn
#   bad_reshape    error_cases.bad_reshape: x.reshape(-1, -1) (the answer kept)
#   bad_broadcast  error_cases.bad_broadcast: [B,3,32,32] + [B,4,32,32]
# simple_cnn's Net.__init__ never calls nn.Module.__init__, so `Net()` raises
# AttributeError ("cannot assign module before Module.__init__() call") at its
# line 11, a bug outside shapes: the driver initialises the nn.Module part
# first and then runs the example's own __init__ and forward.
#
#   python oracle_driver.py --driver .../Davidxswang__torchshapeflow/driver.py \
#       --src-root ../../checkouts/torchshapeflow --path ../../checkouts/torchshapeflow/src \
#       --repo Davidxswang/torchshapeflow --commit COMMIT --out-dir DIR TARGETS -- PART
import sys

import torch
from torch import nn

import attention_scores
import error_cases
import simple_cnn
import transformer_block
import vit_patch_embed

if __name__ == "__main__":
    part = sys.argv[1] if len(sys.argv) > 1 else "clean"
    if part == "clean":
        q = torch.randn(2, 3, 5, 4)
        k = torch.randn(2, 3, 5, 4)
        scores = attention_scores.attention_scores(q, k)

        x = torch.randn(2, 5, 768)
        heads = transformer_block.attention_projection(x)

        images = torch.randn(2, 3, 224, 224)
        patches = vit_patch_embed.patch_embed(images)

        try:
            net = simple_cnn.Net()
        except AttributeError:
            net = simple_cnn.Net.__new__(simple_cnn.Net)
            nn.Module.__init__(net)
            net.__init__()
        logits = net(torch.randn(2, 3, 32, 32))
    elif part == "bad_reshape":
        y = error_cases.bad_reshape(torch.randn(2, 3, 32, 32))
    elif part == "bad_broadcast":
        z = error_cases.bad_broadcast(torch.randn(2, 3, 32, 32), torch.randn(2, 4, 32, 32))
    else:
        raise SystemExit(f"unknown part {part}")
