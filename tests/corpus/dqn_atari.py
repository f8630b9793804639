# Nature DQN (Mnih et al. 2015) for Atari frames plus a dueling head,
# and the one-step TD target computed with a target network.
import torch
import torch.nn as nn
import torch.nn.functional as F


class DQN(nn.Module):
    def __init__(self, in_channels=4, n_actions=6):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 32, kernel_size=8, stride=4)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=4, stride=2)
        self.conv3 = nn.Conv2d(64, 64, kernel_size=3, stride=1)
        self.fc4 = nn.Linear(7 * 7 * 64, 512)
        self.head = nn.Linear(512, n_actions)

    def forward(self, x):
        x = x.float() / 255.0
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.relu(self.conv3(x))
        x = F.relu(self.fc4(x.view(x.size(0), -1)))
        return self.head(x)


class DuelingDQN(nn.Module):
    def __init__(self, in_channels=4, n_actions=6):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 32, 8, stride=4), nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(),
            nn.Flatten(),
        )
        feat_dim = self._feature_size(in_channels)
        self.value = nn.Sequential(nn.Linear(feat_dim, 512), nn.ReLU(), nn.Linear(512, 1))
        self.advantage = nn.Sequential(nn.Linear(feat_dim, 512), nn.ReLU(), nn.Linear(512, n_actions))

    def _feature_size(self, in_channels):
        with torch.no_grad():
            return self.features(torch.zeros(1, in_channels, 84, 84)).size(1)

    def forward(self, x):
        feats = self.features(x / 255.0)
        value = self.value(feats)
        advantage = self.advantage(feats)
        q = value + advantage - advantage.mean(dim=1, keepdim=True)
        return q


def compute_td_loss(policy_net, target_net, batch, gamma=0.99):
    state, action, reward, next_state, done = batch
    q_values = policy_net(state)
    q_value = q_values.gather(1, action.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_q_values = target_net(next_state)
        next_q_value = next_q_values.max(1)[0]
        expected_q = reward + gamma * next_q_value * (1 - done)
    loss = F.smooth_l1_loss(q_value, expected_q)
    return loss, q_value


def double_dqn_target(policy_net, target_net, next_state, reward, done, gamma=0.99):
    next_actions = policy_net(next_state).argmax(dim=1, keepdim=True)
    next_q = target_net(next_state).gather(1, next_actions).squeeze(-1)
    return reward + gamma * next_q * (1.0 - done)


if __name__ == "__main__":
    n_actions = 6
    batch_size = 32
    policy = DQN(4, n_actions)
    target = DQN(4, n_actions)
    target.load_state_dict(policy.state_dict())

    state = torch.randint(0, 256, (batch_size, 4, 84, 84), dtype=torch.uint8)
    next_state = torch.randint(0, 256, (batch_size, 4, 84, 84), dtype=torch.uint8)
    action = torch.randint(0, n_actions, (batch_size,))
    reward = torch.randn(batch_size)
    done = torch.randint(0, 2, (batch_size,)).float()

    loss, q_taken = compute_td_loss(policy, target, (state, action, reward, next_state, done))
    loss.backward()

    dueling = DuelingDQN(4, n_actions)
    dueling_target = DuelingDQN(4, n_actions)
    obs = torch.rand(batch_size, 4, 84, 84) * 255
    q_duel = dueling(obs)
    greedy = q_duel.argmax(dim=1)
    y = double_dqn_target(dueling, dueling_target, obs, reward, done)
    print(loss, q_taken.shape, q_duel.shape, greedy.shape, y.shape)
