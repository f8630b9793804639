# Neural ODE on 2-D spiral data with hand-written fixed-step solvers: the
# dynamics f(t, z) is a small MLP that also sees t, Euler and RK4 steps are
# plain Python functions, and the integrator loops over torch.linspace time
# points, collecting states in a list and stacking them to [T, B, D].
import torch
import torch.nn as nn
import torch.nn.functional as F


class ODEFunc(nn.Module):
    def __init__(self, dim=2, hidden=32, time_dependent=True):
        super().__init__()
        self.time_dependent = time_dependent
        in_dim = dim + 1 if time_dependent else dim
        self.net = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.Tanh(),
            nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, dim),
        )
        self.nfe = 0

    def forward(self, t, z):
        self.nfe += 1
        if self.time_dependent:
            tt = t.expand(z.shape[0], 1)
            z = torch.cat([z, tt], dim=-1)
        return self.net(z)


def euler_step(f, t, dt, z):
    return z + dt * f(t, z)


def rk4_step(f, t, dt, z):
    k1 = f(t, z)
    k2 = f(t + dt / 2, z + dt * k1 / 2)
    k3 = f(t + dt / 2, z + dt * k2 / 2)
    k4 = f(t + dt, z + dt * k3)
    return z + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6


STEPPERS = {"euler": euler_step, "rk4": rk4_step}


def odeint(f, z0, t, method="rk4"):
    step = STEPPERS[method]
    states = [z0]
    z = z0
    for i in range(t.shape[0] - 1):
        t0, t1 = t[i], t[i + 1]
        dt = t1 - t0
        z = step(f, t0.reshape(1, 1), dt, z)
        states.append(z)
    return torch.stack(states, dim=0)


class LatentODE(nn.Module):
    def __init__(self, obs_dim=2, latent=4, hidden=32):
        super().__init__()
        self.enc = nn.GRU(obs_dim + 1, hidden, batch_first=True)
        self.to_z = nn.Linear(hidden, 2 * latent)
        self.func = ODEFunc(latent, hidden)
        self.dec = nn.Linear(latent, obs_dim)

    def forward(self, obs, ts, method="euler"):
        # obs: [B, T, D], ts: [T]; encode backwards in time
        B, T, _ = obs.shape
        t_feat = ts.view(1, T, 1).expand(B, T, 1)
        rev = torch.cat([obs, t_feat], dim=-1).flip(1)
        _, h = self.enc(rev)
        stats = self.to_z(h[-1])
        mu, logvar = stats.chunk(2, dim=-1)
        z0 = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        zs = odeint(self.func, z0, ts, method=method)        # [T, B, latent]
        pred = self.dec(zs).permute(1, 0, 2)                 # [B, T, D]
        kl = -0.5 * torch.sum(1 + logvar - mu ** 2 - logvar.exp(), dim=-1)
        return pred, kl


if __name__ == "__main__":
    func = ODEFunc(dim=2, hidden=16)
    z0 = torch.randn(8, 2)
    t = torch.linspace(0.0, 1.0, 6)
    traj_euler = odeint(func, z0, t, method="euler")
    traj_rk4 = odeint(func, z0, t, method="rk4")
    final = traj_rk4[-1]
    auto = ODEFunc(dim=3, hidden=8, time_dependent=False)
    with torch.no_grad():
        traj3 = odeint(auto, torch.randn(5, 3), torch.linspace(0, 2, 11), method="euler")
    model = LatentODE(obs_dim=2, latent=4)
    obs = torch.randn(6, 10, 2)
    ts = torch.linspace(0.0, 3.0, 10)
    pred, kl = model(obs, ts)
    recon = F.mse_loss(pred, obs, reduction="none").sum(dim=(1, 2))
    elbo = -(recon + kl).mean()
    nfe = func.nfe
