//! Data pipelines: a `DataLoader`'s batches, from the samples of its
//! dataset (a user `Dataset`, map-style or iterable, a `TensorDataset`, a
//! list, a `Subset`, a `ConcatDataset`, or one of torchvision's image
//! datasets through its transforms), collated as `default_collate` or the
//! loader's own `collate_fn` makes them.
//!
//! A dataset or a transform of torch's is kept as what it does when
//! used: a `Partial` of a path of its own (`torchvision.transforms.
//! Resize.__call__` with the settings it was made with; `torchvision.
//! datasets.MNIST.__getitem__` with its transforms), so that calling it,
//! indexing it and passing it on all go through the one call.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::super::Interp;
use crate::rules::Args;
use crate::rules::meta::Meta;
use crate::value::{DType, Kwargs, Partial, Shape, Value};

/// What indexing a dataset of torch's runs.
const GETITEM: &str = ".__getitem__";
/// What calling a transform runs.
const CALL: &str = ".__call__";

/// One of torchvision's image datasets: its PIL images' channels, and
/// height and width where all are of one size; the argument place of
/// `transform` (`target_transform` follows it), where it may be given by
/// position.
struct ImageDataset {
    name: &'static str,
    channels: i64,
    sizes: Option<(i64, i64)>,
    transform_place: Option<usize>,
}

const fn image_dataset(
    name: &'static str,
    channels: i64,
    sizes: Option<(i64, i64)>,
    transform_place: Option<usize>,
) -> ImageDataset {
    ImageDataset {
        name,
        channels,
        sizes,
        transform_place,
    }
}

const IMAGE_DATASETS: &[ImageDataset] = &[
    image_dataset("MNIST", 1, Some((28, 28)), Some(2)),
    image_dataset("FashionMNIST", 1, Some((28, 28)), Some(2)),
    image_dataset("KMNIST", 1, Some((28, 28)), Some(2)),
    image_dataset("EMNIST", 1, Some((28, 28)), None),
    image_dataset("QMNIST", 1, Some((28, 28)), None),
    image_dataset("CIFAR10", 3, Some((32, 32)), Some(2)),
    image_dataset("CIFAR100", 3, Some((32, 32)), Some(2)),
    image_dataset("SVHN", 3, Some((32, 32)), Some(2)),
    image_dataset("STL10", 3, Some((96, 96)), Some(3)),
    image_dataset("ImageFolder", 3, None, Some(1)),
    image_dataset("ImageNet", 3, None, None),
    image_dataset("LSUN", 3, None, Some(2)),
    // Its images are `image_size`, (3, 224, 224) unless given.
    image_dataset("FakeData", 3, Some((224, 224)), Some(3)),
];

/// torchvision's transforms the analysis follows, with the names of their
/// parameters in order (where a size or a setting that matters may be
/// given by position). Transforms that leave the sizes as they are take
/// no setting that matters.
const TRANSFORMS: &[(&str, &[&str])] = &[
    ("Compose", &["transforms"]),
    ("RandomApply", &["transforms", "p"]),
    ("ToTensor", &[]),
    ("PILToTensor", &[]),
    ("ToImage", &[]),
    ("ConvertImageDtype", &["dtype"]),
    ("ToDtype", &["dtype", "scale"]),
    ("Normalize", &["mean", "std", "inplace"]),
    (
        "Resize",
        &["size", "interpolation", "max_size", "antialias"],
    ),
    ("CenterCrop", &["size"]),
    (
        "RandomCrop",
        &["size", "padding", "pad_if_needed", "fill", "padding_mode"],
    ),
    (
        "RandomResizedCrop",
        &["size", "scale", "ratio", "interpolation", "antialias"],
    ),
    ("Grayscale", &["num_output_channels"]),
    ("Pad", &["padding", "fill", "padding_mode"]),
    ("Lambda", &["lambd"]),
    ("RandomRotation", &["degrees", "interpolation", "expand"]),
    ("RandomHorizontalFlip", &[]),
    ("RandomVerticalFlip", &[]),
    ("ColorJitter", &[]),
    ("RandomAffine", &[]),
    ("GaussianBlur", &[]),
    ("RandomGrayscale", &[]),
    ("RandomErasing", &[]),
    ("AutoAugment", &[]),
    ("RandAugment", &[]),
    ("TrivialAugmentWide", &[]),
    ("AugMix", &[]),
    ("RandomAutocontrast", &[]),
    ("RandomEqualize", &[]),
    ("RandomInvert", &[]),
    ("RandomPosterize", &[]),
    ("RandomSolarize", &[]),
    ("RandomAdjustSharpness", &[]),
    ("RandomPerspective", &[]),
];

