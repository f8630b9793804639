# PPO actor-critic in the style of CleanRL: a shared tanh MLP trunk feeds
# a policy head and a value head. Discrete actions use a Categorical
# distribution over logits; continuous actions use a diagonal Normal with a
# state-independent learned log_std. Advantages come from GAE computed with
# a reversed Python loop over the rollout.
import torch
import torch.nn as nn
from torch.distributions import Categorical, Normal


def layer_init(layer: nn.Linear, std: float = 2 ** 0.5, bias_const: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias_const)
    return layer


class ActorCritic(nn.Module):
    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 64, continuous: bool = False):
        super().__init__()
        self.continuous = continuous
        self.trunk = nn.Sequential(
            layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
        )
        self.actor = layer_init(nn.Linear(hidden, act_dim), std=0.01)
        self.critic = layer_init(nn.Linear(hidden, 1), std=1.0)
        if continuous:
            self.log_std = nn.Parameter(torch.zeros(1, act_dim))

    def get_value(self, obs):
        return self.critic(self.trunk(obs)).squeeze(-1)

    def get_action_and_value(self, obs, action=None):
        features = self.trunk(obs)
        if self.continuous:
            mean = self.actor(features)
            std = self.log_std.expand_as(mean).exp()
            dist = Normal(mean, std, validate_args=False)
            if action is None:
                action = dist.sample()
            log_prob = dist.log_prob(action).sum(-1)
            entropy = dist.entropy().sum(-1)
        else:
            logits = self.actor(features)
            dist = Categorical(logits=logits, validate_args=False)
            if action is None:
                action = dist.sample()
            log_prob = dist.log_prob(action)
            entropy = dist.entropy()
        value = self.critic(features).squeeze(-1)
        return action, log_prob, entropy, value


def compute_gae(rewards, values, dones, next_value, next_done, gamma=0.99, gae_lambda=0.95):
    num_steps = rewards.shape[0]
    advantages = torch.zeros_like(rewards)
    lastgaelam = torch.zeros_like(next_value)
    for t in reversed(range(num_steps)):
        if t == num_steps - 1:
            nextnonterminal = 1.0 - next_done
            nextvalues = next_value
        else:
            nextnonterminal = 1.0 - dones[t + 1]
            nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
        advantages[t] = lastgaelam
    returns = advantages + values
    return advantages, returns


def ppo_loss(agent, obs, actions, old_logprobs, advantages, returns, clip_coef=0.2, ent_coef=0.01, vf_coef=0.5):
    _, newlogprob, entropy, newvalue = agent.get_action_and_value(obs, actions)
    logratio = newlogprob - old_logprobs
    ratio = logratio.exp()
    approx_kl = ((ratio - 1) - logratio).mean()
    mb_adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    pg_loss1 = -mb_adv * ratio
    pg_loss2 = -mb_adv * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
    pg_loss = torch.max(pg_loss1, pg_loss2).mean()
    v_loss = 0.5 * ((newvalue - returns) ** 2).mean()
    entropy_loss = entropy.mean()
    loss = pg_loss - ent_coef * entropy_loss + vf_coef * v_loss
    return loss, approx_kl


def rollout(agent, num_steps, num_envs, obs_dim, act_shape):
    obs = torch.zeros((num_steps, num_envs, obs_dim))
    actions = torch.zeros((num_steps, num_envs) + act_shape)
    logprobs = torch.zeros((num_steps, num_envs))
    rewards = torch.randn((num_steps, num_envs))
    dones = torch.zeros((num_steps, num_envs))
    values = torch.zeros((num_steps, num_envs))
    next_obs = torch.randn(num_envs, obs_dim)
    with torch.no_grad():
        for step in range(num_steps):
            obs[step] = next_obs
            action, logprob, _, value = agent.get_action_and_value(next_obs)
            actions[step] = action
            logprobs[step] = logprob
            values[step] = value
            next_obs = torch.randn(num_envs, obs_dim)
        next_value = agent.get_value(next_obs)
    return obs, actions, logprobs, rewards, dones, values, next_value


if __name__ == "__main__":
    num_steps, num_envs, obs_dim = 8, 4, 6
    disc = ActorCritic(obs_dim, act_dim=3, hidden=32, continuous=False)
    obs, actions, logprobs, rewards, dones, values, next_value = rollout(disc, num_steps, num_envs, obs_dim, ())
    next_done = torch.zeros(num_envs)
    advantages, returns = compute_gae(rewards, values, dones, next_value, next_done)
    b_obs = obs.reshape(-1, obs_dim)
    b_actions = actions.reshape(-1).long()
    loss_d, kl_d = ppo_loss(disc, b_obs, b_actions, logprobs.reshape(-1), advantages.reshape(-1), returns.reshape(-1))
    loss_d.backward()

    cont = ActorCritic(obs_dim, act_dim=2, hidden=32, continuous=True)
    c_obs, c_actions, c_logprobs, c_rewards, c_dones, c_values, c_next_value = rollout(cont, num_steps, num_envs, obs_dim, (2,))
    c_adv, c_ret = compute_gae(c_rewards, c_values, c_dones, c_next_value, next_done, gamma=0.98)
    loss_c, kl_c = ppo_loss(cont, c_obs.reshape(-1, obs_dim), c_actions.reshape(-1, 2), c_logprobs.reshape(-1),
                            c_adv.reshape(-1), c_ret.reshape(-1))
    loss_c.backward()
    log_std_grad = cont.log_std.grad
