//! What a tool call is: a primitive's declaration (name, doc, parameters
//! with kinds, roles and defaults, either/or groups, effect), the values
//! its arguments take, a parsed [`Call`], and the guard's view of a call
//! ([`guard_view`]).
//!
//! A leaf: it depends on nothing else of nib's, so the guard (which judges
//! calls) and the primitives (which run them) both build on it without
//! depending on each other. A primitive is declared once (`prim::table`);
//! everything else (the JSON schema the model sees, the positional Scheme
//! form, the parser from a JSON call, the printer of a call, the guard's
//! view of it) is derived from the declaration.

/// The type of a parameter's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    String,
    Integer,
    Boolean,
    /// A list of objects whose fields are the parameter's `items`.
    List,
}

/// What the guard reads a value as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    None,
    /// A file or directory in the workspace.
    Path,
    /// Text that will be written or sent.
    Payload,
    /// A command line that will run.
    Command,
    Url,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::None => "none",
            Role::Path => "path",
            Role::Payload => "payload",
            Role::Command => "command",
            Role::Url => "url",
        }
    }
}

/// What running a primitive can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    ReadOnly,
    Write,
    Exec,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::ReadOnly => "read-only",
            Effect::Write => "write",
            Effect::Exec => "exec",
        }
    }
}

/// One parameter of a primitive, or one field of a list parameter's items.
#[derive(Debug)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    pub role: Role,
    pub doc: &'static str,
    /// For `Kind::List`: the fields of each element.
    pub items: &'static [Param],
    /// What a left-out (or empty) optional argument means to the handler.
    pub default: DefaultValue,
}

/// A parameter's default: what its handler uses when the call leaves the
/// argument out (or gives the kind's empty value, which the positional
/// form cannot tell from leaving it out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultValue {
    /// The kind's empty value ("" / 0 / #f / '()) is the default.
    Empty,
    Int(i64),
    Str(&'static str),
}

/// Two sets of parameters of which a call gives exactly one, such as
/// fs-edit's `old`/`new`/`replace_all` against `edits`.
#[derive(Debug)]
pub struct OneOf {
    /// The first form's parameters.
    pub first: &'static [&'static str],
    /// Those of them the first form cannot do without.
    pub first_required: &'static [&'static str],
    /// The second form's parameters.
    pub second: &'static [&'static str],
    /// The error when a call gives both forms.
    pub both: &'static str,
    /// The error when a call gives neither.
    pub neither: &'static str,
}

/// A primitive's one declaration.
#[derive(Debug)]
pub struct Decl {
    pub name: &'static str,
    pub doc: &'static str,
    pub params: &'static [Param],
    pub effect: Effect,
    /// Either/or groups of parameters (see [`OneOf`]).
    pub one_of: &'static [OneOf],
}

/// Primitives are equal by name: the name is unique in the table.
impl PartialEq for Decl {
    fn eq(&self, other: &Decl) -> bool {
        self.name == other.name
    }
}

impl Eq for Decl {}

impl Decl {
    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.name == name)
    }
}

