//! nib's primitives as Scheme procedures, and other host procedures.
//!
//! A primitive is called positionally, in declaration order:
//! `(fs-read "src/a.rs")`, `(fs-read "src/a.rs" 10 20)`,
//! `(fs-edit "a.rs" "" "" #f (list (list (cons "old" "x") (cons "new" "y"))))`.
//! Trailing optional parameters may be left out and get their kind's empty
//! value ("" / 0 / #f / '()). Each argument is checked against its
//! parameter's kind; a wrong one raises a Scheme error that names the
//! primitive, the parameter and what to send.
//!
//! A list parameter takes a list of association lists with **string** keys;
//! an entry may be a pair `("old" . "x")` or a two-element list
//! `("old" "x")`, and a hash map with string keys is accepted as an element
//! too. A symbol key is an error, not ignored. Element fields are checked
//! like a JSON call's (unknown field with a suggestion, field given twice,
//! required field missing) and kept in declaration order, so a call from
//! Scheme and the same call from JSON are the same [`Call`].
//!
//! The resulting [`Call`] goes to the engine's [`HostFn`]; its JSON result
//! comes back as a Scheme value (see `convert`), and its `Err(message)` is
//! raised as a Scheme error `"name: message"` that a strategy can catch
//! with `with-handler`. A panic in the host is caught and raised the same
//! way.

use std::sync::Arc;

use serde_json::Value;
use steel::SteelVal;
use steel::rerrs::ErrorKind as SteelKind;
use steel::rvals::FromSteelVal;

use super::HostFn;
use super::convert::{alist_entry, describe, json_to_steel, steel_to_json};
use super::error::{panic_message, steel_error};
use crate::call::{Arg, Call, Decl, Kind, Param};
use crate::edit::did_you_mean;
use crate::prim::parse::ArgError;

type SteelResult = steel::rvals::Result<SteelVal>;

/// The Scheme procedure for a primitive.
pub(crate) fn primitive(decl: &'static Decl, host: HostFn) -> SteelVal {
    SteelVal::anonymous_boxed_function(Arc::new(move |args: &[SteelVal]| {
        let call =
            to_call(decl, args).map_err(|e| steel_error(SteelKind::Generic, e.to_string()))?;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _host = super::budget::HostSection::enter();
            host(call)
        }))
        .map_err(|p| {
            steel_error(
                SteelKind::Generic,
                format!("{}: the host failed: {}", decl.name, panic_message(&*p)),
            )
        })?
        .map_err(|m| steel_error(SteelKind::Generic, format!("{}: {m}", decl.name)))?;
        json_to_steel(&result)
    }))
}

/// A host procedure over JSON arguments (see `Engine::register`).
pub(crate) fn json_procedure(
    name: &str,
    f: Arc<dyn Fn(Vec<Value>) -> Result<Value, String> + Send + Sync>,
) -> SteelVal {
    let name = name.to_string();
    SteelVal::anonymous_boxed_function(Arc::new(move |args: &[SteelVal]| -> SteelResult {
        let mut json = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let v = steel_to_json(a).map_err(|m| {
                steel_error(
                    SteelKind::ConversionError,
                    format!("{name}: argument {} cannot be sent to the host: {m}", i + 1),
                )
            })?;
            json.push(v);
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _host = super::budget::HostSection::enter();
            f(json)
        }))
        .map_err(|p| {
            steel_error(
                SteelKind::Generic,
                format!("{name}: the host failed: {}", panic_message(&*p)),
            )
        })?
        .map_err(|m| steel_error(SteelKind::Generic, format!("{name}: {m}")))?;
        json_to_steel(&result)
    }))
}

/// The positional form of a primitive, for messages: `(fs-read path [offset] [limit])`.
pub(crate) fn signature(decl: &Decl) -> String {
    let mut s = format!("({}", decl.name);
    for p in decl.params {
        if p.required {
            s.push_str(&format!(" {}", p.name));
        } else {
            s.push_str(&format!(" [{}]", p.name));
        }
    }
    s.push(')');
    s
}

/// Positional Scheme arguments to a [`Call`].
/// Errors are the JSON parser's type, naming the tool the same way.
pub(crate) fn to_call(decl: &'static Decl, args: &[SteelVal]) -> Result<Call, ArgError> {
    let err = |message: String| ArgError {
        tool: decl.name,
        message,
    };
    let min = decl
        .params
        .iter()
        .rposition(|p| p.required)
        .map_or(0, |i| i + 1);
    let max = decl.params.len();
    if args.len() < min || args.len() > max {
        let want = match (min, max) {
            (0, 0) => "no arguments".to_string(),
            (a, b) if a == b => format!("{a} argument{}", if a == 1 { "" } else { "s" }),
            (a, b) => format!("{a} to {b} arguments"),
        };
        return Err(err(format!(
            "takes {want}, {}, got {}",
            signature(decl),
            args.len()
        )));
    }
    let mut out = Vec::with_capacity(max);
    for (i, p) in decl.params.iter().enumerate() {
        let arg = match args.get(i) {
            Some(v) => arg(p, v, "").map_err(err)?,
            None => Arg::empty(p.kind),
        };
        out.push(arg);
    }
    let call = Call {
        decl,
        args: out,
        quirks: vec![],
        present: decl
            .params
            .iter()
            .take(args.len())
            .map(|p| p.name)
            .collect(),
    };
    // The same call-level rules as a JSON call (the declaration's
    // either/or groups), with the same messages.
    crate::prim::parse::check_call(&call)?;
    Ok(call)
}

