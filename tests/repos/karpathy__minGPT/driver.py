# Builds minGPT's nano GPT from its default config (a CfgNode from
# mingpt/utils.py) and runs a forward pass with targets and a generation.
import torch
from oracle_driver_api import variant

from mingpt.model import GPT

if __name__ == "__main__":
    config = GPT.get_default_config()
    config.model_type = "gpt-nano"
    config.vocab_size = 50
    config.block_size = 16
    model = GPT(config)
    idx = torch.randint(0, 50, (2, 16))
    logits, loss = model(idx, idx)
    with variant("generate"):
        out = model.generate(idx[:, :4], max_new_tokens=2, do_sample=False)
