//! The functional registry's table: the `FunctionalDef` of every `F.*` function the analysis has a rule for.

use super::functional::{self as f, FunctionalDef, FunctionalRule};

/// An entry for a function with no spatial dims.
const fn function(name: &'static str, rule: FunctionalRule) -> FunctionalDef {
    FunctionalDef {
        name,
        rule,
        spatial: 0,
    }
}

/// An entry for a function over `n` spatial dims (`conv2d`: 2).
const fn spatial(n: usize, name: &'static str, rule: FunctionalRule) -> FunctionalDef {
    FunctionalDef {
        spatial: n,
        ..function(name, rule)
    }
}

/// Every `F.*` function with a rule.
pub(super) static FUNCTIONALS: &[FunctionalDef] = &[
    function("linear", f::linear),
    function("bilinear", f::bilinear),
    // Convolutions.
    spatial(1, "conv1d", f::conv),
    spatial(2, "conv2d", f::conv),
    spatial(3, "conv3d", f::conv),
    spatial(1, "conv_transpose1d", f::conv_transpose),
    spatial(2, "conv_transpose2d", f::conv_transpose),
    spatial(3, "conv_transpose3d", f::conv_transpose),
    // Pools.
    spatial(1, "max_pool1d", f::max_pool),
    spatial(2, "max_pool2d", f::max_pool),
    spatial(3, "max_pool3d", f::max_pool),
    spatial(1, "avg_pool1d", f::avg_pool),
    spatial(2, "avg_pool2d", f::avg_pool),
    spatial(3, "avg_pool3d", f::avg_pool),
    spatial(1, "adaptive_avg_pool1d", f::adaptive_avg_pool),
    spatial(2, "adaptive_avg_pool2d", f::adaptive_avg_pool),
    spatial(3, "adaptive_avg_pool3d", f::adaptive_avg_pool),
    spatial(1, "adaptive_max_pool1d", f::adaptive_max_pool),
    spatial(2, "adaptive_max_pool2d", f::adaptive_max_pool),
    spatial(3, "adaptive_max_pool3d", f::adaptive_max_pool),
    // Normalisation.
    function("layer_norm", f::layer_norm),
    function("rms_norm", f::rms_norm),
    function("normalize", f::normalize),
    function("batch_norm", f::batch_norm),
    function("group_norm", f::other_norm),
    function("instance_norm", f::other_norm),
    function("local_response_norm", f::other_norm),
    // Embeddings.
    function("embedding", f::embedding),
    // Pads, resizes and samples.
    function("pad", f::pad),
    function("interpolate", f::interpolate),
    function("upsample", f::interpolate),
    function("upsample_nearest", f::interpolate),
    function("upsample_bilinear", f::interpolate),
    function("pixel_shuffle", f::pixel_shuffle),
    function("pixel_unshuffle", f::pixel_shuffle),
    function("channel_shuffle", f::channel_shuffle),
    function("unfold", f::unfold),
    function("fold", f::fold),
    function("grid_sample", f::grid_sample),
    // Losses.
    function("cross_entropy", f::cross_entropy),
    function("nll_loss", f::cross_entropy),
    function("mse_loss", f::pointwise_loss),
    function("l1_loss", f::pointwise_loss),
    function("smooth_l1_loss", f::pointwise_loss),
    function("huber_loss", f::pointwise_loss),
    function("binary_cross_entropy", f::pointwise_loss),
    function("binary_cross_entropy_with_logits", f::pointwise_loss),
    function("kl_div", f::pointwise_loss),
    function("soft_margin_loss", f::pointwise_loss),
    function("poisson_nll_loss", f::elementwise_loss),
    function("hinge_embedding_loss", f::elementwise_loss),
    function("multilabel_soft_margin_loss", f::elementwise_loss),
    function("gaussian_nll_loss", f::elementwise_loss),
    function("multi_margin_loss", f::multi_margin_loss),
    function("multilabel_margin_loss", f::multilabel_margin_loss),
    // Attention, gates and products.
    function(
        "scaled_dot_product_attention",
        f::scaled_dot_product_attention,
    ),
    function("glu", f::glu),
    function("mm", f::matmul),
    function("matmul", f::matmul),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_one_entry() {
        let mut seen = rustc_hash::FxHashSet::default();
        for def in FUNCTIONALS {
            assert!(seen.insert(def.name), "F.{} is listed twice", def.name);
        }
    }

    #[test]
    fn spatial_dims_are_the_names() {
        // A name ending in `1d`, `2d` or `3d` works on that many dims; no
        // other name works on any.
        for def in FUNCTIONALS {
            let named = match def.name.as_bytes() {
                [.., n @ b'1'..=b'3', b'd'] => (n - b'0') as usize,
                _ => 0,
            };
            assert_eq!(def.spatial, named, "F.{}", def.name);
        }
        assert_eq!(FunctionalDef::of("conv_transpose2d").unwrap().spatial, 2);
        // `F.relu` and `F.one_hot` run as the tensor ops of their names.
        assert!(FunctionalDef::of("relu").is_none());
        assert!(FunctionalDef::of("one_hot").is_none());
    }
}
