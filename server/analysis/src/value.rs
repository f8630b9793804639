//! Abstract values: what a Python expression evaluates to under the fake mode.
//!
//! Values are cheap to clone (shared with `Rc`): the interpreter copies
//! scopes when it explores both arms of an `if` it cannot decide.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

use crate::mutation::Shared;
use crate::rules::nn::LayerDef;
use shapels_shapes::Dim;
use shapels_syntax::ast::{ClassDef, FunctionDef, TextRange};

/// A tensor element type, spelled as torch spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Int8,
    Int16,
    Int32,
    Int64,
    Float16,
    BFloat16,
    Float32,
    Float64,
    /// `torch.complex32` (`chalf`): complex numbers with half parts.
    ComplexHalf,
    /// `torch.bcomplex32`: complex numbers with bfloat16 parts, which torch
    /// promotes bfloat16 tensors to with a Python complex but has almost no
    /// kernels for.
    BComplex32,
    Complex64,
    Complex128,
}

impl DType {
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::UInt8 => "uint8",
            DType::UInt16 => "uint16",
            DType::UInt32 => "uint32",
            DType::UInt64 => "uint64",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::ComplexHalf => "complex32",
            DType::BComplex32 => "bcomplex32",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
        }
    }

    /// The dtype named by a `torch.<attr>` attribute.
    pub fn from_attr(attr: &str) -> Option<DType> {
        Some(match attr {
            "bool" => DType::Bool,
            "uint8" => DType::UInt8,
            "uint16" => DType::UInt16,
            "uint32" => DType::UInt32,
            "uint64" => DType::UInt64,
            "int8" => DType::Int8,
            "int16" | "short" => DType::Int16,
            "int32" | "int" => DType::Int32,
            "int64" | "long" => DType::Int64,
            "float16" | "half" => DType::Float16,
            "bfloat16" => DType::BFloat16,
            "float32" | "float" => DType::Float32,
            "float64" | "double" => DType::Float64,
            "complex32" | "chalf" => DType::ComplexHalf,
            "bcomplex32" => DType::BComplex32,
            "complex64" | "cfloat" => DType::Complex64,
            "complex128" | "cdouble" => DType::Complex128,
            _ => return None,
        })
    }

    pub fn is_floating(self) -> bool {
        matches!(
            self,
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64
        )
    }

    pub fn is_complex(self) -> bool {
        matches!(
            self,
            DType::ComplexHalf | DType::BComplex32 | DType::Complex64 | DType::Complex128
        )
    }

    /// The complex dtype whose parts are this float dtype (`float16` makes
    /// `complex32`), as promotion with a Python complex number gives it.
    pub fn to_complex(self) -> Option<DType> {
        match self {
            DType::Float16 => Some(DType::ComplexHalf),
            DType::BFloat16 => Some(DType::BComplex32),
            DType::Float32 => Some(DType::Complex64),
            DType::Float64 => Some(DType::Complex128),
            _ => None,
        }
    }

    /// The real dtype of a complex dtype's parts (what `.real`, `abs` and
    /// `var` give); any other dtype is its own.
    pub fn to_real(self) -> DType {
        match self {
            DType::ComplexHalf => DType::Float16,
            DType::BComplex32 => DType::BFloat16,
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            d => d,
        }
    }

    pub fn is_integral(self) -> bool {
        matches!(
            self,
            DType::UInt8
                | DType::UInt16
                | DType::UInt32
                | DType::UInt64
                | DType::Int8
                | DType::Int16
                | DType::Int32
                | DType::Int64
        )
    }

    /// Bytes per element (`dtype.itemsize`; `view(dtype)` rescales by it).
    pub fn itemsize(self) -> i64 {
        match self {
            DType::Bool | DType::UInt8 | DType::Int8 => 1,
            DType::UInt16 | DType::Int16 | DType::Float16 | DType::BFloat16 => 2,
            DType::UInt32
            | DType::Int32
            | DType::Float32
            | DType::ComplexHalf
            | DType::BComplex32 => 4,
            DType::UInt64 | DType::Int64 | DType::Float64 | DType::Complex64 => 8,
            DType::Complex128 => 16,
        }
    }

    /// The category used by type promotion: bool < integer < floating < complex.
    pub fn category(self) -> u8 {
        if self == DType::Bool {
            0
        } else if self.is_integral() {
            1
        } else if self.is_floating() {
            2
        } else {
            3
        }
    }
}

/// Where a tensor lives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Device {
    Cpu,
    Cuda(u32),
    Mps,
    Meta,
    /// `"cuda" if torch.cuda.is_available() else "cpu"`: either, decided at run time.
    CudaOrCpu,
}

