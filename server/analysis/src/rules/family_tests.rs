//! Unit tests of each rule family, run on a `TestMeta`: no interpreter, no source.
//!
//! The golden suite checks the rules against torch case by case through the
//! whole analysis; these call the meta functions as torch's meta
//! registrations are called, with fake tensors and arguments only, so a
//! rule that reached for interpreter state would not compile here. Every
//! expected shape below is torch 2.15's under FakeTensorMode, and every
//! message is eager torch's, the words a user's traceback shows (which the
//! golden suite records too).

use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use super::call_torch;
use super::meta::testing::TestMeta;
use crate::code::Code;
use crate::value::Value;

/// `torch.<path>(args, **kwargs)` on a fresh `TestMeta`: the result as
/// printed and what was reported.
fn run(
    path: &str,
    args: impl FnOnce(&mut TestMeta) -> (Vec<Value>, Vec<(&'static str, Value)>),
) -> (String, Vec<(Code, String)>) {
    let mut meta = TestMeta::new();
    let (args, kwargs) = args(&mut meta);
    let kwargs = kwargs.into_iter().map(|(k, v)| (Rc::from(k), v)).collect();
    let result = call_torch(&mut meta, path, args, kwargs, TextRange::new(0, 1));
    (meta.shown(&result), meta.reports)
}

/// The shape torch gives, with nothing reported.
fn shape(
    path: &str,
    args: impl FnOnce(&mut TestMeta) -> (Vec<Value>, Vec<(&'static str, Value)>),
) -> String {
    let (shown, reports) = run(path, args);
    assert!(reports.is_empty(), "{path}: {reports:?}");
    shown
}

/// The code and the start of the message torch raises with.
fn raises(
    path: &str,
    args: impl FnOnce(&mut TestMeta) -> (Vec<Value>, Vec<(&'static str, Value)>),
) -> (Code, String) {
    let (_, reports) = run(path, args);
    assert_eq!(reports.len(), 1, "{path}: {reports:?}");
    reports.into_iter().next().unwrap()
}

fn int(n: i64) -> Value {
    Value::int(n)
}

mod pointwise {
    use super::*;

    #[test]
    fn broadcasts_from_the_last_dim() {
        let got = shape("torch.add", |m| {
            (vec![m.tensor(&[4, 1, 3]), m.tensor(&[5, 1])], vec![])
        });
        assert_eq!(got, "[4, 5, 3]");
    }

    #[test]
    fn a_number_first_divides_as_a_tensor() {
        let got = shape("torch.divide", |m| {
            (vec![int(2), m.tensor(&[3, 1])], vec![])
        });
        assert_eq!(got, "[3, 1]");
    }

    #[test]
    fn clashing_sizes_raise_torchs_message() {
        let (code, message) = raises("torch.mul", |m| {
            (vec![m.tensor(&[2, 3]), m.tensor(&[4])], vec![])
        });
        assert_eq!(code, Code::BroadcastShape);
        assert_eq!(
            message,
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
        );
    }

    #[test]
    fn symbols_meet_by_unification() {
        let got = shape("torch.add", |m| {
            (vec![m.tensor(&[-1, 8]), m.tensor(&[8])], vec![])
        });
        assert_eq!(got, "[s1, 8]");
    }
}

mod reduction {
    use super::*;

    #[test]
    fn sum_over_a_dim_drops_it_unless_kept() {
        let dropped = shape("torch.sum", |m| {
            (vec![m.tensor(&[2, 3, 4]), int(1)], vec![])
        });
        assert_eq!(dropped, "[2, 4]");
        let kept = shape("torch.sum", |m| {
            (
                vec![m.tensor(&[2, 3, 4]), int(-1)],
                vec![("keepdim", Value::Bool(Some(true)))],
            )
        });
        assert_eq!(kept, "[2, 3, 1]");
    }

    #[test]
    fn a_dim_out_of_range_raises() {
        let (code, message) = raises("torch.mean", |m| (vec![m.tensor(&[2, 3]), int(2)], vec![]));
        assert_eq!(code, Code::DimOutOfRange);
        assert_eq!(
            message,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
        );
    }
}

mod along_dim {
    use super::*;

    #[test]
    fn softmax_keeps_the_shape() {
        let got = shape("torch.softmax", |m| {
            (vec![m.tensor(&[2, 7]), int(-1)], vec![])
        });
        assert_eq!(got, "[2, 7]");
    }

    #[test]
    fn topk_gives_values_and_indices() {
        let got = shape("torch.topk", |m| (vec![m.tensor(&[5, 10]), int(3)], vec![]));
        assert_eq!(got, "([5, 3], [5, 3])");
    }
}

mod view {
    use super::*;

    #[test]
    fn view_infers_the_minus_one() {
        let got = shape("torch.reshape", |m| {
            (
                vec![m.tensor(&[2, 3, 4]), Value::tuple(vec![int(6), int(-1)])],
                vec![],
            )
        });
        assert_eq!(got, "[6, 4]");
    }

    #[test]
    fn flatten_multiplies_the_range() {
        let got = shape("torch.flatten", |m| {
            (vec![m.tensor(&[2, 3, 4, 5]), int(1)], vec![])
        });
        assert_eq!(got, "[2, 60]");
    }

    #[test]
    fn a_size_of_other_numel_raises() {
        let (code, message) = raises("torch.reshape", |m| {
            (
                vec![m.tensor(&[2, 3]), Value::tuple(vec![int(4), int(2)])],
                vec![],
            )
        });
        assert_eq!(code, Code::ViewSize);
        assert_eq!(message, "shape '[4, 2]' is invalid for input of size 6");
    }

    #[test]
    fn transpose_swaps_two_dims() {
        let got = shape("torch.transpose", |m| {
            (vec![m.tensor(&[2, 3, 4]), int(0), int(2)], vec![])
        });
        assert_eq!(got, "[4, 3, 2]");
    }
}

mod split_and_join {
    use super::*;

    #[test]
    fn cat_adds_the_joined_dim() {
        let got = shape("torch.cat", |m| {
            let parts = Value::list(vec![m.tensor(&[2, 3]), m.tensor(&[2, 5])]);
            (vec![parts, int(1)], vec![])
        });
        assert_eq!(got, "[2, 8]");
    }

    #[test]
    fn stack_adds_a_dim() {
        let got = shape("torch.stack", |m| {
            let parts = Value::list(vec![m.tensor(&[2, 3]), m.tensor(&[2, 3])]);
            (vec![parts], vec![])
        });
        assert_eq!(got, "[2, 2, 3]");
    }

    #[test]
    fn cat_of_other_sizes_raises() {
        let (code, message) = raises("torch.cat", |m| {
            let parts = Value::list(vec![m.tensor(&[2, 3]), m.tensor(&[4, 5])]);
            (vec![parts, int(1)], vec![])
        });
        assert_eq!(code, Code::CatShape);
        assert!(
            message.starts_with("Sizes of tensors must match except in dimension 1"),
            "{message}"
        );
    }
}

mod select {
    use super::*;

    #[test]
    fn select_drops_the_dim() {
        let got = shape("torch.select", |m| {
            (vec![m.tensor(&[2, 3, 4]), int(1), int(0)], vec![])
        });
        assert_eq!(got, "[2, 4]");
    }

    #[test]
    fn narrow_keeps_the_length() {
        let got = shape("torch.narrow", |m| {
            (vec![m.tensor(&[2, 9]), int(1), int(2), int(4)], vec![])
        });
        assert_eq!(got, "[2, 4]");
    }
}

mod linalg {
    use super::*;

    #[test]
    fn matmul_broadcasts_the_batch() {
        let got = shape("torch.matmul", |m| {
            (vec![m.tensor(&[5, 1, 2, 3]), m.tensor(&[4, 3, 7])], vec![])
        });
        assert_eq!(got, "[5, 4, 2, 7]");
    }

    #[test]
    fn mismatched_inner_sizes_raise() {
        let (code, message) = raises("torch.mm", |m| {
            (vec![m.tensor(&[2, 3]), m.tensor(&[4, 5])], vec![])
        });
        assert_eq!(code, Code::MatmulShape);
        assert_eq!(
            message,
            "mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"
        );
    }

    #[test]
    fn cdist_pairs_the_rows() {
        let got = shape("torch.cdist", |m| {
            (vec![m.tensor(&[6, 3]), m.tensor(&[8, 3])], vec![])
        });
        assert_eq!(got, "[6, 8]");
    }
}

mod complex {
    use super::*;

    #[test]
    fn view_as_real_needs_a_complex_input() {
        let (code, message) = raises("torch.view_as_real", |m| (vec![m.tensor(&[4])], vec![]));
        assert_eq!(code, Code::DtypeUnsupported);
        assert_eq!(
            message,
            "view_as_real is only supported for complex tensors"
        );
    }
}

mod creation {
    use super::*;

    #[test]
    fn factories_take_sizes_as_varargs_or_a_tuple() {
        assert_eq!(
            shape("torch.zeros", |_| (vec![int(2), int(3)], vec![])),
            "[2, 3]"
        );
        let tuple = shape("torch.ones", |_| {
            (vec![Value::tuple(vec![int(4), int(1)])], vec![])
        });
        assert_eq!(tuple, "[4, 1]");
    }

    #[test]
    fn arange_counts_its_steps() {
        assert_eq!(
            shape("torch.arange", |_| (vec![int(0), int(10), int(3)], vec![])),
            "[4]"
        );
    }
}

mod nn_functional {
    use super::*;

    #[test]
    fn conv2d_shrinks_by_the_kernel() {
        let got = shape("torch.nn.functional.conv2d", |m| {
            (
                vec![m.tensor(&[1, 3, 32, 32]), m.tensor(&[8, 3, 5, 5])],
                vec![],
            )
        });
        assert_eq!(got, "[1, 8, 28, 28]");
    }

    #[test]
    fn linear_maps_the_last_dim() {
        let got = shape("torch.nn.functional.linear", |m| {
            (vec![m.tensor(&[4, 7, 16]), m.tensor(&[32, 16])], vec![])
        });
        assert_eq!(got, "[4, 7, 32]");
    }

    #[test]
    fn a_linear_of_the_wrong_width_raises() {
        let (code, message) = raises("torch.nn.functional.linear", |m| {
            (vec![m.tensor(&[4, 10]), m.tensor(&[32, 16])], vec![])
        });
        assert_eq!(code, Code::LinearShape);
        assert!(message.contains("(4x10 and 16x32)"), "{message}");
    }

    #[test]
    fn pooling_halves() {
        let got = shape("torch.nn.functional.max_pool2d", |m| {
            (vec![m.tensor(&[2, 3, 8, 9]), int(2)], vec![])
        });
        assert_eq!(got, "[2, 3, 4, 4]");
    }

    #[test]
    fn layer_norm_checks_the_normalized_shape() {
        let (code, message) = raises("torch.nn.functional.layer_norm", |m| {
            (
                vec![m.tensor(&[2, 5, 32]), Value::tuple(vec![int(16)])],
                vec![],
            )
        });
        assert_eq!(code, Code::LayerInput);
        assert!(message.starts_with("Given normalized_shape=[16], expected input with shape [*, 16], but got input of size[2, 5, 32]"), "{message}");
    }
}