/// The position of the parameter `name` in `params`, evaluated at compile
/// time where it is used as a constant: a misspelt name does not compile.
pub const fn param_index(params: &[Param], name: &str) -> usize {
    let mut i = 0;
    while i < params.len() {
        if str_eq(params[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no parameter of that name in the declaration")
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// An argument value, in positional order. A left-out optional parameter
/// holds its kind's empty value ("" / 0 / #f / an empty list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    Str(String),
    Int(i64),
    Bool(bool),
    /// Each element is an association list with string keys, fields in the
    /// order the element gave them.
    List(Vec<Vec<(String, Arg)>>),
}

impl Arg {
    /// The empty value of a kind.
    pub fn empty(kind: Kind) -> Arg {
        match kind {
            Kind::String => Arg::Str(String::new()),
            Kind::Integer => Arg::Int(0),
            Kind::Boolean => Arg::Bool(false),
            Kind::List => Arg::List(Vec::new()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Arg::Str(s) => s,
            _ => "",
        }
    }

    pub fn as_int(&self) -> i64 {
        match self {
            Arg::Int(n) => *n,
            _ => 0,
        }
    }

    pub fn as_bool(&self) -> bool {
        matches!(self, Arg::Bool(true))
    }

    pub fn as_list(&self) -> &[Vec<(String, Arg)>] {
        match self {
            Arg::List(items) => items,
            _ => &[],
        }
    }
}

/// A parsed call: a primitive and its arguments in positional order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub decl: &'static Decl,
    pub args: Vec<Arg>,
    /// Things the call got away with that the event log counts, such as a
    /// list sent as a JSON string.
    pub quirks: Vec<&'static str>,
    /// The parameters the caller gave, even as an empty value (an empty
    /// `old` sent on purpose is told apart from one left out).
    pub present: Vec<&'static str>,
}

impl Call {
    /// The argument at a parameter's position (see [`param_index`]).
    pub fn at(&self, index: usize) -> &Arg {
        static NONE: Arg = Arg::Bool(false);
        self.args.get(index).unwrap_or(&NONE)
    }

    /// A string argument, or its parameter's default when left empty.
    pub fn str_at(&self, index: usize) -> &str {
        match (self.at(index).as_str(), self.default_at(index)) {
            ("", DefaultValue::Str(d)) => d,
            (s, _) => s,
        }
    }

    /// An integer argument, or its parameter's default when left out (0).
    pub fn int_at(&self, index: usize) -> i64 {
        match (self.at(index).as_int(), self.default_at(index)) {
            (0, DefaultValue::Int(d)) => d,
            (n, _) => n,
        }
    }

    pub fn bool_at(&self, index: usize) -> bool {
        self.at(index).as_bool()
    }

    pub fn list_at(&self, index: usize) -> &[Vec<(String, Arg)>] {
        self.at(index).as_list()
    }

    fn default_at(&self, index: usize) -> DefaultValue {
        self.decl
            .params
            .get(index)
            .map_or(DefaultValue::Empty, |p| p.default)
    }

    /// The argument of a parameter, by name (for code that handles any
    /// primitive, such as the guard; a handler uses its typed arguments).
    pub fn arg(&self, name: &str) -> &Arg {
        static NONE: Arg = Arg::Bool(false);
        self.decl
            .params
            .iter()
            .position(|p| p.name == name)
            .and_then(|i| self.args.get(i))
            .unwrap_or(&NONE)
    }
}

/// One string value of a call as the guard sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    pub param: &'static str,
    /// For a list element's field: its 1-based index and field name.
    pub item: Option<(usize, String)>,
    pub role: Role,
    pub value: &'a str,
}

impl Field<'_> {
    /// "path", or "edits[2].new" for a list element's field.
    pub fn label(&self) -> String {
        match &self.item {
            Some((i, name)) => format!("{}[{i}].{name}", self.param),
            None => self.param.to_string(),
        }
    }
}

/// Every string value of a call with its role, list elements included, so
/// the guard reads a secret in the third edit's `new` like any other.
pub fn guard_view(call: &Call) -> Vec<Field<'_>> {
    let mut out = Vec::new();
    for (p, arg) in call.decl.params.iter().zip(&call.args) {
        match arg {
            Arg::Str(s) => out.push(Field {
                param: p.name,
                item: None,
                role: p.role,
                value: s,
            }),
            Arg::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    for (key, value) in item {
                        let role = p
                            .items
                            .iter()
                            .find(|f| f.name == key)
                            .map_or(Role::None, |f| f.role);
                        if let Arg::Str(s) = value {
                            out.push(Field {
                                param: p.name,
                                item: Some((i + 1, key.clone())),
                                role,
                                value: s,
                            });
                        }
                    }
                }
            }
            Arg::Int(_) | Arg::Bool(_) => {}
        }
    }
    out
}
