//! The op registry's table: the `OpDef` of every op the rule table knows, tensor creation included, by family.

use super::registry::{FactoryRule, Family, MethodRule, NumberFirst, OpDef, OpRule, UnreadArgs};
use super::{
    calculus, complex, decompositions, einsum, join, linalg, matrices, reduction, select, solvers,
    view,
};
use crate::rules::creation::{factories, methods};

const fn same(name: &'static str) -> OpDef {
    OpDef::new(name, Family::Same)
}

const fn to_float(name: &'static str) -> OpDef {
    OpDef::new(name, Family::ToFloat)
}

const fn to_bool(name: &'static str) -> OpDef {
    OpDef::new(name, Family::ToBool)
}

/// The signatures of an elementwise op whose `other` may be a tensor or a
/// number, as torch lists them when none matches.
const TENSOR_OTHER: &str = " * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other, *, Tensor out = None)";

/// `rsub`'s signatures.
const RSUB: &str = " * (Tensor input, Tensor other, *, Number alpha = 1)\n * (Tensor input, Number other, Number alpha = 1)";

const fn binary(name: &'static str) -> OpDef {
    OpDef::new(name, Family::Binary)
}

const fn compare(name: &'static str) -> OpDef {
    OpDef::new(name, Family::Compare)
}

const fn reduction(name: &'static str) -> OpDef {
    OpDef::new(name, Family::Reduction)
}

const fn along_dim(name: &'static str, rule: OpRule) -> OpDef {
    OpDef::ruled(name, Family::AlongDim, rule)
}

const fn view(name: &'static str, rule: OpRule) -> OpDef {
    OpDef::ruled(name, Family::View, rule)
}

const fn split(name: &'static str, rule: OpRule) -> OpDef {
    OpDef::ruled(name, Family::Split, rule)
}

const fn join(name: &'static str) -> OpDef {
    OpDef::new(name, Family::Join)
}

const fn select(name: &'static str, rule: OpRule) -> OpDef {
    OpDef::ruled(name, Family::Select, rule)
}

const fn linalg(name: &'static str, rule: OpRule) -> OpDef {
    OpDef::ruled(name, Family::Linalg, rule)
}

const fn complex(name: &'static str, rule: OpRule) -> OpDef {
    OpDef::ruled(name, Family::Complex, rule)
}

const fn functional(name: &'static str) -> OpDef {
    OpDef::new(name, Family::Functional)
}

const fn factory(name: &'static str, rule: FactoryRule) -> OpDef {
    OpDef::factory(name, Family::Factory, rule)
}

const fn factory_like(name: &'static str) -> OpDef {
    OpDef::factory(name, Family::FactoryLike, factories::like)
}

const fn new_tensor(name: &'static str, rule: MethodRule) -> OpDef {
    OpDef::tensor_method(name, Family::NewTensor, rule)
}

const fn metadata(name: &'static str, rule: MethodRule) -> OpDef {
    OpDef::tensor_method(name, Family::Metadata, rule)
}

const fn convert(name: &'static str, rule: MethodRule) -> OpDef {
    OpDef::tensor_method(name, Family::Convert, rule)
}

const fn bookkeeping(name: &'static str, rule: MethodRule) -> OpDef {
    OpDef::tensor_method(name, Family::Bookkeeping, rule)
}

