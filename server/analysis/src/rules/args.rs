//! `Args`: the positional and keyword arguments of one op call.

use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use crate::value::{Tensor, Value};

pub(crate) struct Args {
    pub pos: Vec<Value>,
    pub kw: Vec<(Rc<str>, Value)>,
    /// Source ranges of the positional operands when the caller knows them
    /// (binary operators), for related information.
    pub ranges: Vec<TextRange>,
    /// Written as a Python operator (`2 >= x`, `1 - x`): Python hands a
    /// number on the left to the tensor's reflected method, so torch's
    /// parsing of a function call's arguments (`torch.ge(2, x)` refuses
    /// the number) does not apply.
    pub operator: bool,
    /// Called as a tensor's method (`x.maximum(y)`): `self` is the first of
    /// `pos`, and torch's argument parsing counts positions after it.
    pub method: bool,
}

impl Args {
    pub fn new(pos: Vec<Value>, kw: Vec<(Rc<str>, Value)>) -> Args {
        Args {
            pos,
            kw,
            ranges: Vec::new(),
            operator: false,
            method: false,
        }
    }

    /// The two operands of a Python operator, with their source ranges
    /// when the caller knows them.
    pub fn operands(a: &Value, b: &Value, ranges: Vec<TextRange>) -> Args {
        Args {
            ranges,
            operator: true,
            ..Args::new(vec![a.clone(), b.clone()], Vec::new())
        }
    }

    /// The keyword argument `name`, else the positional one at `index`.
    pub fn get(&self, index: usize, name: &str) -> Option<&Value> {
        self.kw(name).or_else(|| self.pos.get(index))
    }

    /// The keyword argument `name`, or one of the NumPy spellings torch
    /// takes for it (`axis` for `dim`, `keepdims` for `keepdim`).
    pub fn kw(&self, name: &str) -> Option<&Value> {
        let alias = match name {
            "dim" => Some("axis"),
            "keepdim" => Some("keepdims"),
            _ => None,
        };
        self.kw
            .iter()
            .find(|(k, _)| &**k == name || Some(&**k) == alias)
            .map(|(_, v)| v)
    }

    /// The argument as a tensor.
    pub fn tensor(&self, index: usize, name: &str) -> Option<Rc<Tensor>> {
        match self.get(index, name) {
            Some(Value::Tensor(t)) => Some(t.clone()),
            _ => None,
        }
    }

    /// A known int argument, `default` when absent; `None` when it is
    /// given but not known (or not an int).
    pub fn int_or(&self, index: usize, name: &str, default: i64) -> Option<i64> {
        match self.get(index, name) {
            None => Some(default),
            Some(Value::Int(d)) => d.as_const(),
            Some(_) => None,
        }
    }

    /// A known integer argument.
    pub fn int(&self, index: usize, name: &str) -> Option<i64> {
        match self.get(index, name) {
            Some(Value::Int(d)) => d.as_const(),
            Some(Value::Bool(Some(b))) => Some(*b as i64),
            _ => None,
        }
    }

    /// A known bool argument, `default` when absent.
    pub fn flag(&self, index: usize, name: &str, default: bool) -> Option<bool> {
        match self.get(index, name) {
            None | Some(Value::None) => Some(default),
            Some(Value::Bool(b)) => *b,
            Some(Value::Int(d)) => d.as_const().map(|n| n != 0),
            _ => None,
        }
    }

    /// A string argument.
    pub fn str(&self, index: usize, name: &str) -> Option<Rc<str>> {
        match self.get(index, name) {
            Some(Value::Str(s)) => Some(s.clone()),
            _ => None,
        }
    }

    /// The positional arguments from `start` on, flattened when they are
    /// a single tuple or list (`x.view(2, 3)` and `x.view((2, 3))`).
    pub fn varargs(&self, start: usize) -> Vec<Value> {
        let rest = self.pos.get(start..).unwrap_or(&[]);
        if let [single] = rest
            && let Some(items) = single.items()
        {
            return items;
        }
        if let [Value::SizeOfVar(..)] = rest {
            return Vec::new();
        }
        rest.to_vec()
    }

    /// Whether the sizes from `start` on are one value the analysis cannot
    /// read (`torch.zeros(shape)` with `shape` unknown): then not even the
    /// number of dims is known.
    pub fn sizes_unknown(&self, start: usize) -> bool {
        // A module path here is a dtype the analysis does not know
        // (`x.view(torch.float8_e4m3fn)`), not a size.
        // A made-up parameter alone (`torch.zeros(size)`) may be a tuple as
        // well as a number; one whose default is `None` is what a caller
        // passes instead. A list of sizes whose end or length the analysis
        // cannot read (`batch_shape + [n] + list(rest)`) says no count.
        matches!(
            self.pos.get(start..).unwrap_or(&[]),
            [Value::Unknown
                | Value::Optional(_)
                | Value::Path(_)
                | Value::Opaque(_)
                | Value::None
                | Value::OpenTuple(_)
                | Value::Many(..)]
        )
    }

    /// Whether the sizes from `start` on are the sizes of a tensor of unknown
    /// rank (`x.shape + (2,)`): their number is not known either, and a rule
    /// that reads them as a list must not (they would read as none).
    pub fn sizes_of_unknown_rank(&self, start: usize) -> bool {
        matches!(self.pos.get(start..).unwrap_or(&[]), [Value::SizeOfVar(..)])
    }

    /// The tensor arguments, in order, including inside lists.
    pub fn tensors(&self) -> Vec<Rc<Tensor>> {
        let mut out = Vec::new();
        for v in self.pos.iter().chain(self.kw.iter().map(|(_, v)| v)) {
            match v {
                Value::Tensor(t) => out.push(t.clone()),
                Value::Tuple(_) | Value::List(_) => {
                    for item in v.items().unwrap_or_default() {
                        if let Value::Tensor(t) = item {
                            out.push(t);
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }
}

impl Args {
    /// The arguments as torch's argument parsing names them when no
    /// signature matches: `Tensor, int, stable=bool`; `None` when one is a
    /// value the analysis cannot type.
    pub fn python_types(&self) -> Option<String> {
        fn type_name(v: &Value) -> Option<&'static str> {
            match v {
                Value::Tensor(_) => Some("Tensor"),
                Value::Int(_) => Some("int"),
                Value::Float(_) => Some("float"),
                Value::Bool(_) => Some("bool"),
                Value::None => Some("NoneType"),
                _ => None,
            }
        }
        let mut parts: Vec<String> = Vec::new();
        for v in &self.pos {
            parts.push(type_name(v)?.to_string());
        }
        for (k, v) in &self.kw {
            parts.push(format!("{k}={}", type_name(v)?));
        }
        Some(parts.join(", "))
    }
}
