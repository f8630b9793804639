import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def Linear(in_features, out_features, dropout=0.0):
    m = nn.Linear(in_features, out_features)
    nn.init.normal_(m.weight, mean=0, std=math.sqrt((1 - dropout) / in_features))
    nn.init.constant_(m.bias, 0)
    return m


def ConvTBC1d(in_channels, out_channels, kernel_size, dropout=0.0):
    m = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
    std = math.sqrt((4 * (1.0 - dropout)) / (kernel_size * in_channels))
    nn.init.normal_(m.weight, mean=0, std=std)
    nn.init.constant_(m.bias, 0)
    return m


class ConvEncoder(nn.Module):
    def __init__(self, num_embeddings, embed_dim=48, convolutions=((64, 3), (64, 3), (96, 5)),
                 dropout=0.1, padding_idx=1, max_positions=256):
        super().__init__()
        self.dropout = dropout
        self.padding_idx = padding_idx
        self.embed_tokens = nn.Embedding(num_embeddings, embed_dim, padding_idx=padding_idx)
        self.embed_positions = nn.Embedding(max_positions, embed_dim)
        in_channels = convolutions[0][0]
        self.fc1 = Linear(embed_dim, in_channels, dropout=dropout)
        self.projections = nn.ModuleList()
        self.convolutions = nn.ModuleList()
        for out_channels, kernel_size in convolutions:
            self.projections.append(Linear(in_channels, out_channels) if in_channels != out_channels else None)
            self.convolutions.append(ConvTBC1d(in_channels, out_channels * 2, kernel_size, dropout=dropout))
            in_channels = out_channels
        self.fc2 = Linear(in_channels, embed_dim)

    def forward(self, src_tokens):
        bsz, seqlen = src_tokens.size()
        positions = torch.arange(seqlen).unsqueeze(0).expand(bsz, seqlen)
        x = self.embed_tokens(src_tokens) + self.embed_positions(positions)
        x = F.dropout(x, p=self.dropout, training=self.training)
        input_embedding = x
        x = self.fc1(x)
        encoder_padding_mask = src_tokens.eq(self.padding_idx)
        # B x T x C -> T x B x C
        x = x.transpose(0, 1)
        for proj, conv in zip(self.projections, self.convolutions):
            residual = x if proj is None else proj(x)
            x = x.masked_fill(encoder_padding_mask.t().unsqueeze(-1), 0)
            x = F.dropout(x, p=self.dropout, training=self.training)
            # T x B x C -> B x C x T for Conv1d, then back
            x = conv(x.transpose(0, 1).transpose(1, 2))
            x = x.transpose(1, 2).transpose(0, 1)
            x = F.glu(x, dim=2)
            x = (x + residual) * math.sqrt(0.5)
        x = x.transpose(1, 0)
        x = self.fc2(x)
        x = x.masked_fill(encoder_padding_mask.unsqueeze(-1), 0)
        y = (x + input_embedding) * math.sqrt(0.5)
        return {"encoder_out": (x, y), "encoder_padding_mask": encoder_padding_mask}


class AttentionLayer(nn.Module):
    def __init__(self, conv_channels, embed_dim):
        super().__init__()
        self.in_projection = Linear(conv_channels, embed_dim)
        self.out_projection = Linear(embed_dim, conv_channels)

    def forward(self, x, target_embedding, encoder_out, encoder_padding_mask):
        residual = x
        x = (self.in_projection(x) + target_embedding) * math.sqrt(0.5)
        x = torch.bmm(x, encoder_out[0].transpose(1, 2))
        x = x.float().masked_fill(encoder_padding_mask.unsqueeze(1), float("-inf")).type_as(x)
        sz = x.size()
        x = F.softmax(x.view(sz[0] * sz[1], sz[2]), dim=1)
        x = x.view(sz)
        attn_scores = x
        x = torch.bmm(x, encoder_out[1])
        s = encoder_out[1].size(1)
        x = x * (s * math.sqrt(1.0 / s))
        x = (self.out_projection(x) + residual) * math.sqrt(0.5)
        return x, attn_scores


class ConvDecoderLayer(nn.Module):
    def __init__(self, embed_dim, channels, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size
        self.conv = nn.Conv1d(channels, channels * 2, kernel_size, padding=kernel_size - 1)
        self.attention = AttentionLayer(channels, embed_dim)

    def forward(self, x, target_embedding, encoder_out, encoder_padding_mask):
        # x: T x B x C
        residual = x
        tgt_len = x.size(0)
        x = self.conv(x.permute(1, 2, 0))[:, :, :tgt_len]
        x = x.permute(2, 0, 1)
        x = F.glu(x, dim=2)
        x = x.transpose(0, 1)
        x, attn_scores = self.attention(x, target_embedding, encoder_out, encoder_padding_mask)
        x = x.transpose(0, 1)
        x = (x + residual) * math.sqrt(0.5)
        return x, attn_scores


if __name__ == "__main__":
    vocab, padding_idx = 120, 1
    encoder = ConvEncoder(vocab, embed_dim=48, padding_idx=padding_idx)
    src_tokens = torch.randint(2, vocab, (3, 17))
    src_tokens[0, 13:] = padding_idx
    src_tokens[2, 9:] = padding_idx
    encoder_outs = encoder(src_tokens)
    encoder_out = encoder_outs["encoder_out"]
    encoder_padding_mask = encoder_outs["encoder_padding_mask"]
    keys, values = encoder_out
    tgt_embed = nn.Embedding(vocab, 48, padding_idx=padding_idx)
    fc_in = Linear(48, 64)
    decoder_layer = ConvDecoderLayer(48, 64, kernel_size=3)
    prev_output_tokens = torch.randint(2, vocab, (3, 11))
    target_embedding = tgt_embed(prev_output_tokens)
    x = fc_in(target_embedding).transpose(0, 1)
    x, attn_scores = decoder_layer(x, target_embedding, encoder_out, encoder_padding_mask)
    decoder_hidden = x.transpose(0, 1)
