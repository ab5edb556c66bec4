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
}

/// A primitive's one declaration.
#[derive(Debug)]
pub struct Decl {
    pub name: &'static str,
    pub doc: &'static str,
    pub params: &'static [Param],
    pub effect: Effect,
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
}

impl Call {
    /// The argument of a parameter, by name.
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
