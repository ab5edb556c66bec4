//! From a model's JSON call to positional arguments, by the declaration.
//!
//! Errors name the parameter (and the list element, 1-based) and say what to
//! send. A left-out optional parameter, or one sent as null, gets its kind's
//! empty value. A list sent as a JSON string that parses as-is into a list
//! of objects is accepted and recorded as a quirk; anything else in a string
//! is an error.

use std::fmt;

use serde_json::{Map, Value};

use crate::call::{Arg, Call, Decl, Kind, Param};
use crate::edit::{did_you_mean, first_duplicate_key, kind_of};

/// A JSON call that does not fit its declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError {
    pub tool: &'static str,
    pub message: String,
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.tool, self.message)
    }
}

impl std::error::Error for ArgError {}

impl ArgError {
    fn new(tool: &'static str, message: String) -> ArgError {
        ArgError { tool, message }
    }
}

/// Parse a call from the JSON text of its arguments, refusing a key given
/// twice.
pub fn parse_text(decl: &'static Decl, text: &str) -> Result<Call, ArgError> {
    let err = |message: String| ArgError {
        tool: decl.name,
        message,
    };
    if let Some(dup) = first_duplicate_key(text) {
        let at = dup
            .edit
            .map(|i| format!("edits[{}]: ", i + 1))
            .unwrap_or_default();
        return Err(err(format!(
            "{at}`{}` is given twice; send each field once",
            dup.key
        )));
    }
    // An empty argument string is how some servers send a call without
    // arguments.
    if text.trim().is_empty() {
        return parse(decl, &Value::Object(Map::new()));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        err(format!(
            "the arguments are not valid JSON ({e}); send one JSON object"
        ))
    })?;
    parse(decl, &value)
}

/// Parse a call from its JSON arguments.
pub fn parse(decl: &'static Decl, value: &Value) -> Result<Call, ArgError> {
    let err = |message: String| ArgError {
        tool: decl.name,
        message,
    };
    let obj = match value {
        Value::Object(obj) => obj,
        Value::Null => &Map::new(),
        other => {
            return Err(err(format!(
                "the arguments must be a JSON object with the parameters by name, got {}",
                kind_of(other)
            )));
        }
    };
    check_fields(decl.name, obj, decl.params, "")?;
    let mut quirks = Vec::new();
    let mut present = Vec::new();
    let mut args = Vec::with_capacity(decl.params.len());
    for p in decl.params {
        if obj.get(p.name).is_some_and(|v| !v.is_null()) {
            present.push(p.name);
        }
        let arg = match obj.get(p.name) {
            None | Some(Value::Null) if p.required => {
                return Err(err(format!("`{}` is missing: {}", p.name, p.doc)));
            }
            None | Some(Value::Null) => Arg::empty(p.kind),
            Some(v) => value_arg(decl.name, p, v, "", &mut quirks)?,
        };
        args.push(arg);
    }
    let call = Call {
        decl,
        args,
        quirks,
        present,
    };
    check_call(&call)?;
    Ok(call)
}

/// The rules a call must keep beyond each argument's kind, whoever built
/// it (a model's JSON here, a strategy's positional form in the engine):
/// the declaration's either/or groups. An argument counts as given when it
/// is not its kind's empty value.
pub fn check_call(call: &Call) -> Result<(), ArgError> {
    let err = |message: String| Err(ArgError::new(call.decl.name, message));
    let given = |name: &str| {
        call.decl
            .params
            .iter()
            .position(|p| p.name == name)
            .is_some_and(|i| call.at(i) != &Arg::empty(call.decl.params[i].kind))
    };
    for group in call.decl.one_of {
        let first = group.first.iter().any(|n| given(n));
        let second = group.second.iter().any(|n| given(n));
        match (first, second) {
            (true, true) => return err(group.both.to_string()),
            (false, false) => return err(group.neither.to_string()),
            (true, false) => {
                if let Some(missing) = group.first_required.iter().find(|n| {
                    let i = call.decl.params.iter().position(|p| p.name == **n);
                    i.is_none_or(|i| call.at(i) == &Arg::empty(call.decl.params[i].kind))
                        && !given_explicitly(call, n)
                }) {
                    let needs: Vec<String> = group
                        .first_required
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect();
                    return err(format!(
                        "`{missing}` is missing: this form needs {}",
                        needs.join(" and ")
                    ));
                }
            }
            (false, true) => {}
        }
    }
    Ok(())
}

/// Whether a string parameter was sent, even as "" (an empty `old` is a
/// mistake with its own message, not a missing field).
fn given_explicitly(call: &Call, name: &str) -> bool {
    call.present.contains(&name)
}

fn check_fields(
    tool: &'static str,
    obj: &Map<String, Value>,
    params: &[Param],
    at: &str,
) -> Result<(), ArgError> {
    let known: Vec<&str> = params.iter().map(|p| p.name).collect();
    for key in obj.keys() {
        if known.contains(&key.as_str()) {
            continue;
        }
        let hint = match did_you_mean(key, &known) {
            Some(k) => format!("; did you mean `{k}`?"),
            None if known.is_empty() => "; this tool takes no arguments".to_string(),
            None => {
                let names: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                format!("; the parameters are {}", names.join(", "))
            }
        };
        return Err(ArgError::new(
            tool,
            format!("{at}unknown field `{key}`{hint}"),
        ));
    }
    Ok(())
}