impl Device {
    pub fn name(&self) -> String {
        match self {
            Device::Cpu => "cpu".into(),
            Device::Cuda(i) => format!("cuda:{i}"),
            Device::Mps => "mps:0".into(),
            Device::Meta => "meta".into(),
            Device::CudaOrCpu => "cuda:0|cpu".into(),
        }
    }

    /// Parse torch's device strings: `cpu`, `cuda`, `cuda:1`, `mps`, `meta`.
    pub fn parse(text: &str) -> Option<Device> {
        let text = text.trim();
        let (kind, index) = match text.split_once(':') {
            Some((k, i)) => (k, Some(i.parse::<u32>().ok()?)),
            None => (text, None),
        };
        Some(match kind {
            "cpu" => Device::Cpu,
            "cuda" => Device::Cuda(index.unwrap_or(0)),
            "mps" => Device::Mps,
            "meta" => Device::Meta,
            _ => return None,
        })
    }
}

/// Whether a tensor was made inside the fake mode or outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    Fake,
    Real,
}

/// A tensor's shape: known rank with `Dim` sizes, or a rank nobody knows yet.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Known(Rc<Vec<Dim>>),
    /// An unknown rank; the id refers to the interpreter's rank variables,
    /// which later uses may refine (`B, T, C = x.size()`).
    Var(u32),
    /// Any number of leading dims (a rank variable) followed by known ones:
    /// what `nn.Linear(768, 10)` makes of an input of unknown rank, `[*, 10]`.
    Tail(u32, Rc<Vec<Dim>>),
}

impl Shape {
    pub fn known(dims: Vec<Dim>) -> Shape {
        Shape::Known(Rc::new(dims))
    }

    /// The shape whose sizes are `Value::SizeOfVar(var, suffix)`: the rank
    /// variable's dims, then the known ones.
    pub fn of_sizes(var: u32, suffix: &Rc<Vec<Dim>>) -> Shape {
        if suffix.is_empty() {
            Shape::Var(var)
        } else {
            Shape::Tail(var, suffix.clone())
        }
    }

    pub fn dims(&self) -> Option<&[Dim]> {
        match self {
            Shape::Known(d) => Some(d),
            Shape::Var(_) | Shape::Tail(..) => None,
        }
    }

    /// The rank variable and known trailing dims of a shape of unknown rank.
    pub fn tail(&self) -> Option<(u32, &[Dim])> {
        match self {
            Shape::Var(v) => Some((*v, &[])),
            Shape::Tail(v, dims) => Some((*v, dims)),
            Shape::Known(_) => None,
        }
    }
}

/// How a tensor that is not contiguous lies in memory (see
/// `rules::layout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// Dense, its dims stored outermost first in this order.
    Order(Vec<usize>),
    /// The stride of each dim, in elements: a view that repeats memory
    /// (`expand`) or skips some (a slice). Only ops that make views keep it.
    Strides(Vec<i64>),
}

/// A fake (or real) tensor: metadata only.
#[derive(Debug, Clone)]
pub struct Tensor {
    pub shape: Shape,
    pub dtype: Option<DType>,
    pub device: Option<Device>,
    pub origin: Provenance,
    /// Which fake scope made it (0 is the analysis' own mode).
    pub mode: u32,
    /// The op that produced it, for hover.
    pub op: Rc<str>,
    /// Where it was made, for related information in diagnostics.
    pub made_at: Option<TextRange>,
    pub is_param: bool,
    /// How it lies in memory when that is not the plain order (a
    /// transposed, expanded or sliced view); `None` for contiguous or
    /// unknown.
    pub layout: Option<Rc<Layout>>,
    /// The ops that made it, last first, for hover; kept only by an
    /// analysis that records expressions (see `Interp::extend_trail`).
    pub trail: Option<Rc<Trail>>,
}

/// One op of the chain that made a tensor: its name, where it was called
/// (a byte offset), and the op before it.
#[derive(Debug)]
pub struct Trail {
    pub op: Rc<str>,
    pub at: usize,
    pub prev: Option<Rc<Trail>>,
    /// How many ops the chain holds, this one included.
    pub len: u32,
}