fn arg(p: &Param, v: &SteelVal, at: &str) -> Result<Arg, String> {
    let wrong = |want: &str| format!("{at}`{}` must be {want}, got {}", p.name, describe(v));
    match p.kind {
        Kind::String => match v {
            SteelVal::StringV(s) => Ok(Arg::Str(s.as_str().to_string())),
            _ => Err(wrong("a string")),
        },
        Kind::Integer => match v {
            SteelVal::IntV(i) => Ok(Arg::Int(*i as i64)),
            SteelVal::BigNum(_) => i64::from_steelval(v)
                .map(Arg::Int)
                .map_err(|_| wrong("an integer that fits in 64 bits")),
            _ => Err(wrong("an integer (a whole number like 10)")),
        },
        Kind::Boolean => match v {
            SteelVal::BoolV(b) => Ok(Arg::Bool(*b)),
            _ => Err(wrong("#t or #f")),
        },
        Kind::List => list(p, v),
    }
}

const ALIST_EXAMPLE: &str = "(list (cons \"old\" \"a\") (cons \"new\" \"b\"))";

fn list(p: &Param, v: &SteelVal) -> Result<Arg, String> {
    let items: Vec<SteelVal> = match v {
        SteelVal::ListV(items) => items.iter().cloned().collect(),
        SteelVal::VectorV(items) => items.iter().cloned().collect(),
        _ => {
            return Err(format!(
                "`{}` must be a list of association lists with string keys, like (list {ALIST_EXAMPLE}); got {}",
                p.name,
                describe(v)
            ));
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("{}[{}]: ", p.name, i + 1);
        let entries = entries(item).map_err(|m| format!("{at}{m}"))?;
        out.push(element(p, entries, &at)?);
    }
    Ok(Arg::List(out))
}

/// The (key, value) entries of one list element.
fn entries(item: &SteelVal) -> Result<Vec<(SteelVal, SteelVal)>, String> {
    let not_alist = || {
        format!(
            "expected an association list with string keys, like {ALIST_EXAMPLE}; got {}",
            describe(item)
        )
    };
    match item {
        SteelVal::ListV(l) if l.is_empty() => Ok(Vec::new()),
        SteelVal::ListV(l) => l
            .iter()
            .map(|e| alist_entry(e).ok_or_else(not_alist))
            .collect(),
        SteelVal::HashMapV(m) => Ok(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        _ => Err(not_alist()),
    }
}

fn element(
    p: &Param,
    entries: Vec<(SteelVal, SteelVal)>,
    at: &str,
) -> Result<Vec<(String, Arg)>, String> {
    let known: Vec<&str> = p.items.iter().map(|f| f.name).collect();
    let mut given: Vec<(String, SteelVal)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let key = match &k {
            SteelVal::StringV(s) => s.as_str().to_string(),
            SteelVal::SymbolV(s) => {
                return Err(format!(
                    "{at}the key '{0} is a symbol; keys must be strings: write (\"{0}\" . …), not ({0} . …)",
                    s.as_str()
                ));
            }
            other => {
                return Err(format!("{at}keys must be strings, got {}", describe(other)));
            }
        };
        if given.iter().any(|(g, _)| *g == key) {
            return Err(format!("{at}`{key}` is given twice; give each field once"));
        }
        if !known.contains(&key.as_str()) {
            let hint = match did_you_mean(&key, &known) {
                Some(k) => format!("; did you mean `{k}`?"),
                None => {
                    let names: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                    format!("; the fields are {}", names.join(", "))
                }
            };
            return Err(format!("{at}unknown field `{key}`{hint}"));
        }
        given.push((key, v));
    }
    let mut fields = Vec::with_capacity(p.items.len());
    for field in p.items {
        match given.iter().find(|(k, _)| k == field.name) {
            Some((_, v)) => {
                // `("old" "x")` reads as key "old" with the list ("x"); for a
                // scalar field take the one value.
                let v = match (field.kind, v) {
                    (Kind::List, _) => v.clone(),
                    (_, SteelVal::ListV(l)) if l.len() == 1 => {
                        l.iter().next().cloned().unwrap_or(SteelVal::Void)
                    }
                    _ => v.clone(),
                };
                fields.push((field.name.to_string(), arg(field, &v, at)?));
            }
            None if field.required => {
                return Err(format!("{at}`{}` is missing: {}", field.name, field.doc));
            }
            None => {}
        }
    }
    Ok(fields)
}
