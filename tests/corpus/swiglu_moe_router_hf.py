import torch
import torch.nn as nn
import torch.nn.functional as F


class MoeConfig:
    model_type = "tiny_moe"

    def __init__(self, hidden_size=64, intermediate_size=96, num_local_experts=4,
                 num_experts_per_tok=2, router_jitter_noise=0.0, hidden_act="silu",
                 rms_norm_eps=1e-5, vocab_size=100):
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.num_local_experts = num_local_experts
        self.num_experts_per_tok = num_experts_per_tok
        self.router_jitter_noise = router_jitter_noise
        self.hidden_act = hidden_act
        self.rms_norm_eps = rms_norm_eps
        self.vocab_size = vocab_size


class MoeRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class SwiGLUExpert(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.w1 = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.w2 = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.w3 = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, hidden_states):
        current_hidden_states = self.act_fn(self.w1(hidden_states)) * self.w3(hidden_states)
        return self.w2(current_hidden_states)


class SparseMoeBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_dim = config.hidden_size
        self.num_experts = config.num_local_experts
        self.top_k = config.num_experts_per_tok
        self.gate = nn.Linear(self.hidden_dim, self.num_experts, bias=False)
        self.experts = nn.ModuleList([SwiGLUExpert(config) for _ in range(self.num_experts)])

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights = routing_weights / routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)

        # (tokens, top_k, num_experts) one-hot, then collapse top_k into a dense weight per expert
        expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts).to(hidden_states.dtype)
        dense_weights = (expert_mask * routing_weights.unsqueeze(-1)).sum(dim=1)

        final_hidden_states = torch.zeros(
            (batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype
        )
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            expert_weight = dense_weights[:, expert_idx : expert_idx + 1]
            current_hidden_states = expert_layer(hidden_states) * expert_weight
            final_hidden_states = final_hidden_states + current_hidden_states
        final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)
        return final_hidden_states, router_logits


def load_balancing_loss_func(router_logits, num_experts, top_k):
    routing_weights = F.softmax(router_logits, dim=-1)
    _, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
    expert_mask = F.one_hot(selected_experts, num_experts)
    tokens_per_expert = torch.mean(expert_mask.float(), dim=0)
    router_prob_per_expert = torch.mean(routing_weights, dim=0)
    overall_loss = torch.sum(tokens_per_expert * router_prob_per_expert.unsqueeze(0))
    return overall_loss * num_experts


class MoeDecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.input_layernorm = MoeRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.block_sparse_moe = SparseMoeBlock(config)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states, router_logits = self.block_sparse_moe(hidden_states)
        hidden_states = residual + hidden_states
        outputs = (hidden_states, router_logits)
        return outputs


if __name__ == "__main__":
    config = MoeConfig()
    embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
    layer = MoeDecoderLayer(config)
    lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
    input_ids = torch.randint(0, config.vocab_size, (2, 12))
    inputs_embeds = embed_tokens(input_ids)
    layer_outputs = layer(inputs_embeds)
    hidden_states, router_logits = layer_outputs
    logits = lm_head(hidden_states)
    aux_loss = load_balancing_loss_func(router_logits, config.num_local_experts, config.num_experts_per_tok)
    lm_loss = F.cross_entropy(logits[:, :-1].reshape(-1, config.vocab_size), input_ids[:, 1:].reshape(-1))
    loss = lm_loss + 0.01 * aux_loss
    loss.backward()