/// A built-in `torch.nn` layer: its class name and constructor arguments.
#[derive(Debug, Clone)]
pub struct Layer {
    pub kind: Rc<str>,
    pub args: Vec<Value>,
    pub kwargs: Vec<(Rc<str>, Value)>,
    /// Where its parameters live, moved by `module.to(dev)`.
    pub device: Shared<Option<Device>>,
    pub dtype: Shared<Option<DType>>,
    pub origin: Provenance,
    pub mode: u32,
    /// Child layers of containers (`Sequential`, `ModuleList`, `ModuleDict` keys in `keys`).
    pub children: Shared<Vec<Value>>,
    pub keys: Shared<Vec<Rc<str>>>,
    /// The container holds children the analysis could not enumerate (built
    /// from a comprehension over an unknown range): its length is unknown.
    pub unknown_children: Shared<bool>,
    /// Whether the layer is in training mode: `Some(true)` as constructed,
    /// `Some(false)` after `eval()` (of it or of a module holding it),
    /// `None` after a `train(mode)` the analysis cannot decide.
    pub training: Shared<Option<bool>>,
    /// Tensors the layer owns (weight, bias), built on first use.
    pub params: Shared<FxHashMap<Rc<str>, Value>>,
    /// Where its constructor call and arguments were written, when in the
    /// analysed file: a fix of a size argument edits it there.
    pub written: Option<Rc<crate::rules::fixes::WrittenCall>>,
}

impl Layer {
    /// A copy whose state (device, dtype, children, parameters, mode) is
    /// its own: what happens to one afterwards leaves the other as it was.
    pub(crate) fn detached(&self) -> Layer {
        Layer {
            kind: self.kind.clone(),
            args: self.args.clone(),
            kwargs: self.kwargs.clone(),
            device: Shared::new(self.device.borrow().clone()),
            dtype: Shared::new(*self.dtype.borrow()),
            origin: self.origin,
            mode: self.mode,
            children: Shared::new(self.children.borrow().clone()),
            keys: Shared::new(self.keys.borrow().clone()),
            unknown_children: Shared::new(self.unknown_children.get()),
            training: Shared::new(self.training.get()),
            params: Shared::new(self.params.borrow().clone()),
            written: self.written.clone(),
        }
    }

    /// Its class's entry in the layer registry, when the analysis knows it.
    pub(crate) fn def(&self) -> Option<&'static LayerDef> {
        LayerDef::of(&self.kind)
    }

    /// The constructor argument for a parameter of the class's signature,
    /// passed by name or by position; `None` when not given. Asking for a
    /// parameter the class does not have is a slip (see `declared_setting`).
    pub fn setting(&self, name: &str) -> Option<&Value> {
        match self.def() {
            Some(def) => {
                debug_assert!(def.has_param(name), "{} has no `{name}`", def.name);
                def.argument(name, &self.args, &self.kwargs)
            }
            // A class the registry does not know: only keywords are sure.
            None => self
                .kwargs
                .iter()
                .find(|(k, _)| &**k == name)
                .map(|(_, v)| v),
        }
    }

    /// `setting` for a parameter only some classes of a family have
    /// (`num_features` of `BatchNorm2d`, not of `LazyBatchNorm2d`): `None`
    /// for a class without it.
    pub(crate) fn declared_setting(&self, name: &str) -> Option<&Value> {
        let def = self.def().filter(|d| d.has_param(name))?;
        def.argument(name, &self.args, &self.kwargs)
    }

    /// The setting, or the default the class's signature gives it.
    pub(crate) fn setting_or_default(&self, name: &str) -> Option<Value> {
        self.setting(name)
            .cloned()
            .or_else(|| self.def()?.default(name))
    }
}

/// A user class.
#[derive(Debug)]
pub struct Class {
    pub name: Rc<str>,
    pub def: Option<Rc<ClassDef>>,
    pub bases: Vec<Value>,
    /// Class-level attributes, methods included.
    pub attrs: Shared<FxHashMap<Rc<str>, Value>>,
    pub is_dataclass: bool,
}

/// Whether a class is written in the analysed file (or made by no
/// `class` statement at all), not in a file it imports.
pub(crate) fn is_local_class(class: &Class) -> bool {
    class
        .def
        .as_ref()
        .is_none_or(|d| crate::workspace::is_local(&d.range))
}

/// An instance of a user class.
#[derive(Debug)]
pub struct Instance {
    pub class: Rc<Class>,
    pub attrs: Shared<FxHashMap<Rc<str>, Value>>,
    /// Insertion order of attributes (for `named_children`-like iteration).
    pub order: Shared<Vec<Rc<str>>>,
    pub origin: Provenance,
    pub device: Shared<Option<Device>>,
    /// When it was made, among all instances this process made (see
    /// [`Instance::next_serial`]).
    pub serial: u64,
}