/// An image on its way through a transform: a PIL image of these sizes
/// (no user code and no tensor op may see it), or any other value.
#[derive(Clone)]
enum Item {
    Pil {
        channels: Dim,
        height: Dim,
        width: Dim,
    },
    Value(Value),
}

/// A `Partial` of a path of its own, with settings by name.
fn bound(path: String, args: Vec<Value>, kwargs: Kwargs) -> Value {
    Value::Partial(Rc::new(Partial {
        function: Value::Path(Rc::from(path)),
        args,
        kwargs,
    }))
}

/// A transform's name, for a path of torchvision's transforms (v1 or v2).
fn transform_name(path: &str) -> Option<&str> {
    let rest = path
        .strip_prefix("torchvision.transforms.v2.")
        .or_else(|| path.strip_prefix("torchvision.transforms.transforms."))
        .or_else(|| path.strip_prefix("torchvision.transforms."))?;
    TRANSFORMS
        .iter()
        .find(|(name, _)| *name == rest)
        .map(|(name, _)| *name)
}

/// Whether `v` is a dataset of torch's (kept as what indexing it runs),
/// or a choice between such datasets.
pub(crate) fn is_dataset(v: &Value) -> bool {
    match v {
        Value::Partial(p) => matches!(&p.function, Value::Path(f) if f.ends_with(GETITEM)),
        Value::Either(items) => items.iter().all(is_dataset),
        _ => false,
    }
}

/// The name of `path` when it is one of `names` of `torch.utils.data`
/// (as the package exports it, or from its `dataset` module).
fn dataset_path<'a>(path: &str, names: &[&'a str]) -> Option<&'a str> {
    let rest = path
        .strip_prefix("torch.utils.data.dataset.")
        .or_else(|| path.strip_prefix("torch.utils.data."))?;
    names.iter().find(|n| **n == rest).copied()
}

