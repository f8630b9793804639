# Builds nanoGPT's GPT from its config dataclass, runs a forward pass with
# targets, the flash and the manual attention paths, and a short generation.
import torch
from oracle_driver_api import variant

from model import GPT, GPTConfig

if __name__ == "__main__":
    config = GPTConfig(block_size=32, vocab_size=96, n_layer=2, n_head=4, n_embd=64, dropout=0.0, bias=True)
    model = GPT(config)
    idx = torch.randint(0, 96, (3, 32))
    logits, loss = model(idx, idx)
    with variant("manual_attention"):
        # The branch a machine without scaled_dot_product_attention takes:
        # the causal mask the constructor would have registered.
        for block in model.transformer.h:
            block.attn.flash = False
            block.attn.register_buffer("bias", torch.tril(torch.ones(32, 32)).view(1, 1, 32, 32))
        logits, loss = model(idx, idx)
    with variant("generate"):
        out = model.generate(idx[:, :8], max_new_tokens=2)
