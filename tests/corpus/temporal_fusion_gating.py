# Gating components of the Temporal Fusion Transformer (Lim et al., 2021),
# following pytorch-forecasting: GatedLinearUnit (Linear -> F.glu), the
# GatedResidualNetwork (ELU, optional context, GLU gate, Add & LayerNorm),
# a VariableSelectionNetwork that embeds each input variable, weights them
# with a softmax over variables and sums, and static enrichment where a
# static context vector is broadcast over time.
from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedLinearUnit(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(input_size, hidden_size * 2)

    def forward(self, x):
        x = self.dropout(x)
        x = self.fc(x)
        return F.glu(x, dim=-1)


class GateAddNorm(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, dropout: float = 0.1):
        super().__init__()
        self.glu = GatedLinearUnit(input_size, hidden_size, dropout)
        self.norm = nn.LayerNorm(hidden_size)

    def forward(self, x, skip):
        return self.norm(self.glu(x) + skip)


class GatedResidualNetwork(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int, dropout: float = 0.1,
                 context_size: Optional[int] = None):
        super().__init__()
        self.resample = nn.Linear(input_size, output_size) if input_size != output_size else None
        self.fc1 = nn.Linear(input_size, hidden_size)
        self.elu = nn.ELU()
        self.context = nn.Linear(context_size, hidden_size, bias=False) if context_size is not None else None
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.gate_norm = GateAddNorm(hidden_size, output_size, dropout)

    def forward(self, x, context=None):
        residual = self.resample(x) if self.resample is not None else x
        x = self.fc1(x)
        if context is not None:
            x = x + self.context(context)
        x = self.elu(x)
        x = self.fc2(x)
        return self.gate_norm(x, residual)


class VariableSelectionNetwork(nn.Module):
    def __init__(self, input_sizes: Dict[str, int], hidden_size: int, dropout: float = 0.1,
                 context_size: Optional[int] = None):
        super().__init__()
        self.hidden_size = hidden_size
        self.input_sizes = input_sizes
        self.num_inputs = len(input_sizes)
        total = sum(input_sizes.values())
        self.flattened_grn = GatedResidualNetwork(total, hidden_size, self.num_inputs, dropout, context_size)
        self.single_variable_grns = nn.ModuleDict(
            {name: GatedResidualNetwork(size, hidden_size, hidden_size, dropout) for name, size in input_sizes.items()}
        )

    def forward(self, x: Dict[str, torch.Tensor], context=None):
        var_outputs = []
        for name in self.input_sizes:
            var_outputs.append(self.single_variable_grns[name](x[name]))
        var_outputs = torch.stack(var_outputs, dim=-1)
        flat = torch.cat([x[name] for name in self.input_sizes], dim=-1)
        sparse_weights = self.flattened_grn(flat, context)
        sparse_weights = F.softmax(sparse_weights, dim=-1).unsqueeze(-2)
        outputs = (var_outputs * sparse_weights).sum(dim=-1)
        return outputs, sparse_weights


class TFTEncoderSketch(nn.Module):
    def __init__(self, static_sizes, time_sizes, hidden_size=32, lstm_layers=1):
        super().__init__()
        self.static_vsn = VariableSelectionNetwork(static_sizes, hidden_size)
        self.static_context_variable_selection = GatedResidualNetwork(hidden_size, hidden_size, hidden_size)
        self.static_context_enrichment = GatedResidualNetwork(hidden_size, hidden_size, hidden_size)
        self.encoder_vsn = VariableSelectionNetwork(time_sizes, hidden_size, context_size=hidden_size)
        self.lstm = nn.LSTM(hidden_size, hidden_size, num_layers=lstm_layers, batch_first=True)
        self.post_lstm_gate = GateAddNorm(hidden_size, hidden_size)
        self.static_enrichment = GatedResidualNetwork(hidden_size, hidden_size, hidden_size, context_size=hidden_size)

    def forward(self, static_x, time_x):
        any_input = next(iter(time_x.values()))
        batch_size, timesteps = any_input.shape[:2]
        static_embedding, static_weights = self.static_vsn(static_x)
        ctx_vs = self.static_context_variable_selection(static_embedding)
        ctx_vs_t = ctx_vs[:, None].expand(-1, timesteps, -1)
        embeddings, encoder_weights = self.encoder_vsn(time_x, ctx_vs_t)
        lstm_out, (h_n, c_n) = self.lstm(embeddings)
        lstm_out = self.post_lstm_gate(lstm_out, embeddings)
        ctx_enrich = self.static_context_enrichment(static_embedding)
        ctx_enrich_t = ctx_enrich.unsqueeze(1).expand(batch_size, timesteps, ctx_enrich.size(-1))
        enriched = self.static_enrichment(lstm_out, ctx_enrich_t)
        return enriched, static_weights.squeeze(-2), encoder_weights.squeeze(-2)


if __name__ == "__main__":
    B, T = 4, 12
    static_sizes = {"store_id": 8, "region": 4}
    time_sizes = {"price": 1, "promo": 2, "day_of_week": 7, "target_lag": 1}
    model = TFTEncoderSketch(static_sizes, time_sizes, hidden_size=32)
    static_x = {"store_id": torch.randn(B, 8), "region": torch.randn(B, 4)}
    time_x = {
        "price": torch.randn(B, T, 1),
        "promo": torch.randn(B, T, 2),
        "day_of_week": F.one_hot(torch.randint(0, 7, (B, T)), 7).float(),
        "target_lag": torch.randn(B, T, 1),
    }
    enriched, static_w, enc_w = model(static_x, time_x)
    grn = GatedResidualNetwork(16, 32, 8, context_size=5)
    g = grn(torch.randn(B, T, 16), torch.randn(B, T, 5))
    glu_out = F.glu(torch.randn(B, 10), dim=-1)
    head = nn.Linear(32, 3)
    quantiles = head(enriched[:, -3:])
