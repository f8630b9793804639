# oracle: pretend-cuda
# An LSTM tagger that builds its initial hidden state inside forward with
# torch.zeros(...) and forgets the device: the model and inputs are on cuda.
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"


class LSTMTagger(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, tagset_size, num_layers=1):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.num_layers = num_layers
        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers=num_layers, batch_first=True)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        h0 = torch.zeros(self.num_layers, sentence.size(0), self.hidden_dim)
        c0 = torch.zeros(self.num_layers, sentence.size(0), self.hidden_dim)
        lstm_out, _ = self.lstm(embeds, (h0, c0))  # BUG: h0/c0 live on the cpu, embeds on cuda
        tag_space = self.hidden2tag(lstm_out)
        return torch.log_softmax(tag_space, dim=-1)


if __name__ == "__main__":
    model = LSTMTagger(vocab_size=500, embedding_dim=32, hidden_dim=64, tagset_size=12).to(device)
    sentence = torch.randint(0, 500, (4, 15)).to(device)
    tag_scores = model(sentence)
    print(tag_scores.shape)