/// Every op, by family. After the family, what an entry says beyond it:
/// `unranked_keeps_dtype`, `keeps_any_shape`, `negative_dim_shows_rank`,
/// `reshapes_in_place`, `takes_cpu_scalars`, `sizes_follow` (see `OpDef`).
pub(super) static OPS: &[OpDef] = &[
    // Pointwise ops that keep their input's shape and dtype.
    same("neg"),
    same("positive"),
    same("abs"),
    same("relu"),
    same("relu6"),
    same("gelu"),
    same("silu"),
    same("mish"),
    same("hardswish"),
    same("hardsigmoid"),
    same("elu"),
    same("selu"),
    same("celu"),
    same("leaky_relu"),
    same("hardtanh"),
    same("softplus"),
    same("softsign"),
    same("tanhshrink"),
    same("threshold"),
    same("floor"),
    same("ceil"),
    same("round"),
    same("trunc"),
    same("frac"),
    same("sign"),
    same("clamp"),
    same("clip"),
    same("clamp_min"),
    same("clamp_max"),
    same("nan_to_num"),
    same("contiguous").keeps_any_shape(),
    same("clone").keeps_any_shape(),
    same("detach").keeps_any_shape(),
    same("dropout").keeps_any_shape(),
    same("alpha_dropout"),
    same("feature_alpha_dropout"),
    same("dropout1d"),
    same("dropout2d"),
    same("dropout3d"),
    same("square"),
    same("tril"),
    same("triu"),
    same("bitwise_not"),
    same("zero_"),
    same("fill_"),
    same("normal_"),
    same("uniform_"),
    same("bernoulli_"),
    same("exponential_"),
    same("random_"),
    same("flip"),
    same("fliplr"),
    same("flipud"),
    same("roll"),
    same("rot90_same"),
    same("cumsum_same"),
    same("masked_fill").keeps_any_shape(),
    same("masked_scatter"),
    same("index_fill"),
    same("index_add"),
    same("index_copy"),
    same("scatter"),
    same("scatter_add"),
    same("scatter_reduce"),
    same("index_put"),
    same("renorm"),
    same("glu_same"),
    same("requires_grad_").with_method(methods::requires_grad_),
    same("logit"),
    same("prelu"),
    same("rrelu"),
    same("copy_"),
    same("lerp"),
    same("addcmul"),
    same("addcdiv"),
    same("hardshrink"),
    same("softshrink"),
    same("conj"),
    same("resolve_conj"),
    same("resolve_neg"),
    same("fix"),
    same("negative"),
    same("absolute"),
    same("sgn"),
    // Pointwise ops whose integer inputs give floats.
    to_float("sigmoid"),
    to_float("tanh"),
    to_float("exp"),
    to_float("exp2"),
    to_float("expm1"),
    to_float("log"),
    to_float("log2"),
    to_float("log10"),
    to_float("log1p"),
    to_float("sqrt"),
    to_float("rsqrt"),
    to_float("sin"),
    to_float("cos"),
    to_float("tan"),
    to_float("asin"),
    to_float("acos"),
    to_float("atan"),
    to_float("sinh"),
    to_float("cosh"),
    to_float("asinh"),
    to_float("acosh"),
    to_float("atanh"),
    to_float("erf"),
    to_float("erfc"),
    to_float("erfinv"),
    to_float("reciprocal"),
    to_float("logsigmoid"),
    to_float("digamma"),
    to_float("lgamma"),
    to_float("i0"),
    to_float("sinc"),
    to_float("deg2rad"),
    to_float("rad2deg"),
    // Pointwise ops with a bool result.
    to_bool("isnan"),
    to_bool("isinf"),
    to_bool("isfinite"),
    to_bool("isposinf"),
    to_bool("isneginf"),
    to_bool("logical_not"),
    to_bool("signbit"),
    to_bool("isreal"),
    // Binary pointwise ops: broadcast and promote.
    binary("add"),
    binary("sub"),
    binary("subtract"),
    binary("mul"),
    binary("multiply"),
    binary("floor_divide"),
    binary("remainder"),
    binary("fmod").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    binary("pow"),
    binary("float_power"),
    binary("maximum").number_first(NumberFirst::NotTensor),
    binary("minimum").number_first(NumberFirst::NotTensor),
    binary("fmax").number_first(NumberFirst::NotTensor),
    binary("fmin").number_first(NumberFirst::NotTensor),
    binary("atan2").number_first(NumberFirst::NotTensor),
    binary("arctan2").number_first(NumberFirst::NotTensor),
    binary("hypot").number_first(NumberFirst::NotTensor),
    binary("bitwise_and"),
    binary("bitwise_or"),
    binary("bitwise_xor"),
    binary("bitwise_left_shift"),
    binary("bitwise_right_shift"),
    binary("copysign").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    binary("xlogy"),
    binary("rsub").number_first(NumberFirst::NoSignature(RSUB)),
    binary("heaviside").number_first(NumberFirst::NotTensor),
    binary("nextafter").number_first(NumberFirst::NotTensor),
    binary("ldexp").number_first(NumberFirst::NotTensor),
    // Comparisons and logical ops: broadcast, bool result.
    compare("eq").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    compare("ne").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    compare("lt").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    compare("le").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    compare("gt").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    compare("ge").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    compare("greater").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    compare("less").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    compare("greater_equal").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    compare("less_equal").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    compare("not_equal").number_first(NumberFirst::NoSignature(TENSOR_OTHER)),
    compare("logical_and").number_first(NumberFirst::NotTensor),
    compare("logical_or").number_first(NumberFirst::NotTensor),
    compare("logical_xor").number_first(NumberFirst::NotTensor),
    compare("isclose").number_first(NumberFirst::NotTensor),
    // True division: broadcast; integers give floats.
    OpDef::new("div", Family::Divide),
    OpDef::new("true_divide", Family::Divide),
    OpDef::new("divide", Family::Divide),
    // Reductions over the dims given.
    reduction("sum").negative_dim_shows_rank(),
    reduction("mean").negative_dim_shows_rank(),
    reduction("prod").negative_dim_shows_rank(),
    reduction("amax").negative_dim_shows_rank(),
    reduction("amin").negative_dim_shows_rank(),
    reduction("std").negative_dim_shows_rank(),
    reduction("var").negative_dim_shows_rank(),
    reduction("logsumexp").negative_dim_shows_rank(),
    reduction("all"),
    reduction("any"),
    reduction("count_nonzero"),
    reduction("nansum"),
    reduction("nanmean"),
    reduction("norm"),
    reduction("linalg_vector_norm"),
    reduction("linalg_norm"),
    reduction("std_mean"),
    reduction("var_mean"),
    // Along one dim: scans keep it, `argmax` drops it, `topk` shrinks it, `sort` adds the indices.
    along_dim("softmax", reduction::scan)
        .unranked_keeps_dtype()
        .keeps_any_shape(),
    along_dim("log_softmax", reduction::scan)
        .unranked_keeps_dtype()
        .keeps_any_shape(),
    along_dim("softmin", reduction::scan).keeps_any_shape(),
    along_dim("cumsum", reduction::scan).keeps_any_shape(),
    along_dim("cumprod", reduction::scan).keeps_any_shape(),
    along_dim("logcumsumexp", reduction::scan).keeps_any_shape(),
    along_dim("cummax", reduction::cumulative_extreme),
    along_dim("cummin", reduction::cumulative_extreme),
    along_dim("argmax", reduction::arg_extreme)
        .unranked_keeps_dtype()
        .negative_dim_shows_rank(),
    along_dim("argmin", reduction::arg_extreme).negative_dim_shows_rank(),
    along_dim("topk", reduction::topk).unranked_keeps_dtype(),
    along_dim("kthvalue", reduction::order_statistic),
    along_dim("aminmax", reduction::aminmax),
    along_dim("diff", calculus::diff),
    along_dim("trapezoid", calculus::trapezoid),
    along_dim("trapz", calculus::trapezoid),
    along_dim("cumulative_trapezoid", calculus::trapezoid),
    along_dim("gumbel_softmax", calculus::gumbel_softmax).keeps_any_shape(),
    along_dim("max", reduction::extreme)
        .unranked_keeps_dtype()
        .negative_dim_shows_rank(),
    along_dim("min", reduction::extreme)
        .unranked_keeps_dtype()
        .negative_dim_shows_rank(),
    along_dim("median", reduction::order_statistic),
    along_dim("mode", reduction::order_statistic),
    along_dim("nanmedian", reduction::order_statistic),
    along_dim("sort", reduction::sort).unranked_keeps_dtype(),
    along_dim("argsort", reduction::argsort),
    // Views and copies of the same elements in a new shape.
    view("view", view::view_or_reshape)
        .unranked_keeps_dtype()
        .sizes_follow(),
    view("reshape", view::view_or_reshape)
        .unranked_keeps_dtype()
        .sizes_follow(),
    view("view_as", view::view_as),
    view("reshape_as", view::view_as),
    view("expand_as", view::view_as),
    view("broadcast_as", view::view_as),
    view("flatten", view::flatten).unranked_keeps_dtype(),
    view("unflatten", view::unflatten).unranked_keeps_dtype(),
    view("squeeze", view::squeeze)
        .unranked_keeps_dtype()
        .reshapes_in_place(),
    view("unsqueeze", view::unsqueeze)
        .unranked_keeps_dtype()
        .reshapes_in_place(),
    view("permute", view::permute)
        .unranked_keeps_dtype()
        .sizes_follow(),
    view("transpose", view::transpose)
        .unranked_keeps_dtype()
        .negative_dim_shows_rank()
        .reshapes_in_place(),
    view("swapaxes", view::transpose)
        .negative_dim_shows_rank()
        .reshapes_in_place(),
    view("swapdims", view::transpose)
        .negative_dim_shows_rank()
        .reshapes_in_place(),
    view("t", view::matrix_transpose)
        .unranked_keeps_dtype()
        .reshapes_in_place(),
    view("__attr_T", view::matrix_transpose).unranked_keeps_dtype(),
    view("__attr_mT", view::matrix_transpose).unranked_keeps_dtype(),
    view("__attr_H", view::matrix_transpose),
    view("__attr_mH", view::matrix_transpose),
    view("adjoint", view::matrix_transpose),
    view("movedim", view::movedim).unranked_keeps_dtype(),
    view("moveaxis", view::movedim),
    view("expand", view::expand_to)
        .unranked_keeps_dtype()
        .sizes_follow(),
    view("broadcast_to", view::expand_to).sizes_follow(),
    view("repeat", view::repeat)
        .unranked_keeps_dtype()
        .sizes_follow(),
    view("tile", view::repeat).sizes_follow(),
    view("repeat_interleave", view::repeat_interleave),
    view("rot90", view::rot90),
    // One tensor into several.
    split("unbind", join::unbind)
        .unranked_keeps_dtype()
        .negative_dim_shows_rank(),
    split("split", join::split_sizes)
        .unranked_keeps_dtype()
        .negative_dim_shows_rank(),
    split("split_with_sizes", join::split_sizes),
    split("chunk", join::chunk)
        .unranked_keeps_dtype()
        .negative_dim_shows_rank(),
    split("tensor_split", join::tensor_split),
    split("hsplit", join::directional_split),
    split("vsplit", join::directional_split),
    split("dsplit", join::directional_split),
    // Several tensors into one.
    join("cat"),
    join("concat"),
    join("concatenate"),
    join("stack"),
    join("hstack"),
    join("vstack"),
    join("dstack"),
    join("row_stack"),
    join("column_stack"),
    // Ops that pick elements.
    select("narrow", select::narrow).unranked_keeps_dtype(),
    select("select", select::select).unranked_keeps_dtype(),
    select("gather", select::gather).unranked_keeps_dtype(),
    select("take_along_dim", select::gather),
    select("index_select", select::index_select).unranked_keeps_dtype(),
    select("where", select::where_).takes_cpu_scalars(),
    select("multinomial", select::multinomial),
    select("nonzero", select::nonzero),
    select("argwhere", select::nonzero),
    select("masked_select", select::masked_select),
    select("unique", select::unique),
    select("unique_consecutive", select::unique),
    select("bincount", select::bincount),
    select("one_hot", select::one_hot),
    // Linear algebra.
    linalg("matmul", linalg::matrix_product).unranked_keeps_dtype(),
    linalg("linalg_matmul", linalg::matrix_product).unranked_keeps_dtype(),
    linalg("mm", linalg::matrix_product),
    linalg("bmm", linalg::matrix_product),
    linalg("mv", linalg::matrix_product),
    linalg("dot", linalg::matrix_product),
    linalg("inner", linalg::inner),
    linalg("vdot", linalg::vdot),
    linalg("inner_vec", linalg::matrix_product),
    linalg("outer", linalg::outer),
    linalg("ger", linalg::outer),
    linalg("baddbmm", linalg::add_product),
    linalg("addmm", linalg::add_product),
    linalg("addbmm", linalg::add_product),
    linalg("addmv", linalg::add_product),
    linalg("einsum_operand", linalg::einsum_operand),
    linalg("diag_embed", matrices::diag_embed),
    linalg("diag", matrices::diag),
    linalg("diagonal", matrices::diagonal),
    linalg("linalg_diagonal", matrices::diagonal),
    linalg("addr", linalg::addr),
    linalg("linalg_solve", solvers::solve),
    linalg("linalg_solve_triangular", solvers::solve),
    linalg("linalg_lstsq", solvers::lstsq),
    linalg("linalg_lu_factor", solvers::lu),
    linalg("linalg_lu_factor_ex", solvers::lu),
    linalg("linalg_lu", solvers::lu),
    linalg("cov", reduction::covariance),
    linalg("tensordot", einsum::tensordot),
    linalg("block_diag", join::block_diag),
    select("searchsorted", reduction::sorted_positions),
    select("bucketize", reduction::sorted_positions),
    linalg("corrcoef", reduction::covariance),
    linalg("trace", matrices::trace),
    linalg("cdist", linalg::cdist),
    linalg("cosine_similarity", linalg::distance),
    linalg("pairwise_distance", linalg::distance),
    linalg("cross", linalg::cross),
    linalg("linalg_cross", linalg::cross),
    linalg("linalg_vecdot", linalg::vecdot),
    linalg("inverse", matrices::square),
    linalg("linalg_inv", matrices::square),
    linalg("linalg_inv_ex", matrices::square),
    linalg("linalg_tensorinv", matrices::tensorinv),
    linalg("matrix_exp", matrices::square),
    linalg("linalg_matrix_exp", matrices::square),
    linalg("det", matrices::determinant),
    linalg("linalg_det", matrices::determinant),
    linalg("logdet", matrices::determinant),
    linalg("slogdet", matrices::determinant),
    linalg("linalg_slogdet", matrices::determinant),
    linalg("svd", decompositions::svd),
    linalg("linalg_svd", decompositions::svd),
    linalg("linalg_svdvals", decompositions::svd),
    linalg("linalg_qr", decompositions::qr),
    linalg("linalg_eig", decompositions::eig),
    linalg("linalg_eigvals", decompositions::eig),
    linalg("linalg_eigh", decompositions::eig),
    linalg("linalg_eigvalsh", decompositions::eig),
    linalg("cholesky", decompositions::square_same),
    linalg("linalg_cholesky", decompositions::square_same),
    linalg("matrix_power", decompositions::square_same),
    linalg("linalg_matrix_power", decompositions::square_same),
    linalg("linalg_matrix_norm", decompositions::per_matrix),
    linalg("linalg_cond", decompositions::per_matrix),
    linalg("linalg_matrix_rank", decompositions::per_matrix),
    linalg("pinverse", decompositions::pinv),
    linalg("linalg_pinv", decompositions::pinv),
    // Complex views and transforms.
    complex("real", complex::part),
    complex("imag", complex::part),
    complex("polar", complex::from_pair),
    complex("complex", complex::from_pair),
    complex("view_as_complex", complex::view_as_complex),
    complex("view_as_real", complex::view_as_real),
    complex("stft", complex::stft),
    OpDef::new("einsum", Family::Einsum),
    OpDef::new("broadcast_tensors", Family::BroadcastTensors),
    OpDef::new("meshgrid", Family::Meshgrid),
    OpDef::new("linalg_multi_dot", Family::MultiDot),
    OpDef::new("chain_matmul", Family::MultiDot),
    // Functions under `torch` that are their `F.*` twin, argument for
    // argument. Not listed: twins whose arguments differ (`torch.batch_norm`,
    // `torch.embedding`, `torch.kl_div`'s integer reduction) or whose result
    // does (`torch.adaptive_max_pool1d` also returns the indices).
    functional("conv1d"),
    functional("conv2d"),
    functional("conv3d"),
    functional("conv_transpose1d"),
    functional("conv_transpose2d"),
    functional("conv_transpose3d"),
    functional("max_pool1d"),
    functional("max_pool2d"),
    functional("max_pool3d"),
    functional("avg_pool1d"),
    functional("adaptive_avg_pool1d"),
    functional("layer_norm"),
    functional("group_norm"),
    functional("rms_norm"),
    functional("pixel_shuffle"),
    functional("pixel_unshuffle"),
    // Ops without a shape rule whose in-place form reshapes `self`.
    OpDef::new("resize", Family::Unruled).reshapes_in_place(),
    OpDef::new("as_strided", Family::Unruled).reshapes_in_place(),
    // Factories under `torch` that make a tensor from their arguments.
    factory("zeros", factories::filled).unread_args(UnreadArgs::ShapeFirst { alone: true }),
    factory("ones", factories::filled).unread_args(UnreadArgs::ShapeFirst { alone: true }),
    factory("empty", factories::filled).unread_args(UnreadArgs::ShapeFirst { alone: true }),
    factory("rand", factories::filled).unread_args(UnreadArgs::ShapeFirst { alone: true }),
    factory("randn", factories::filled).unread_args(UnreadArgs::ShapeFirst { alone: true }),
    factory("full", factories::full).unread_args(UnreadArgs::ShapeFirst { alone: false }),
    factory("randint", factories::randint),
    factory("normal", factories::normal),
    factory("randperm", factories::randperm),
    factory("triu_indices", factories::triangle_indices),
    factory("tril_indices", factories::triangle_indices),
    factory("hann_window", factories::window),
    factory("hamming_window", factories::window),
    factory("blackman_window", factories::window),
    factory("bartlett_window", factories::window),
    factory("kaiser_window", factories::window),
    factory("arange", factories::arange),
    factory("linspace", factories::spaced),
    factory("logspace", factories::spaced),
    factory("eye", factories::eye),
    factory("tensor", factories::tensor).unread_args(UnreadArgs::Data),
    factory("as_tensor", factories::tensor).unread_args(UnreadArgs::Data),
    factory("FloatTensor", factories::legacy_typed),
    factory("DoubleTensor", factories::legacy_typed),
    factory("HalfTensor", factories::legacy_typed),
    factory("BFloat16Tensor", factories::legacy_typed),
    factory("LongTensor", factories::legacy_typed),
    factory("IntTensor", factories::legacy_typed),
    factory("ShortTensor", factories::legacy_typed),
    factory("CharTensor", factories::legacy_typed),
    factory("ByteTensor", factories::legacy_typed),
    factory("BoolTensor", factories::legacy_typed),
    factory("load", factories::from_outside),
    factory("from_numpy", factories::from_outside).unread_args(UnreadArgs::Data),
    // Factories of a tensor of their input's shape.
    factory_like("empty_like"),
    factory_like("zeros_like"),
    factory_like("ones_like"),
    factory_like("full_like"),
    factory_like("rand_like"),
    factory_like("randn_like"),
    factory_like("randint_like"),
    // Tensor methods that make a tensor of `self`'s dtype and device.
    new_tensor("new_zeros", methods::new_filled),
    new_tensor("new_ones", methods::new_filled),
    new_tensor("new_empty", methods::new_filled),
    new_tensor("new_full", methods::new_full),
    new_tensor("new_tensor", methods::new_tensor),
    // Tensor methods that read metadata, or values out to Python.
    metadata("size", methods::size),
    metadata("dim", methods::rank),
    metadata("ndimension", methods::rank),
    metadata("numel", methods::element_count),
    metadata("nelement", methods::element_count),
    metadata("is_floating_point", methods::is_floating_point),
    metadata("is_complex", methods::is_complex),
    metadata("is_contiguous", methods::unknown_bool),
    metadata("is_pinned", methods::unknown_bool),
    metadata("element_size", methods::unknown),
    metadata("get_device", methods::get_device),
    metadata("item", methods::item),
    metadata("tolist", methods::unknown),
    metadata("numpy", methods::unknown),
    // Tensor methods that cast or move `self`.
    convert("float", methods::cast),
    convert("double", methods::cast),
    convert("half", methods::cast),
    convert("bfloat16", methods::cast),
    convert("long", methods::cast),
    convert("int", methods::cast),
    convert("short", methods::cast),
    convert("char", methods::cast),
    convert("byte", methods::cast),
    convert("bool", methods::cast),
    convert("cpu", methods::cpu),
    convert("cuda", methods::cuda),
    convert("type_as", methods::type_as),
    convert("type", methods::type_),
    convert("to", methods::to),
    // Tensor methods of autograd and memory bookkeeping.
    bookkeeping("retain_grad", methods::returns_self),
    bookkeeping("share_memory_", methods::returns_self),
    bookkeeping("pin_memory", methods::returns_self),
    bookkeeping("backward", methods::returns_none),
    bookkeeping("register_hook", methods::returns_none),
];
