//! Reading a scenario: from the s-expressions of one file to a checked
//! [`Scenario`], every field validated against its shape (and each
//! scripted call against its tool's declaration), each error naming the
//! place and what to write instead.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::sexp::{self, Datum, Pos, Sexp};
use super::{
    CHANNELS, Check, DECISIONS, Expect, Mode, Reply, Scenario, ScenarioError, ScriptedCallSpec,
};
use crate::call::{Decl, Kind};
use crate::prim::table::{ALL, lookup};

/// Parses the text of one scenario file.
pub fn parse_str(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
    let err = |pos: Option<Pos>, message: String| ScenarioError {
        origin: origin.to_string(),
        pos,
        message,
    };
    let data = sexp::read_all(text).map_err(|e| err(Some(e.pos), e.message))?;
    let [top] = data.as_slice() else {
        return Err(err(
            data.get(1).map(|d| d.pos),
            format!(
                "a scenario file holds exactly one (scenario ...) form, found {}",
                data.len()
            ),
        ));
    };
    Builder { origin }.scenario(top)
}

struct Builder<'a> {
    origin: &'a str,
}

type Res<T> = Result<T, ScenarioError>;

impl Builder<'_> {
    fn err<T>(&self, at: &Sexp, message: impl Into<String>) -> Res<T> {
        Err(ScenarioError {
            origin: self.origin.to_string(),
            pos: Some(at.pos),
            message: message.into(),
        })
    }

    fn list<'s>(&self, s: &'s Sexp, what: &str) -> Res<&'s [Sexp]> {
        match s.as_list() {
            Some(l) => Ok(l),
            None => self.err(s, format!("{what} must be a list, got {}", s.describe())),
        }
    }

    fn string(&self, s: &Sexp, what: &str) -> Res<String> {
        match s.as_str() {
            Some(v) => Ok(v.to_string()),
            None => self.err(s, format!("{what} must be a string, got {}", s.describe())),
        }
    }

    fn scenario(&self, top: &Sexp) -> Res<Scenario> {
        let items = self.list(top, "a scenario")?;
        if items.first().and_then(Sexp::as_sym) != Some("scenario") {
            return self.err(
                top,
                "a scenario file holds (scenario \"NAME\" (field ...) ...)",
            );
        }
        let Some(name_sexp) = items.get(1) else {
            return self.err(top, "(scenario ...) needs a name string first");
        };
        let name = self.string(name_sexp, "the scenario's name")?;
        let mut s = Scenario {
            name,
            path: PathBuf::new(),
            doc: String::new(),
            channel: String::new(),
            benign: false,
            modes: Vec::new(),
            files: Vec::new(),
            links: Vec::new(),
            outside: Vec::new(),
            git: None,
            replies: Vec::new(),
            answers: BTreeMap::new(),
            expect: Vec::new(),
        };
        let mut seen: Vec<&str> = Vec::new();
        let mut benign_said = None;
        for field in &items[2..] {
            let parts = self.list(field, "a scenario field")?;
            let Some(key) = parts.first().and_then(Sexp::as_sym) else {
                return self.err(field, "a field starts with its name, as in (doc \"...\")");
            };
            if seen.contains(&key) {
                return self.err(field, format!("({key} ...) is given twice; merge them"));
            }
            seen.push(key);
            let args = &parts[1..];
            match key {
                "doc" => s.doc = self.one_string(field, args, "doc")?,
                "channel" => {
                    let c = match args {
                        [one] => one.as_sym().or(one.as_str()).map(str::to_string),
                        _ => None,
                    };
                    match c {
                        Some(c) if CHANNELS.contains(&c.as_str()) => s.channel = c,
                        _ => {
                            return self.err(
                                field,
                                format!("(channel NAME) takes one of {}", CHANNELS.join(", ")),
                            );
                        }
                    }
                }
                "benign" => {
                    if !args.is_empty() {
                        return self.err(field, "(benign) takes nothing");
                    }
                    benign_said = Some(field.pos);
                }
                "modes" => {
                    for m in args {
                        match m.as_sym().and_then(Mode::parse) {
                            Some(mode) if !s.modes.contains(&mode) => s.modes.push(mode),
                            _ => {
                                return self.err(
                                    m,
                                    "modes are interactive and unattended, each at most once",
                                );
                            }
                        }
                    }
                }
                "files" => s.files = self.pairs(args, "files")?,
                "links" => s.links = self.pairs(args, "links")?,
                "outside" => s.outside = self.pairs(args, "outside")?,
                "git" => {
                    let mut paths = Vec::new();
                    for a in args {
                        paths.push(self.string(a, "a path to commit")?);
                    }
                    s.git = Some(paths);
                }
                "replies" => {
                    for r in args {
                        s.replies.push(self.reply(r)?);
                    }
                }
                "answers" => {
                    for a in args {
                        let (n, yes) = self.answer(a)?;
                        if s.answers.insert(n, yes).is_some() {
                            return self.err(a, format!("call {n} is answered twice"));
                        }
                    }
                }
                "expect" => {
                    for e in args {
                        s.expect.push(self.expect(e)?);
                    }
                }
                other => {
                    return self.err(
                        field,
                        format!(
                            "unknown field ({other} ...); the fields are doc, channel, benign, \
                             modes, files, links, outside, git, replies, answers, expect"
                        ),
                    );
                }
            }
        }
        if s.modes.is_empty() {
            return self.err(
                top,
                "(modes interactive unattended) is missing: name the modes to run",
            );
        }
        if s.channel.is_empty() {
            return self.err(
                top,
                format!("(channel NAME) is missing; one of {}", CHANNELS.join(", ")),
            );
        }
        if s.replies.is_empty() {
            return self.err(
                top,
                "(replies ...) is missing: the scripted model needs replies",
            );
        }
        self.check_numbers(top, &s)?;
        let expects_finding = s
            .expect
            .iter()
            .any(|e| matches!(&e.check, Check::Decision(_, d) if d == "security" || d == "deny"));
        if let Some(pos) = benign_said
            && expects_finding
        {
            return Err(ScenarioError {
                origin: self.origin.to_string(),
                pos: Some(pos),
                message: "a (benign) scenario cannot expect a security or deny decision".into(),
            });
        }
        s.benign = benign_said.is_some() || !expects_finding;
        Ok(s)
    }

    /// Call numbers in answers and expectations must name scripted calls.
    fn check_numbers(&self, top: &Sexp, s: &Scenario) -> Res<()> {
        let count = s.calls().len();
        for n in s.answers.keys() {
            if *n == 0 || *n > count {
                return self.err(
                    top,
                    format!(
                        "(answers (confirm {n} ...)): there are {count} calls, numbered from 1"
                    ),
                );
            }
        }
        for e in &s.expect {
            if let Check::Decision(n, _) | Check::Refused(n) | Check::Ran(n) = &e.check
                && (*n == 0 || *n > count)
            {
                return Err(ScenarioError {
                    origin: self.origin.to_string(),
                    pos: Some(e.pos),
                    message: format!(
                        "{}: there are {count} calls, numbered from 1 across the replies",
                        e.check
                    ),
                });
            }
        }
        Ok(())
    }

    fn one_string(&self, field: &Sexp, args: &[Sexp], key: &str) -> Res<String> {
        match args {
            [one] => self.string(one, key),
            _ => self.err(field, format!("({key} \"...\") takes one string")),
        }
    }

    fn pairs(&self, args: &[Sexp], key: &str) -> Res<Vec<(String, String)>> {
        let mut out = Vec::new();
        for a in args {
            let (Some([p, t]), Some(path)) = (
                a.as_list(),
                a.as_list().and_then(|l| l.first()).and_then(Sexp::as_str),
            ) else {
                return self.err(
                    a,
                    format!("each entry of ({key} ...) is (\"PATH\" \"TEXT-OR-TARGET\")"),
                );
            };
            let Some(text) = t.as_str() else {
                return self.err(
                    t,
                    format!("each entry of ({key} ...) is (\"PATH\" \"TEXT-OR-TARGET\")"),
                );
            };
            self.rel_path(p, path, false)?;
            if key == "links" {
                self.rel_path(t, text, true)?;
            }
            out.push((path.to_string(), text.to_string()));
        }
        Ok(out)
    }

    /// A path an expectation checks.
    fn path(&self, p: &Sexp) -> Res<String> {
        let path = self.string(p, "the path")?;
        self.rel_path(p, &path, true)
    }

    /// A path the runner creates or checks must stay in the temp directory:
    /// relative, without `..`; `@outside/NAME` only where allowed.
    fn rel_path(&self, at: &Sexp, path: &str, outside_ok: bool) -> Res<String> {
        let inner = match path.strip_prefix("@outside/") {
            Some(rest) if outside_ok => rest,
            Some(_) => {
                return self.err(
                    at,
                    "an @outside/ path belongs in (outside ...), links and expectations",
                );
            }
            None => path,
        };
        if inner.is_empty()
            || inner.starts_with('/')
            || inner.split('/').any(|c| c == ".." || c.is_empty())
        {
            return self.err(at, format!("{path:?}: give a relative path without `..` or empty parts (scenario setup stays in its temp directory)"));
        }
        Ok(path.to_string())
    }

    fn answer(&self, a: &Sexp) -> Res<(usize, bool)> {
        let shape = "an answer is (confirm N yes) or (confirm N no)";
        let Some([word, n, yes]) = a.as_list() else {
            return self.err(a, shape);
        };
        let (Some("confirm"), Datum::Int(n), Some(yes)) = (word.as_sym(), &n.value, yes.as_sym())
        else {
            return self.err(a, shape);
        };
        let yes = match yes {
            "yes" => true,
            "no" => false,
            _ => return self.err(a, shape),
        };
        Ok((usize::try_from(*n).unwrap_or(0), yes))
    }

    fn reply(&self, r: &Sexp) -> Res<Reply> {
        if let Some(text) = r.as_str() {
            return Ok(Reply::Text(text.to_string()));
        }
        let calls = self.list(r, "a reply (a list of calls, or a string)")?;
        if calls.is_empty() {
            return self.err(
                r,
                "an empty reply: give calls, or a string for a final answer",
            );
        }
        calls
            .iter()
            .map(|c| self.call(c))
            .collect::<Res<_>>()
            .map(Reply::Calls)
    }

    /// `(fs-edit "p" "" "" #f ((("old" . "x") ("new" . "y"))))` → JSON
    /// arguments by the declaration's parameter order; optional parameters
    /// given their empty value are left out, as DESIGN's positional form
    /// says.
    fn call(&self, c: &Sexp) -> Res<ScriptedCallSpec> {
        let parts = self.list(c, "a call")?;
        let Some(name) = parts.first().and_then(Sexp::as_sym) else {
            return self.err(
                c,
                "a call starts with the primitive's name, as in (fs-read \"a.txt\")",
            );
        };
        let Some(decl) = lookup(name) else {
            let names: Vec<&str> = ALL.iter().map(|d| d.name).collect();
            return self.err(
                c,
                format!(
                    "no primitive `{name}`; the primitives are {}",
                    names.join(", ")
                ),
            );
        };
        let values = &parts[1..];
        if values.len() > decl.params.len() {
            return self.err(
                c,
                format!(
                    "{name} takes at most {} arguments: {}",
                    decl.params.len(),
                    params_of(decl)
                ),
            );
        }
        let mut args = Map::new();
        for (i, p) in decl.params.iter().enumerate() {
            let Some(v) = values.get(i) else {
                if p.required {
                    return self.err(c, format!("{name} needs `{}`: {}", p.name, params_of(decl)));
                }
                continue;
            };
            let json = self.json(v)?;
            let fits = match (p.kind, &json) {
                (Kind::String, Value::String(_)) => true,
                (Kind::Integer, Value::Number(_)) => true,
                (Kind::Boolean, Value::Bool(_)) => true,
                // A list may also be sent as a JSON string (a model quirk).
                (Kind::List, Value::Array(_) | Value::String(_)) => true,
                _ => false,
            };
            if !fits {
                let want = match p.kind {
                    Kind::String => "a string",
                    Kind::Integer => "an integer",
                    Kind::Boolean => "#t or #f",
                    Kind::List => {
                        "a list of association lists, as (((\"old\" . \"a\") (\"new\" . \"b\")))"
                    }
                };
                let got = match &json {
                    Value::Object(_) => "one association list; wrap it in a list",
                    _ => v.describe(),
                };
                return self.err(v, format!("{name}'s `{}` takes {want}, got {got}", p.name));
            }
            let empty = match &json {
                Value::String(s) => s.is_empty() && p.kind == Kind::String,
                Value::Number(n) => n.as_i64() == Some(0),
                Value::Bool(b) => !b,
                Value::Array(a) => a.is_empty(),
                _ => false,
            };
            if empty && !p.required {
                continue;
            }
            args.insert(p.name.to_string(), json);
        }
        let args = Value::Object(args);
        if let Err(e) = crate::prim::parse::parse(decl, &args) {
            return self.err(c, format!("the call does not parse: {e}"));
        }
        Ok(ScriptedCallSpec {
            name: name.to_string(),
            args,
            pos: c.pos,
        })
    }

    /// Scenario data as JSON: an association list with string keys is an
    /// object, any other list an array.
    fn json(&self, v: &Sexp) -> Res<Value> {
        Ok(match &v.value {
            Datum::Str(s) => Value::String(s.clone()),
            Datum::Int(n) => Value::from(*n),
            Datum::Bool(b) => Value::Bool(*b),
            Datum::Sym(s) => {
                return self.err(
                    v,
                    format!("`{s}` is a symbol; write text as a string: \"{s}\""),
                );
            }
            Datum::List(_, Some(_)) => {
                return self.err(
                    v,
                    "a dotted pair belongs inside an association list: ((\"key\" . value) ...)",
                );
            }
            Datum::List(items, None) => {
                let is_alist = !items.is_empty()
                    && items
                        .iter()
                        .all(|i| i.as_pair().is_some_and(|(k, _)| k.as_str().is_some()));
                if is_alist {
                    let mut obj = Map::new();
                    for i in items {
                        if let Some((k, val)) = i.as_pair() {
                            let key = k.as_str().unwrap_or_default().to_string();
                            if obj.insert(key.clone(), self.json(val)?).is_some() {
                                return self.err(i, format!("key {key:?} is given twice"));
                            }
                        }
                    }
                    Value::Object(obj)
                } else {
                    if let Some(bad) = items.iter().find(|i| i.as_pair().is_some()) {
                        return self.err(
                            bad,
                            "an association list's keys must all be strings, and every item a pair",
                        );
                    }
                    Value::Array(items.iter().map(|i| self.json(i)).collect::<Res<_>>()?)
                }
            }
        })
    }

    fn expect(&self, e: &Sexp) -> Res<Expect> {
        let shape = "an expectation is (decision N allow|write|security|deny), (refused N), \
                     (ran N), (unchanged PATH), (absent PATH), (content PATH TEXT) or \
                     (no-canary-outside (PATH ...)) or (no-canary-in-requests), optionally \
                     ending with a mode";
        let Some(parts) = e.as_list() else {
            return self.err(e, shape);
        };
        let Some(word) = parts.first().and_then(Sexp::as_sym) else {
            return self.err(e, shape);
        };
        let mut args = &parts[1..];
        let mut mode = None;
        if let Some(last) = args.last()
            && let Some(m) = last.as_sym().and_then(Mode::parse)
        {
            mode = Some(m);
            args = &args[..args.len() - 1];
        }
        let num = |s: &Sexp| match &s.value {
            Datum::Int(n) if *n > 0 => Ok(*n as usize),
            _ => self.err(s, "a call number counts from 1 across the replies"),
        };
        let check = match (word, args) {
            ("decision", [n, d]) => {
                let Some(d) = d.as_sym().filter(|d| DECISIONS.contains(d)) else {
                    return self.err(e, "(decision N allow|write|security|deny)");
                };
                Check::Decision(num(n)?, d.to_string())
            }
            ("refused", [n]) => Check::Refused(num(n)?),
            ("ran", [n]) => Check::Ran(num(n)?),
            ("unchanged", [p]) => Check::Unchanged(self.path(p)?),
            ("absent", [p]) => Check::Absent(self.path(p)?),
            ("content", [p, t]) => Check::Content(self.path(p)?, self.string(t, "the content")?),
            ("no-canary-outside", [l]) => {
                let paths = self.list(l, "the protected paths")?;
                Check::NoCanaryOutside(paths.iter().map(|p| self.path(p)).collect::<Res<_>>()?)
            }
            ("no-canary-in-requests", []) => Check::NoCanaryInRequests,
            _ => return self.err(e, shape),
        };
        Ok(Expect {
            check,
            mode,
            pos: e.pos,
        })
    }
}

fn params_of(decl: &Decl) -> String {
    let names: Vec<String> = decl
        .params
        .iter()
        .map(|p| {
            if p.required {
                p.name.to_string()
            } else {
                format!("[{}]", p.name)
            }
        })
        .collect();
    format!("({} {})", decl.name, names.join(" "))
}
