# Runs nerfstudio's field components (positional, Fourier, hash, TensoRF,
# triplane, K-planes and SH encodings, the torch MLP, field heads), the ray
# containers (RayBundle -> RaySamples -> Frustums -> Gaussians) and the
# losses that need no data-dependent branch, with small sizes, torch
# implementations only (no tiny-cuda-nn). nerfstudio does not type-check at
# run time. `nerfstudio.utils.math` imports `nerfstudio.data.scene_box`,
# which imports `viser.transforms` (the web viewer) for a method no target
# calls: a bare `viser.transforms` stands in for it.
import sys
import types

_viser = types.ModuleType("viser")
_viser.transforms = types.ModuleType("viser.transforms")
sys.modules.setdefault("viser", _viser)
sys.modules.setdefault("viser.transforms", _viser.transforms)

import torch
from oracle_driver_api import variant

from nerfstudio.cameras.rays import RayBundle
from nerfstudio.field_components import encodings, field_heads, mlp
from nerfstudio.model_components import losses
from nerfstudio.utils import math as ns_math

if __name__ == "__main__":
    n, s = 6, 5
    positions = torch.rand(n, s, 3)

    nerf = encodings.NeRFEncoding(3, num_frequencies=4, min_freq_exp=0.0, max_freq_exp=3.0, include_input=True)
    encoded = nerf(positions)
    with variant("integrated"):
        encoded = nerf(positions, torch.rand(n, s, 3, 3))
    rff = encodings.RFFEncoding(3, num_frequencies=8, scale=10.0)
    encoded = rff(positions)
    with variant("integrated"):
        encoded = rff(positions, torch.rand(n, s, 3, 3))
    scaled = encodings.ScalingAndOffset(3, 2.0, 1.0)(positions)
    same = encodings.Identity(3)(positions)
    hashed = encodings.HashEncoding(num_levels=4, min_res=4, max_res=32, log2_hashmap_size=8,
                                    features_per_level=2, implementation="torch")(positions)
    cp = encodings.TensorCPEncoding(resolution=16, num_components=4)(positions)
    vm = encodings.TensorVMEncoding(resolution=16, num_components=4)(positions)
    triplane = encodings.TriplaneEncoding(resolution=16, num_components=4)(positions)
    with variant("product"):
        triplane = encodings.TriplaneEncoding(resolution=16, num_components=4, reduce="product")(positions)
    kplanes = encodings.KPlanesEncoding(resolution=(16, 16, 16), num_components=4)(positions)
    with variant("time"):
        kplanes = encodings.KPlanesEncoding(resolution=(16, 16, 16, 8), num_components=4,
                                            reduce="sum")(torch.rand(n, s, 4))
    sh = encodings.SHEncoding(levels=3)(positions)

    net = mlp.MLP(in_dim=hashed.shape[-1], num_layers=3, layer_width=32, out_dim=8, skip_connections=(1,),
                  implementation="torch")
    hidden = net(hashed)
    density = field_heads.DensityFieldHead(in_dim=8)(hidden)
    rgb = field_heads.RGBFieldHead(in_dim=8)(hidden)
    sh_rgb = field_heads.SHFieldHead(in_dim=8, levels=2)(hidden)
    normals = field_heads.PredNormalsFieldHead(in_dim=8)(hidden)
    semantics = field_heads.SemanticFieldHead(num_classes=5, in_dim=8)(hidden)

    bundle = RayBundle(origins=torch.rand(n, 3), directions=torch.rand(n, 3), pixel_area=torch.rand(n, 1),
                       camera_indices=torch.zeros(n, 1, dtype=torch.long))
    starts = torch.rand(n, s, 1)
    ray_samples = bundle.get_ray_samples(starts, starts + 0.1, spacing_starts=starts, spacing_ends=starts + 0.1)
    gaussians = ray_samples.frustums.get_gaussian_blob()
    with variant("integrated"):
        encoded = nerf(gaussians.mean, gaussians.cov)
    weights = ray_samples.get_weights(density)
    alpha_weights, transmittance = ray_samples.get_weights_and_transmittance_from_alphas(torch.rand(n, s, 1))
    cylinders = ns_math.cylinder_to_gaussian(torch.rand(n, 3), torch.rand(n, 3), torch.rand(n, 1),
                                             torch.rand(n, 1), torch.rand(n, 1))
    t_min, t_max = ns_math.intersect_aabb(torch.rand(n, 3), torch.rand(n, 3), torch.rand(6))
    unit = ns_math.safe_normalize(positions)
    distances = ns_math.columnwise_squared_l2_distance(torch.rand(3, 7), torch.rand(3, 7))
    quats = ns_math.random_quat_tensor(4)

    distortion = losses.nerfstudio_distortion_loss(ray_samples, weights=weights)
    interlevel = losses.interlevel_loss([weights, weights], [ray_samples, ray_samples])
    mipnerf_distortion = losses.distortion_loss([weights], [ray_samples])
    orientation = losses.orientation_loss(weights, normals, bundle.directions)
    pred_normal = losses.pred_normal_loss(weights, normals, normals)
    sigma = torch.tensor(0.01)
    depth = losses.depth_loss(weights, ray_samples, torch.rand(n, 1), torch.rand(n, 1), sigma,
                              torch.rand(n, 1), False, losses.DepthLossType.DS_NERF)
    with variant("urf"):
        # Normal(...) checks its scale's values, which fake tensors do not have.
        torch.distributions.Distribution.set_default_validate_args(False)
        depth = losses.depth_loss(weights, ray_samples, torch.rand(n, 1), torch.rand(n, 1), sigma,
                                  torch.rand(n, 1), True, losses.DepthLossType.URF)
    normal = losses.monosdf_normal_loss(torch.rand(n, 3), torch.rand(n, 3))
    tv = losses.tv_loss(torch.rand(3, 4, 16, 16))
