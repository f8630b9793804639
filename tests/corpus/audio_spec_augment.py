import torch
import torch.nn as nn
import torch.nn.functional as F


class LogMelSpectrogram(nn.Module):
    def __init__(self, n_fft=256, hop_length=64, n_mels=32):
        super().__init__()
        self.n_fft = n_fft
        self.hop_length = hop_length
        n_freq = n_fft // 2 + 1
        self.register_buffer("window", torch.hann_window(n_fft))
        # stand-in for a real mel filterbank: non-negative [n_mels, n_freq]
        self.register_buffer("mel_fb", torch.rand(n_mels, n_freq))

    def forward(self, waveform):
        spec = torch.stft(
            waveform, n_fft=self.n_fft, hop_length=self.hop_length,
            window=self.window, center=True, return_complex=True,
        )  # (B, n_freq, frames)
        magnitude = spec.abs().pow(2.0)
        mel = torch.matmul(self.mel_fb, magnitude)  # (B, n_mels, frames)
        log_mel = torch.log(mel.clamp(min=1e-10))
        return log_mel


class SpecAugment(nn.Module):
    def __init__(self, freq_mask_param=8, time_mask_param=12, n_freq_masks=2, n_time_masks=2):
        super().__init__()
        self.freq_mask_param = freq_mask_param
        self.time_mask_param = time_mask_param
        self.n_freq_masks = n_freq_masks
        self.n_time_masks = n_time_masks

    @staticmethod
    def _mask_along(spec, max_width, axis):
        # spec: (B, F, T); one random band per example along `axis` (1 = freq, 2 = time)
        batch, size = spec.size(0), spec.size(axis)
        width = torch.randint(0, max_width + 1, (batch, 1), device=spec.device)
        start = (torch.rand(batch, 1, device=spec.device) * (size - width)).long()
        positions = torch.arange(size, device=spec.device).unsqueeze(0)
        band = (positions >= start) & (positions < start + width)  # (B, size)
        if axis == 1:
            band = band.unsqueeze(2)
        else:
            band = band.unsqueeze(1)
        return spec.masked_fill(band, 0.0)

    def forward(self, spec):
        if not self.training:
            return spec
        for _ in range(self.n_freq_masks):
            spec = self._mask_along(spec, self.freq_mask_param, axis=1)
        for _ in range(self.n_time_masks):
            spec = self._mask_along(spec, self.time_mask_param, axis=2)
        return spec


class AudioCNN(nn.Module):
    def __init__(self, num_classes=10, channels=(16, 32, 64)):
        super().__init__()
        layers = []
        in_ch = 1
        for ch in channels:
            layers += [
                nn.Conv2d(in_ch, ch, kernel_size=3, padding=1, bias=False),
                nn.BatchNorm2d(ch),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(2),
            ]
            in_ch = ch
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(in_ch * 2, num_classes)

    def forward(self, x):
        x = self.features(x)  # (B, C, F', T')
        x = x.mean(dim=3)  # pool over time
        x = torch.cat([x.mean(dim=2), x.amax(dim=2)], dim=1)
        return self.classifier(x)


class KeywordSpotter(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.frontend = LogMelSpectrogram()
        self.augment = SpecAugment()
        self.norm = nn.InstanceNorm2d(1)
        self.backbone = AudioCNN(num_classes)

    def forward(self, waveform):
        feats = self.frontend(waveform)
        feats = self.augment(feats)
        feats = self.norm(feats.unsqueeze(1))
        return self.backbone(feats)


if __name__ == "__main__":
    waveform = torch.randn(4, 8000)
    frontend = LogMelSpectrogram()
    log_mel = frontend(waveform)
    augment = SpecAugment()
    augmented = augment(log_mel)
    model = KeywordSpotter(num_classes=10)
    logits = model(waveform)
    labels = torch.randint(0, 10, (4,))
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    model.eval()
    eval_logits = model(waveform)
    probs = eval_logits.softmax(dim=-1)
