# Runs pytorch/examples' MNIST network directly and through the script's own
# train() loop, fed by a list of batches where the script has a DataLoader.
import argparse

import torch
import torch.optim as optim

from main import Net, train


class Batches(list):
    """Batches standing for a DataLoader: the loop reads `.dataset` to log."""

    dataset = range(4)


if __name__ == "__main__":
    model = Net()
    x = torch.randn(4, 1, 28, 28)
    out = model(x)
    # No logging: it formats `loss.item()`, which has no value under the
    # fake mode (`0 % nan == 0` is false for every batch).
    args = argparse.Namespace(log_interval=float("nan"), dry_run=True)
    batches = Batches([(torch.randn(4, 1, 28, 28), torch.randint(0, 10, (4,)))])
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    train(args, model, torch.device("cpu"), batches, optimizer, 1)
