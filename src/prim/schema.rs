//! The JSON schema of each primitive, derived from its declaration, and the
//! positional form of a call, as Scheme writes it and the terminal shows it.

use serde_json::{Map, Value, json};

use crate::call::{Arg, Call, Decl, Kind, Param};

/// One tool as the model is given it: name, description, and a JSON schema
/// of its parameters. Model clients wrap this in their wire format.
pub fn tool_schema(decl: &Decl) -> Value {
    json!({
        "name": decl.name,
        "description": decl.doc,
        "parameters": object_schema(decl.params),
    })
}

/// The whole tool list, in the fixed order.
pub fn tool_list(decls: &[&Decl]) -> Value {
    Value::Array(decls.iter().map(|d| tool_schema(d)).collect())
}

fn object_schema(params: &[Param]) -> Value {
    let mut properties = Map::new();
    for p in params {
        properties.insert(p.name.to_string(), param_schema(p));
    }
    let required: Vec<&str> = params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn param_schema(p: &Param) -> Value {
    match p.kind {
        Kind::String => json!({"type": "string", "description": p.doc}),
        Kind::Integer => json!({"type": "integer", "description": p.doc}),
        Kind::Boolean => json!({"type": "boolean", "description": p.doc}),
        Kind::List => json!({
            "type": "array",
            "description": p.doc,
            "items": object_schema(p.items),
        }),
    }
}

/// The positional form of a call: `(fs-edit "src/a.rs" "old" "new" #f)`.
/// Trailing arguments that hold their empty value are left out.
pub fn positional(call: &Call) -> String {
    let defaults = call
        .decl
        .params
        .iter()
        .zip(&call.args)
        .rev()
        .take_while(|(p, a)| !p.required && **a == Arg::empty(p.kind))
        .count();
    let shown = call.args.len() - defaults;
    let mut out = format!("({}", call.decl.name);
    for arg in &call.args[..shown] {
        out.push(' ');
        write_arg(arg, &mut out);
    }
    out.push(')');
    out
}

fn write_arg(arg: &Arg, out: &mut String) {
    match arg {
        Arg::Str(s) => write_string(s, out),
        Arg::Int(n) => out.push_str(&n.to_string()),
        Arg::Bool(b) => out.push_str(if *b { "#t" } else { "#f" }),
        Arg::List(items) => {
            out.push_str("'(");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push('(');
                for (j, (key, value)) in item.iter().enumerate() {
                    if j > 0 {
                        out.push(' ');
                    }
                    out.push('(');
                    write_string(key, out);
                    out.push_str(" . ");
                    write_arg(value, out);
                    out.push(')');
                }
                out.push(')');
            }
            out.push(')');
        }
    }
}

/// A Scheme string literal.
pub fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
}
