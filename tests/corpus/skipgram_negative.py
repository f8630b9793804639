# word2vec skip-gram with negative sampling (SGNS), the way most PyTorch
# re-implementations write it: an input (center) table and an output
# (context) table, dot products via bmm and a logsigmoid objective.
import torch
import torch.nn as nn
import torch.nn.functional as F


class SkipGramNeg(nn.Module):
    def __init__(self, vocab_size, emb_dim):
        super().__init__()
        self.vocab_size = vocab_size
        self.emb_dim = emb_dim
        self.in_embed = nn.Embedding(vocab_size, emb_dim)
        self.out_embed = nn.Embedding(vocab_size, emb_dim)
        init_range = 0.5 / emb_dim
        self.in_embed.weight.data.uniform_(-init_range, init_range)
        self.out_embed.weight.data.uniform_(-0.0, 0.0)

    def forward_input(self, input_words):
        return self.in_embed(input_words)

    def forward_output(self, output_words):
        return self.out_embed(output_words)

    def forward(self, center, context, negatives):
        # center: [B], context: [B], negatives: [B, K]
        batch_size = center.size(0)
        emb_center = self.forward_input(center).view(batch_size, self.emb_dim, 1)
        emb_context = self.forward_output(context).view(batch_size, 1, self.emb_dim)
        emb_neg = self.forward_output(negatives)  # [B, K, D]

        pos_score = torch.bmm(emb_context, emb_center).squeeze()       # [B]
        pos_loss = F.logsigmoid(pos_score)
        neg_score = torch.bmm(emb_neg.neg(), emb_center).squeeze(2)    # [B, K]
        neg_loss = F.logsigmoid(neg_score).sum(1)
        return -(pos_loss + neg_loss).mean()


def sample_negatives(noise_dist, batch_size, n_samples):
    draws = torch.multinomial(noise_dist, batch_size * n_samples, replacement=True)
    return draws.view(batch_size, n_samples)


def most_similar(embeddings, query_ids, topk=5):
    normed = F.normalize(embeddings, dim=1)
    q = normed[query_ids]
    sims = q @ normed.t()
    values, indices = sims.topk(topk, dim=1)
    return values, indices


if __name__ == "__main__":
    vocab_size = 5000
    emb_dim = 100
    batch_size = 32
    n_neg = 5

    model = SkipGramNeg(vocab_size, emb_dim)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.003)

    word_freqs = torch.rand(vocab_size)
    unigram = word_freqs.pow(0.75)
    noise_dist = unigram / unigram.sum()

    for step in range(2):
        center = torch.randint(0, vocab_size, (batch_size,))
        context = torch.randint(0, vocab_size, (batch_size,))
        negatives = sample_negatives(noise_dist, batch_size, n_neg)
        loss = model(center, context, negatives)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    # alternative scoring with einsum instead of bmm
    c = model.forward_input(center)
    n = model.forward_output(negatives)
    scores = torch.einsum("bd,bkd->bk", c, n)
    probs = torch.sigmoid(scores)

    valid_ids = torch.randint(0, vocab_size, (8,))
    vals, idx = most_similar(model.in_embed.weight, valid_ids, topk=5)
    print(loss, probs.shape, vals.shape, idx.shape)