fn value_arg(
    tool: &'static str,
    p: &Param,
    v: &Value,
    at: &str,
    quirks: &mut Vec<&'static str>,
) -> Result<Arg, ArgError> {
    let wrong = |want: &str| {
        let message = format!("{at}`{}` must be {want}, got {}", p.name, kind_of(v));
        ArgError::new(tool, message)
    };
    match p.kind {
        Kind::String => v
            .as_str()
            .map(|s| Arg::Str(s.to_string()))
            .ok_or_else(|| wrong("a string")),
        Kind::Integer => v
            .as_i64()
            .map(Arg::Int)
            .ok_or_else(|| wrong("a whole number")),
        Kind::Boolean => v
            .as_bool()
            .map(Arg::Bool)
            .ok_or_else(|| wrong("true or false")),
        Kind::List => list_arg(tool, p, v, quirks),
    }
}

fn list_arg(
    tool: &'static str,
    p: &Param,
    v: &Value,
    quirks: &mut Vec<&'static str>,
) -> Result<Arg, ArgError> {
    let err = |message: String| Err(ArgError::new(tool, message));
    let parsed;
    let items = match v {
        Value::Array(items) => items,
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(items)) if items.iter().all(Value::is_object) => {
                quirks.push("list-as-string");
                parsed = items;
                &parsed
            }
            _ => {
                return err(format!(
                    "`{}` must be a list of objects; it was a string that is not such a list in JSON",
                    p.name
                ));
            }
        },
        other => {
            return err(format!(
                "`{}` must be a list of objects, got {}",
                p.name,
                kind_of(other)
            ));
        }
    };
    if items.is_empty() {
        return err(format!(
            "`{}` is empty: give at least one element, or leave it out",
            p.name
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("{}[{}]: ", p.name, i + 1);
        let Value::Object(obj) = item else {
            return err(format!("{at}expected an object, got {}", kind_of(item)));
        };
        check_fields(tool, obj, p.items, &at)?;
        let mut fields = Vec::with_capacity(p.items.len());
        for field in p.items {
            match obj.get(field.name) {
                None | Some(Value::Null) if field.required => {
                    return err(format!("{at}`{}` is missing: {}", field.name, field.doc));
                }
                None | Some(Value::Null) => {}
                Some(v) => {
                    let arg = value_arg(tool, field, v, &at, quirks)?;
                    fields.push((field.name.to_string(), arg));
                }
            }
        }
        out.push(fields);
    }
    Ok(Arg::List(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prim::schema::positional;
    use crate::prim::table::{FS_EDIT, FS_READ, GIT_STATUS};
    use serde_json::json;

    #[test]
    fn optional_left_out_gets_empty_value() {
        let call = parse(&FS_READ, &json!({"path": "a.rs"})).unwrap();
        assert_eq!(
            call.args,
            [Arg::Str("a.rs".into()), Arg::Int(0), Arg::Int(0)]
        );
        assert_eq!(positional(&call), "(fs-read \"a.rs\")");
        let call = parse(
            &FS_READ,
            &json!({"path": "a.rs", "limit": 5, "offset": null}),
        )
        .unwrap();
        assert_eq!(positional(&call), "(fs-read \"a.rs\" 0 5)");
    }

    #[test]
    fn list_items_parsed_in_declaration_order() {
        let call = parse(
            &FS_EDIT,
            &json!({"path": "a", "edits": [{"new": "y\n", "old": "x"}, {"old": "a", "new": "b", "replace_all": true}]}),
        )
        .unwrap();
        assert_eq!(
            positional(&call),
            "(fs-edit \"a\" \"\" \"\" #f '(((\"old\" . \"x\") (\"new\" . \"y\\n\")) ((\"old\" . \"a\") (\"new\" . \"b\") (\"replace_all\" . #t))))"
        );
    }

    #[test]
    fn errors_name_parameter_element_and_what_to_send() {
        let e = parse(&FS_READ, &json!({"offset": 1})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fs-read: `path` is missing: The file, relative to the workspace root."
        );
        let e = parse(&FS_READ, &json!({"path": "a", "offset": "10"})).unwrap_err();
        assert!(
            e.message
                .contains("`offset` must be a whole number, got the string \"10\""),
            "{e}"
        );
        let e = parse(
            &FS_EDIT,
            &json!({"path": "a", "edits": [{"old": "x", "new": "y"}, {"old": "z", "nwe": "q"}]}),
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "edits[2]: unknown field `nwe`; did you mean `new`?"
        );
        let e = parse(&FS_EDIT, &json!({"path": "a", "edits": [{"old": "x"}]})).unwrap_err();
        assert!(e.message.starts_with("edits[1]: `new` is missing"), "{e}");
        let e = parse(&FS_READ, &json!({"file_path": "a"})).unwrap_err();
        assert!(e.message.contains("did you mean `path`?"), "{e}");
        let e = parse(&GIT_STATUS, &json!({"x": 1})).unwrap_err();
        assert!(e.message.contains("takes no arguments"), "{e}");
        let e = parse_text(&FS_READ, r#"{"path": "a", "path": "b"}"#).unwrap_err();
        assert!(e.message.contains("`path` is given twice"), "{e}");
    }

    #[test]
    fn list_as_string_is_a_quirk() {
        let call = parse(
            &FS_EDIT,
            &json!({"path": "a", "edits": "[{\"old\": \"x\", \"new\": \"y\"}]"}),
        )
        .unwrap();
        assert_eq!(call.quirks, ["list-as-string"]);
        assert_eq!(call.arg("edits").as_list().len(), 1);
        let e = parse(&FS_EDIT, &json!({"path": "a", "edits": "x -> y"})).unwrap_err();
        assert!(e.message.contains("not such a list"), "{e}");
    }

    #[test]
    fn empty_argument_text_is_an_empty_object() {
        assert!(parse_text(&GIT_STATUS, "").is_ok());
        assert!(parse_text(&GIT_STATUS, "{}").is_ok());
    }
}
