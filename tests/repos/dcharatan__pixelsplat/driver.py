# Runs pixelSplat's epipolar encoder pieces (geometry, epipolar sampler and
# transformer, monocular depth predictor, distributions, covariances) with
# small sizes. pixelSplat's main.py type-checks every function of `src` at run
# time (jaxtyping's install_import_hook with beartype); the oracle loads the
# targets itself, so the same decorator, jaxtyped(typechecker=beartype), is
# put on every top-level function, method and dataclass of `src` after import
# (nested functions stay unchecked). `src/model/encoder/__init__.py` imports
# the whole model (torchvision, e3nn, the dataset code): its sub-packages are
# reached through a bare package instead, as none of them needs it.
import dataclasses
import inspect
import os
import sys
import types

import torch
from beartype import beartype
from jaxtyping import jaxtyped
from omegaconf import OmegaConf
from oracle_driver_api import SRC_ROOT, variant

_encoder = types.ModuleType("src.model.encoder")
_encoder.__path__ = [os.path.join(SRC_ROOT, "src", "model", "encoder")]
sys.modules["src.model.encoder"] = _encoder

from src.geometry import epipolar_lines, projection
from src.global_cfg import set_cfg
from src.misc import discrete_probability_distribution, heterogeneous_pairings
from src.model.encoder.common import gaussians, sampler
from src.model.encoder.epipolar import conversions, distribution, distribution_sampler
from src.model.encoder.epipolar import depth_predictor_monocular, epipolar_sampler, epipolar_transformer
from src.model.encoder.epipolar import image_self_attention
from src.model.encodings import positional_encoding


def _typecheck_everything():
    def check(fn):
        return jaxtyped(fn, typechecker=beartype)

    mods = [m for n, m in list(sys.modules.items()) if n.startswith("src.") and m is not None]
    done = {}
    for m in mods:
        for name, obj in list(vars(m).items()):
            if getattr(obj, "__module__", None) != m.__name__:
                continue
            if inspect.isfunction(obj):
                done[obj] = check(obj)
            elif inspect.isclass(obj) and obj not in done:
                done[obj] = obj
                for k, v in list(vars(obj).items()):
                    if inspect.isfunction(v) or isinstance(v, (staticmethod, classmethod, property)):
                        setattr(obj, k, check(v))
                if dataclasses.is_dataclass(obj):
                    jaxtyped(obj, typechecker=beartype)
    for m in mods:
        for name, obj in list(vars(m).items()):
            if inspect.isfunction(obj) and obj in done:
                setattr(m, name, done[obj])


_typecheck_everything()

if __name__ == "__main__":
    b, v, c, h, w = 1, 2, 16, 8, 8
    set_cfg(OmegaConf.create({"dataset": {"view_sampler": {"num_context_views": v}}}))
    features = torch.randn(b, v, c, h, w)
    extrinsics = torch.randn(b, v, 4, 4)
    intrinsics = torch.randn(b, v, 3, 3)
    near = torch.rand(b, v)
    far = torch.rand(b, v) + 1

    # Geometry.
    points = torch.randn(5, 3)
    xy, valid = projection.project(points, extrinsics[0, 0], intrinsics[0, 0])
    rays = projection.sample_training_rays(torch.randn(b, v, 3, h, w), intrinsics, extrinsics, 7)
    fov = projection.get_fov(intrinsics[0])
    segments = epipolar_lines.project_rays(torch.randn(4, 3), torch.randn(4, 3), extrinsics[0, 0], intrinsics[0, 0])

    # Depths along epipolar lines: intersect_rays ends in torch.linalg.lstsq, whose
    # CPU kernel FakeTensorMode cannot run (DynamicOutputShapeException, a limit of
    # the oracle, not of the code): the lines up to it are recorded, and the
    # transformer below runs without the depth encoding (num_octaves=0).
    try:
        depths = epipolar_lines.get_depth(torch.randn(b, v, 1, 5, 1, 3), torch.randn(b, v, 1, 5, 1, 3),
                                          torch.rand(b, v, 1, 5, 4, 2), extrinsics[:, :, None, None, None],
                                          intrinsics[:, :, None, None, None])
    except torch._subclasses.fake_tensor.DynamicOutputShapeException:
        pass

    # The epipolar transformer (epipolar sampler, image self-attention).
    cfg = epipolar_transformer.EpipolarTransformerCfg(
        self_attention=image_self_attention.ImageSelfAttentionCfg(
            patch_size=2, num_octaves=2, num_layers=1, num_heads=2, d_token=16, d_dot=8, d_mlp=32),
        num_octaves=0, num_layers=1, num_heads=2, num_samples=4, d_dot=8, d_mlp=32, downscale=2)
    transformer = epipolar_transformer.EpipolarTransformer(cfg, c)
    out, sampling = transformer(features, extrinsics, intrinsics, near, far)

    # Monocular depth from per-ray features.
    predictor = depth_predictor_monocular.DepthPredictorMonocular(c, 8, 1, use_transmittance=False)
    ray_features = torch.randn(b, v, h * w, c)
    depth, opacity = predictor(ray_features, near, far, True, 3)
    with variant("transmittance"):
        predictor.use_transmittance = True
        depth, opacity = predictor(ray_features, near, far, False, 1)

    attention = distribution.Distribution(c, c, 32)
    weights = attention(torch.randn(b, 6, c), torch.randn(b, 9, c))
    with variant("force_last_token"):
        weights = attention(torch.randn(b, 6, c), torch.randn(b, 9, c), torch.ones(b, dtype=torch.bool))

    pdf = torch.rand(b, v, 10, 8)
    index, density = sampler.Sampler()(pdf, 1, True)
    gathered = sampler.Sampler().gather(index, pdf)

    covariance = gaussians.build_covariance(torch.rand(b, v, 6, 3), torch.randn(b, v, 6, 4))