static NEXT_INSTANCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Instance {
    /// A number for a new instance, greater than every earlier one's, in
    /// every analysis (kept module namespaces hold instances of earlier
    /// ones): a call that writes only instances numbered from where it
    /// began wrote nothing that existed before it (see `interp::memo`).
    pub(crate) fn next_serial() -> u64 {
        NEXT_INSTANCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// The number the next instance made will have, or a greater one.
    pub(crate) fn serial_mark() -> u64 {
        NEXT_INSTANCE.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A scope: names to values, shared so closures and branches can see it.
pub(crate) type Scope = Rc<RefCell<FxHashMap<Rc<str>, Value>>>;

/// A `torch.distributions` distribution: what its draws and densities
/// look like. Immutable, as torch's are.
#[derive(Debug, Clone)]
pub struct Distribution {
    /// `Normal`, `Categorical`, ...
    pub kind: Rc<str>,
    /// The parameters broadcast together.
    pub batch: Vec<Dim>,
    /// One draw of a multivariate distribution (`[]` for most).
    pub event: Vec<Dim>,
    /// What `sample()` gives (`int64` for a `Categorical`).
    pub sample_dtype: Option<DType>,
    /// What `log_prob` and `entropy` give.
    pub dtype: Option<DType>,
    pub device: Option<Device>,
    /// The parameters by name, as given (`d.loc`, `d.probs`).
    pub params: Vec<(Rc<str>, Value)>,
}

/// The names and values of a scope or an object's attributes, copied out
/// so that the caller can change the map while going through them.
pub(crate) fn entries(map: &FxHashMap<Rc<str>, Value>) -> Vec<(Rc<str>, Value)> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// `entries` of an object's attributes, read before the caller writes any.
pub(crate) fn object_entries(map: &Shared<FxHashMap<Rc<str>, Value>>) -> Vec<(Rc<str>, Value)> {
    entries(&map.borrow())
}

/// A Python list, shared by every name that holds it.
pub(crate) type ListRef = Rc<Shared<Vec<Value>>>;

/// A dict object: its entries in order, shared by every name holding it.
pub(crate) type DictRef = Rc<Shared<Vec<(Value, Value)>>>;

/// Keyword arguments of a call, in order.
pub(crate) type Kwargs = Vec<(Rc<str>, Value)>;

/// A module's namespace: the file its code comes from and its global
/// names (what `import m` binds `m` to).
pub struct ModuleNs {
    /// The file (0 for the analysed one; see `workspace::file_of`), or
    /// `None` for a namespace package, which has no code.
    pub file: Option<u32>,
    /// The dotted name it was first imported as (`pkg.layers`).
    pub name: Rc<str>,
    pub globals: Scope,
    /// Its top level ran in an earlier analysis, whose result this one
    /// shares (see `workspace::Executed`): no run may change it.
    pub shared: std::cell::Cell<bool>,
}

impl std::fmt::Debug for ModuleNs {
    // The globals hold the module's functions, which point back at it:
    // printing them would never end.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<module {}>", self.name)
    }
}

/// A user function together with the scope it closes over.
#[derive(Debug, Clone)]
pub struct Function {
    pub def: Rc<FunctionDef>,
    pub closure: Option<Scope>,
    /// The module it was defined in, whose globals it reads. Weak for the
    /// reason `owner` is: the module's globals hold the function.
    pub module: std::rc::Weak<ModuleNs>,
    /// The class the function was defined in (for `super()`).
    /// Weak: the class holds its methods, so a strong link back would be a
    /// cycle that leaks every analysed class (and the syntax behind it).
    pub owner: Option<std::rc::Weak<Class>>,
    /// Parameter defaults, evaluated where the function was defined.
    pub defaults: Vec<Option<Value>>,
}

/// What `functools.partial` bound: the callable and its first arguments.
#[derive(Debug, Clone)]
pub struct Partial {
    pub function: Value,
    pub args: Vec<Value>,
    pub kwargs: Vec<(Rc<str>, Value)>,
}

/// A Python value as the analysis sees it.
#[derive(Debug, Clone)]
pub enum Value {
    /// Anything the analysis cannot follow.
    Unknown,
    None,
    Bool(Option<bool>),
    /// An integer: a known number or a symbolic size.
    Int(Dim),
    Float(Option<f64>),
    /// A Python complex number (`1j`, `2 + 0.5j`); only its kind is kept,
    /// which is what promotion needs.
    Complex,
    Str(Rc<str>),
    /// A string whose text is not known (an f-string formatting a value
    /// that is not): never a tensor, never equal to a known string.
    Text,
    Tuple(Rc<Vec<Value>>),
    List(Rc<Shared<Vec<Value>>>),
    Dict(Rc<Shared<Vec<(Value, Value)>>>),
    /// `x.size()` / `x.shape` of a tensor whose rank is not known yet.
    /// The sizes are the rank variable's dims followed by the known ones.
    SizeOfVar(u32, Rc<Vec<Dim>>),
    Tensor(Rc<Tensor>),
    Device(Device),
    DType(DType),
    Layer(Rc<Layer>),
    Instance(Rc<Instance>),
    Class(Rc<Class>),
    /// A module of the user's, imported (`import layers`).
    Module(Rc<ModuleNs>),
    /// One of a few objects that cannot be joined into one (`self.up =
    /// nn.Upsample(...)` on one path, `nn.ConvTranspose2d(...)` on the
    /// other): calling it calls each, and gives what any of them may.
    Either(Rc<Vec<Value>>),
    Function(Rc<Function>),
    BoundMethod(Box<Value>, Rc<Function>),
    /// A method of a built-in value: `x.view`, `layer.to`, `xs.append`.
    BuiltinMethod(Box<Value>, Rc<str>),
    /// `functools.partial(f, *args, **kwargs)`: calling it calls `f` with
    /// those arguments first.
    Partial(Rc<Partial>),
    /// A module or callable of the outside world by its dotted path:
    /// `torch`, `torch.nn.functional.relu`, `math.sqrt`, `einops.rearrange`.
    Path(Rc<str>),
    /// A value that stands for an unknown argument of an uncalled function,
    /// named after its source (`config`, `config.n_embd`); used as an int it
    /// becomes a symbol of that name.
    Opaque(Rc<str>),
    /// A `range(start, stop, step)`.
    Range(Dim, Dim, Dim),
    /// `super()` inside a method: the instance and the class to look above.
    Super(Box<Value>, Rc<Class>),
    /// A `with FakeTensorMode(...)` mode object.
    FakeMode {
        id: u32,
        allow_non_fake_inputs: bool,
    },
    /// A `torch.distributions` object (see `rules::distributions`).
    Distribution(Rc<Distribution>),
    /// A value that is None on some paths (`x = None` in one branch): used
    /// as the value, but `is None` stays undecided.
    Optional(Box<Value>),
    /// A slice object inside a subscript.
    Slice(Box<Value>, Box<Value>, Box<Value>),
    /// A list of unknown length whose every element is like this one: what
    /// `[Block(cfg) for _ in range(cfg.n_layer)]` is when `n_layer` is not
    /// known. Its length stays unknown; an element is the one value. The
    /// length is known in one case: a loop over `range(n)` (or the rows of
    /// a tensor) that appends once on every turn makes `n` items.
    Many(Rc<Value>, Option<Dim>),
    /// A tuple whose first items are these and whose further items, if
    /// any, are not known: `tuple(inputs) + tuple(self.parameters())`.
    /// Its known items are read by index and by a slice that stays among
    /// them (`args[:length]`), and spread into a call of user code
    /// (`f(*args)`) as those items followed by unknown ones.
    OpenTuple(Rc<Vec<Value>>),
    /// An iterable that holds each of these, in an order not known, and
    /// perhaps more: the walk of a module tree the analysis knows in part
    /// (`self.modules()` where a block count is not known). A loop visits
    /// each of them, and then turns of unknown number; nothing is read
    /// from it by position.
    Members(Rc<Vec<Value>>),
    Ellipsis,
}

impl Value {
    /// A Python number: a bool, an int, a float or a complex.
    pub(crate) fn is_number(&self) -> bool {
        matches!(
            self,
            Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Complex
        )
    }

    pub fn int(n: i64) -> Value {
        Value::Int(Dim::konst(n))
    }

    pub fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(Rc::new(items))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(Shared::new(items)))
    }

    pub fn as_tensor(&self) -> Option<&Rc<Tensor>> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }

    pub fn is_none(&self) -> bool {
        matches!(self, Value::None)
    }

    /// `None` on some paths and something else on others (`Optional`, or
    /// one of several values that may be `None`).
    pub fn maybe_none(&self) -> bool {
        match self {
            Value::Optional(_) => true,
            Value::Either(options) => options.iter().any(Value::is_none),
            _ => false,
        }
    }

    /// The items of a tuple or list, copied out.
    pub fn items(&self) -> Option<Vec<Value>> {
        match self {
            Value::Tuple(items) => Some(items.as_ref().clone()),
            Value::List(items) => Some(items.borrow().clone()),
            _ => None,
        }
    }
}
