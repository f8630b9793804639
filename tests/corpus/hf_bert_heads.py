# Task heads on top of a small BERT encoder, in the layout of
# transformers' modeling_bert: BertPooler (dense + tanh on the [CLS] token),
# sequence classification, token classification and a masked-LM head whose
# decoder weight is tied to the word embedding matrix. The padding mask is
# expanded to [B, 1, 1, S] and turned into an additive bias.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size, hidden_size, max_position_embeddings, type_vocab_size=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size, padding_idx=0)
        self.position_embeddings = nn.Embedding(max_position_embeddings, hidden_size)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(0.1)
        self.register_buffer("position_ids", torch.arange(max_position_embeddings).expand((1, -1)), persistent=False)

    def forward(self, input_ids, token_type_ids=None):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_length]
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        embeddings = embeddings + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(embeddings))


class BertLayer(nn.Module):
    def __init__(self, hidden_size, num_heads, intermediate_size):
        super().__init__()
        self.num_attention_heads = num_heads
        self.attention_head_size = hidden_size // num_heads
        self.all_head_size = num_heads * self.attention_head_size
        self.query = nn.Linear(hidden_size, self.all_head_size)
        self.key = nn.Linear(hidden_size, self.all_head_size)
        self.value = nn.Linear(hidden_size, self.all_head_size)
        self.attn_out = nn.Linear(hidden_size, hidden_size)
        self.attn_norm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.intermediate = nn.Linear(hidden_size, intermediate_size)
        self.output = nn.Linear(intermediate_size, hidden_size)
        self.out_norm = nn.LayerNorm(hidden_size, eps=1e-12)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, extended_attention_mask):
        query_layer = self.transpose_for_scores(self.query(hidden_states))
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_scores = attention_scores + extended_attention_mask
        attention_probs = F.softmax(attention_scores, dim=-1)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        context_layer = context_layer.view(context_layer.size()[:-2] + (self.all_head_size,))
        attention_output = self.attn_norm(self.attn_out(context_layer) + hidden_states)
        intermediate_output = F.gelu(self.intermediate(attention_output))
        return self.out_norm(self.output(intermediate_output) + attention_output)


class BertPooler(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        first_token_tensor = hidden_states[:, 0]
        return self.activation(self.dense(first_token_tensor))


class BertModel(nn.Module):
    def __init__(self, vocab_size=120, hidden_size=48, num_layers=2, num_heads=4, intermediate_size=96, max_pos=64):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab_size, hidden_size, max_pos)
        self.layers = nn.ModuleList([BertLayer(hidden_size, num_heads, intermediate_size) for _ in range(num_layers)])
        self.pooler = BertPooler(hidden_size)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        extended_attention_mask = attention_mask[:, None, None, :].to(torch.float32)
        extended_attention_mask = (1.0 - extended_attention_mask) * torch.finfo(torch.float32).min
        hidden_states = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states, extended_attention_mask)
        pooled_output = self.pooler(hidden_states)
        return hidden_states, pooled_output


class BertLMPredictionHead(nn.Module):
    def __init__(self, hidden_size, vocab_size):
        super().__init__()
        self.transform_dense = nn.Linear(hidden_size, hidden_size)
        self.transform_norm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.decoder = nn.Linear(hidden_size, vocab_size, bias=False)
        self.bias = nn.Parameter(torch.zeros(vocab_size))
        self.decoder.bias = self.bias

    def forward(self, hidden_states):
        hidden_states = self.transform_norm(F.gelu(self.transform_dense(hidden_states)))
        return self.decoder(hidden_states)


class BertForPreTrainingHeads(nn.Module):
    def __init__(self, bert: BertModel, vocab_size, hidden_size, num_labels, num_token_labels):
        super().__init__()
        self.bert = bert
        self.dropout = nn.Dropout(0.1)
        self.seq_classifier = nn.Linear(hidden_size, num_labels)
        self.token_classifier = nn.Linear(hidden_size, num_token_labels)
        self.lm_head = BertLMPredictionHead(hidden_size, vocab_size)
        self.lm_head.decoder.weight = self.bert.embeddings.word_embeddings.weight

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        sequence_output, pooled_output = self.bert(input_ids, attention_mask, token_type_ids)
        seq_logits = self.seq_classifier(self.dropout(pooled_output))
        token_logits = self.token_classifier(self.dropout(sequence_output))
        prediction_scores = self.lm_head(sequence_output)
        return seq_logits, token_logits, prediction_scores


if __name__ == "__main__":
    vocab_size, hidden = 120, 48
    bert = BertModel(vocab_size=vocab_size, hidden_size=hidden, num_layers=2, num_heads=4, intermediate_size=96)
    model = BertForPreTrainingHeads(bert, vocab_size, hidden, num_labels=3, num_token_labels=7)
    input_ids = torch.randint(1, vocab_size, (4, 20))
    attention_mask = torch.ones(4, 20, dtype=torch.long)
    attention_mask[:, 15:] = 0
    token_type_ids = torch.zeros(4, 20, dtype=torch.long)
    seq_logits, token_logits, prediction_scores = model(input_ids, attention_mask, token_type_ids)
    labels = torch.randint(0, 3, (4,))
    seq_loss = F.cross_entropy(seq_logits, labels)
    token_labels = torch.randint(0, 7, (4, 20))
    active = attention_mask.view(-1) == 1
    active_labels = torch.where(active, token_labels.view(-1), torch.tensor(-100))
    token_loss = F.cross_entropy(token_logits.view(-1, 7), active_labels, ignore_index=-100)
    mlm_labels = torch.full((4, 20), -100, dtype=torch.long)
    mlm_labels[:, 3] = input_ids[:, 3]
    mlm_loss = F.cross_entropy(prediction_scores.view(-1, vocab_size), mlm_labels.view(-1))
    total = seq_loss + token_loss + mlm_loss
    total.backward()
    tied_grad = model.bert.embeddings.word_embeddings.weight.grad