impl Interp<'_> {
    /// A call of `torch.utils.data` or torchvision that this file
    /// follows; `None` for any other path.
    pub(super) fn data_call(
        &mut self,
        path: &str,
        args: &[Value],
        kwargs: &Kwargs,
        range: TextRange,
    ) -> Option<Value> {
        let call = Args::new(args.to_vec(), kwargs.clone());
        if path.ends_with("utils.data.DataLoader")
            || path.ends_with("utils.data.dataloader.DataLoader")
        {
            return Some(self.data_loader(&call, range));
        }
        if matches!(
            path,
            "torch.utils.data.TensorDataset" | "torch.utils.data.dataset.TensorDataset"
        ) {
            return Some(bound(
                format!("torch.utils.data.TensorDataset{GETITEM}"),
                args.to_vec(),
                Vec::new(),
            ));
        }
        // Datasets made of other datasets have their samples: a `Subset`
        // (or each part of a `random_split`) some of them, a
        // `ConcatDataset` any of its parts'.
        if let Some(name) = dataset_path(path, &["Subset", "ConcatDataset"]) {
            let Some(inner) = call.get(
                0,
                if name == "Subset" {
                    "dataset"
                } else {
                    "datasets"
                },
            ) else {
                return Some(Value::Unknown);
            };
            return Some(bound(
                format!("torch.utils.data.{name}{GETITEM}"),
                vec![inner.clone()],
                Vec::new(),
            ));
        }
        if dataset_path(path, &["random_split"]).is_some() {
            return Some(self.random_split(&call));
        }
        if let Some(name) = path.strip_suffix(GETITEM) {
            return Some(self.dataset_item(name, args, kwargs, range));
        }
        if let Some(name) = path.strip_suffix(CALL).and_then(transform_name) {
            let name = name.to_string();
            let item = match args.first() {
                Some(v) => Item::Value(v.clone()),
                None => return Some(Value::Unknown),
            };
            return Some(match self.transform(&name, kwargs, item, range) {
                Item::Value(v) => v,
                Item::Pil { .. } => Value::Unknown,
            });
        }
        if let Some(name) = path.strip_prefix("torchvision.datasets.")
            && let Some(dataset) = IMAGE_DATASETS.iter().find(|d| d.name == name)
        {
            let (name, place) = (dataset.name, dataset.transform_place);
            let mut settings: Kwargs = Vec::new();
            if name == "FakeData"
                && let Some(v) = call.get(1, "image_size")
            {
                settings.push((Rc::from("image_size"), v.clone()));
            }
            for (i, key) in ["transform", "target_transform"].into_iter().enumerate() {
                if let Some(v) = place.map_or_else(|| call.kw(key), |p| call.get(p + i, key)) {
                    settings.push((Rc::from(key), v.clone()));
                }
            }
            return Some(bound(
                format!("torchvision.datasets.{name}{GETITEM}"),
                Vec::new(),
                settings,
            ));
        }
        let name = transform_name(path)?;
        let params = TRANSFORMS.iter().find(|(n, _)| *n == name)?.1;
        let mut settings: Kwargs = Vec::new();
        for (i, key) in params.iter().enumerate() {
            if let Some(v) = call.get(i, key) {
                settings.push((Rc::from(*key), v.clone()));
            }
        }
        Some(bound(
            format!("torchvision.transforms.{name}{CALL}"),
            Vec::new(),
            settings,
        ))
    }

    /// `DataLoader(dataset, batch_size=1, ..., collate_fn=None,
    /// drop_last=False)`: batches of unknown number, each made of samples
    /// like the dataset's. Its first dim is the batch size where every
    /// batch has it (`drop_last=True`, or one sample a batch); otherwise
    /// the last batch may be smaller, and the size is a name of its own.
    fn data_loader(&mut self, call: &Args, range: TextRange) -> Value {
        let Some(dataset) = call.get(0, "dataset") else {
            return Value::Unknown;
        };
        let sample = self.dataset_sample(dataset, range);
        let batch_size = call.get(1, "batch_size").cloned().unwrap_or(Value::int(1));
        if batch_size.is_none() {
            return match sample {
                Value::Unknown => Value::Unknown,
                sample => self.loader(sample, dataset),
            };
        }
        let by_sampler = call.get(4, "batch_sampler").is_some_and(|v| !v.is_none());
        let drop_last = matches!(call.get(8, "drop_last"), Some(Value::Bool(Some(true))));
        let size = self.as_dim(&batch_size).filter(|_| !by_sampler);
        let batch = match size {
            Some(d) if d.as_const() == Some(1) || drop_last => d,
            _ => self.env.weak_symbol("N"),
        };
        let collate_fn = call.get(6, "collate_fn").filter(|v| !v.is_none());
        let made = match collate_fn {
            Some(f) => {
                let samples = Value::Many(Rc::new(sample), Some(batch));
                self.call_value(&f.clone(), vec![samples], Vec::new(), range)
            }
            None => crate::rules::collate_alike(self, &sample, &batch),
        };
        match made {
            Value::Unknown => Value::Unknown,
            made => self.loader(made, dataset),
        }
    }

    /// A loader of these batches, noted with its dataset (`loader.dataset`).
    fn loader(&mut self, batch: Value, dataset: &Value) -> Value {
        let batch = Rc::new(batch);
        self.loader_datasets.push((batch.clone(), dataset.clone()));
        Value::Many(batch, None)
    }

    /// `random_split(dataset, lengths)`: as many `Subset`s of the dataset
    /// as `lengths` lists (fractions or counts), or a list of unknown
    /// length of them.
    fn random_split(&mut self, call: &Args) -> Value {
        let Some(dataset) = call.get(0, "dataset") else {
            return Value::Unknown;
        };
        let part = bound(
            format!("torch.utils.data.Subset{GETITEM}"),
            vec![dataset.clone()],
            Vec::new(),
        );
        match call.get(1, "lengths").and_then(Value::items) {
            Some(lengths) => Value::list(vec![part; lengths.len()]),
            None => Value::Many(Rc::new(part), None),
        }
    }

    /// One sample of a dataset, as `dataset[i]` gives it for an index
    /// nobody knows.
    fn dataset_sample(&mut self, dataset: &Value, range: TextRange) -> Value {
        let index = Value::Int(self.env.anonymous());
        match dataset {
            // One of several datasets (chosen by a setting): any one's.
            Value::Either(parts) => {
                let samples: Vec<Value> = parts
                    .iter()
                    .map(|d| self.dataset_sample(d, range))
                    .collect();
                crate::interp::join::join_all(self, &samples)
            }
            Value::Partial(_) if is_dataset(dataset) => {
                self.call_value(dataset, vec![index], Vec::new(), range)
            }
            // A map-style dataset is indexed; an iterable one (an
            // `IterableDataset`, often a generator method) gives its items.
            Value::Instance(_) => match self.get_attr(dataset, "__getitem__", range) {
                method @ Value::BoundMethod(..) => {
                    self.call_value(&method, vec![index], Vec::new(), range)
                }
                _ => match self.own_iterator(dataset, range) {
                    Some(items) => self.element_of(&items),
                    None => Value::Unknown,
                },
            },
            Value::List(_) | Value::Tuple(_) | Value::Many(..) => self.element_of(dataset),
            _ => Value::Unknown,
        }
    }

    /// `dataset[index]` of a dataset of torch's (`name` is its path).
    fn dataset_item(
        &mut self,
        name: &str,
        args: &[Value],
        kwargs: &Kwargs,
        range: TextRange,
    ) -> Value {
        // `Subset(dataset, indices)[i]`: a sample of the dataset;
        // `ConcatDataset(datasets)[i]`: a sample of any one of them.
        if name == "torch.utils.data.Subset" {
            return match args.first() {
                Some(dataset) => self.dataset_sample(&dataset.clone(), range),
                None => Value::Unknown,
            };
        }
        if name == "torch.utils.data.ConcatDataset" {
            let Some(parts) = args.first().and_then(Value::items) else {
                return Value::Unknown;
            };
            let samples: Vec<Value> = parts
                .iter()
                .map(|d| self.dataset_sample(d, range))
                .collect();
            return crate::interp::join::join_all(self, &samples);
        }
        // `TensorDataset(*tensors)[i]`: the row `i` of each.
        if name == "torch.utils.data.TensorDataset" {
            let Some((index, tensors)) = args.split_last() else {
                return Value::Unknown;
            };
            if !matches!(index, Value::Int(_)) {
                return Value::Unknown;
            }
            let rows = tensors
                .iter()
                .map(|t| match t {
                    Value::Tensor(t) => match self.dims(t) {
                        Some(dims) if !dims.is_empty() => {
                            let row = self.new_tensor(
                                Shape::known(dims[1..].to_vec()),
                                t.dtype,
                                t.device.clone(),
                                "select",
                            );
                            Value::Tensor(Rc::new(row))
                        }
                        _ => Value::Unknown,
                    },
                    _ => Value::Unknown,
                })
                .collect();
            return Value::tuple(rows);
        }
        let Some(dataset) = name
            .strip_prefix("torchvision.datasets.")
            .and_then(|n| IMAGE_DATASETS.iter().find(|d| d.name == n))
        else {
            return Value::Unknown;
        };
        let (height, width) = match dataset.sizes {
            Some((h, w)) => (Dim::konst(h), Dim::konst(w)),
            None => (self.env.anonymous(), self.env.anonymous()),
        };
        let settings = Args::new(Vec::new(), kwargs.clone());
        let mut item = Item::Pil {
            channels: Dim::konst(dataset.channels),
            height,
            width,
        };
        // `FakeData(image_size=(c, h, w))`: images of those sizes (a size
        // nobody knows is one nobody names).
        if let Some(sizes) = settings.kw("image_size") {
            let dims: Option<Vec<Dim>> =
                sizes.items().filter(|items| items.len() == 3).map(|items| {
                    items
                        .iter()
                        .map(|v| self.as_dim(v).unwrap_or_else(|| self.env.anonymous()))
                        .collect()
                });
            let Some([channels, height, width]) =
                dims.map(<[Dim; 3]>::try_from).and_then(Result::ok)
            else {
                return Value::Unknown;
            };
            item = Item::Pil {
                channels,
                height,
                width,
            };
        }
        if let Some(transform) = settings.kw("transform").filter(|t| !t.is_none()) {
            item = self.apply_transform(&transform.clone(), item, range);
        }
        // A PIL image: nothing the analysis follows, and a batch torch
        // cannot make (`default_collate` refuses it).
        let image = match item {
            Item::Value(v) => v,
            Item::Pil { .. } => return Value::Unknown,
        };
        let mut target = Value::Int(self.env.anonymous());
        if let Some(t) = settings.kw("target_transform").filter(|t| !t.is_none()) {
            target = self.call_value(&t.clone(), vec![target], Vec::new(), range);
        }
        Value::tuple(vec![image, target])
    }

    /// A transform applied to an image: one of torchvision's, or a
    /// callable of the user's (which never sees a PIL image).
    fn apply_transform(&mut self, transform: &Value, item: Item, range: TextRange) -> Item {
        if let Value::Partial(p) = transform
            && let Value::Path(path) = &p.function
            && let Some(name) = path.strip_suffix(CALL).and_then(transform_name)
        {
            let name = name.to_string();
            let settings = p.kwargs.clone();
            return self.transform(&name, &settings, item, range);
        }
        match item {
            Item::Value(v) => Item::Value(self.call_value(transform, vec![v], Vec::new(), range)),
            Item::Pil { .. } => Item::Value(Value::Unknown),
        }
    }

    /// torchvision's transform `name` with its `settings`, applied.
    fn transform(&mut self, name: &str, settings: &Kwargs, item: Item, range: TextRange) -> Item {
        let unknown = Item::Value(Value::Unknown);
        let settings = Args::new(Vec::new(), settings.clone());
        let setting = |key: &str| settings.kw(key).cloned();
        match name {
            "Compose" | "RandomApply" => {
                let Some(list) = setting("transforms").and_then(|l| l.items()) else {
                    return unknown;
                };
                let mut out = item.clone();
                for t in &list {
                    out = self.apply_transform(t, out, range);
                }
                // Applied or not, the image must come out alike.
                if name == "RandomApply" && !self.alike_items(&item, &out) {
                    return unknown;
                }
                out
            }
            "ToTensor" | "PILToTensor" | "ToImage" => match item {
                Item::Pil {
                    channels,
                    height,
                    width,
                } => {
                    let dtype = if name == "ToTensor" {
                        DType::Float32
                    } else {
                        DType::UInt8
                    };
                    let t = self.new_tensor(
                        Shape::known(vec![channels, height, width]),
                        Some(dtype),
                        None,
                        "to_tensor",
                    );
                    Item::Value(Value::Tensor(Rc::new(t)))
                }
                Item::Value(v @ Value::Tensor(_)) if name == "ToImage" => Item::Value(v),
                // torch refuses a tensor: "pic should be PIL Image or ndarray".
                Item::Value(_) => unknown,
            },
            "ConvertImageDtype" | "ToDtype" => match (item, setting("dtype")) {
                (Item::Value(Value::Tensor(t)), Some(Value::DType(dtype))) => {
                    Item::Value(Value::Tensor(Rc::new(crate::value::Tensor {
                        dtype: Some(dtype),
                        ..(*t).clone()
                    })))
                }
                // v2's `ToDtype` lets a PIL image through.
                (pil @ Item::Pil { .. }, _) if name == "ToDtype" => pil,
                _ => unknown,
            },
            "Normalize" => match item {
                Item::Value(v @ Value::Tensor(_)) => Item::Value(v),
                _ => unknown,
            },
            "Lambda" => match (item, setting("lambd")) {
                (Item::Value(v), Some(f)) => {
                    Item::Value(self.call_value(&f, vec![v], Vec::new(), range))
                }
                _ => unknown,
            },
            "Grayscale" => {
                let channels = match setting("num_output_channels") {
                    Some(v) => self.as_dim(&v),
                    None => Some(Dim::konst(1)),
                };
                match channels {
                    Some(c) => self.resized(item, Some(c), None),
                    None => unknown,
                }
            }
            "Resize" => {
                if setting("max_size").is_some_and(|v| !v.is_none()) {
                    return unknown;
                }
                let sizes = self.resize_to(&item, setting("size"));
                self.resized(item, None, sizes)
            }
            "CenterCrop" | "RandomCrop" | "RandomResizedCrop" => {
                let sizes = setting("size").and_then(|s| self.crop_sizes(&s));
                if sizes.is_none() {
                    return unknown;
                }
                self.resized(item, None, sizes)
            }
            "Pad" => {
                let Some(pads) = setting("padding").and_then(|p| self.pad_sizes(&p)) else {
                    return unknown;
                };
                let Some((height, width)) = self.item_sizes(&item) else {
                    return unknown;
                };
                let (left, top, right, bottom) = pads;
                let sizes = (height.add(&top).add(&bottom), width.add(&left).add(&right));
                self.resized(item, None, Some(sizes))
            }
            "RandomRotation" if matches!(setting("expand"), Some(Value::Bool(Some(true)))) => {
                unknown
            }
            _ => item,
        }
    }

    /// The height and width of an image.
    fn item_sizes(&mut self, item: &Item) -> Option<(Dim, Dim)> {
        match item {
            Item::Pil { height, width, .. } => Some((height.clone(), width.clone())),
            Item::Value(Value::Tensor(t)) => {
                let dims = self.dims(t)?;
                let n = dims.len();
                (n >= 2).then(|| (dims[n - 2].clone(), dims[n - 1].clone()))
            }
            Item::Value(_) => None,
        }
    }

    /// An image with new channels and sizes (`None` keeps them); a
    /// tensor keeps its leading dims.
    fn resized(&mut self, item: Item, channels: Option<Dim>, sizes: Option<(Dim, Dim)>) -> Item {
        match item {
            Item::Pil {
                channels: c,
                height,
                width,
            } => {
                let (height, width) = sizes.unwrap_or((height, width));
                Item::Pil {
                    channels: channels.unwrap_or(c),
                    height,
                    width,
                }
            }
            Item::Value(Value::Tensor(t)) => {
                let Some(mut dims) = self.dims(&t) else {
                    return Item::Value(Value::Unknown);
                };
                let n = dims.len();
                if n < 3 && channels.is_some() || n < 2 {
                    return Item::Value(Value::Unknown);
                }
                if let Some((h, w)) = sizes {
                    dims[n - 2] = h;
                    dims[n - 1] = w;
                }
                if let Some(c) = channels {
                    dims[n - 3] = c;
                }
                Item::Value(Value::Tensor(Rc::new(crate::value::Tensor {
                    shape: Shape::known(dims),
                    ..(*t).clone()
                })))
            }
            Item::Value(_) => Item::Value(Value::Unknown),
        }
    }

    /// `Resize(size)`: a pair is the new height and width; one number is
    /// the new shorter side, the other kept in proportion (known where
    /// both sides are, or where they are equal).
    fn resize_to(&mut self, item: &Item, size: Option<Value>) -> Option<(Dim, Dim)> {
        let size = size?;
        let short = match self.one_size(&size) {
            Some(d) => d,
            None => match size.items().as_deref() {
                Some([one]) => self.as_dim(one)?,
                _ => return self.crop_sizes(&size),
            },
        };
        let (height, width) = self.item_sizes(item)?;
        if height == width {
            return Some((short.clone(), short));
        }
        let (h, w, s) = (height.as_const()?, width.as_const()?, short.as_const()?);
        // torchvision's `_compute_resized_output_size`: the longer side is
        // truncated.
        Some(if h <= w {
            (Dim::konst(s), Dim::konst(s * w / h))
        } else {
            (Dim::konst(s * h / w), Dim::konst(s))
        })
    }

    /// A crop's `size`: a number for a square, or a height and a width.
    /// A setting given as one number (`Resize(opt.imageSize)`, a name
    /// the analysis cannot read standing for its size); `None` for a
    /// sequence or anything else.
    fn one_size(&mut self, v: &Value) -> Option<Dim> {
        match v {
            Value::Int(_) => self.as_dim(v),
            Value::Opaque(_) => self
                .sizes_from_opaque(vec![v.clone()])
                .first()
                .and_then(|d| self.as_dim(d)),
            _ => None,
        }
    }

    fn crop_sizes(&mut self, size: &Value) -> Option<(Dim, Dim)> {
        if let Some(d) = self.one_size(size) {
            return Some((d.clone(), d));
        }
        match size.items()?.as_slice() {
            [one] => {
                let d = self.as_dim(one)?;
                Some((d.clone(), d))
            }
            [h, w] => Some((self.as_dim(h)?, self.as_dim(w)?)),
            _ => None,
        }
    }

    /// `Pad(padding)`: left, top, right and bottom.
    fn pad_sizes(&mut self, padding: &Value) -> Option<(Dim, Dim, Dim, Dim)> {
        if let Some(d) = self.one_size(padding) {
            return Some((d.clone(), d.clone(), d.clone(), d));
        }
        let items = padding.items()?;
        let dims: Option<Vec<Dim>> = items.iter().map(|v| self.as_dim(v)).collect();
        match dims?.as_slice() {
            [p] => Some((p.clone(), p.clone(), p.clone(), p.clone())),
            [x, y] => Some((x.clone(), y.clone(), x.clone(), y.clone())),
            [l, t, r, b] => Some((l.clone(), t.clone(), r.clone(), b.clone())),
            _ => None,
        }
    }

    /// Whether two images are of one kind and size.
    fn alike_items(&mut self, a: &Item, b: &Item) -> bool {
        match (a, b) {
            (
                Item::Pil {
                    channels: c1,
                    height: h1,
                    width: w1,
                },
                Item::Pil {
                    channels: c2,
                    height: h2,
                    width: w2,
                },
            ) => c1 == c2 && h1 == h2 && w1 == w2,
            (Item::Value(Value::Tensor(x)), Item::Value(Value::Tensor(y))) => {
                x.dtype == y.dtype && self.dims(x).is_some() && self.dims(x) == self.dims(y)
            }
            _ => false,
        }
    }
}
