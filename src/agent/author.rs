//! What `nib strategy` offers a strategy's author: the strategies there
//! are, a file checked without running a session, a starting file, and
//! names that are nearly right.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::procs::HOST_PROCS;
use super::strategy::{SHIPPED, Source};
pub use super::strategy::{did_you_mean, found};
use crate::engine::{Engine, EngineError, EngineOptions, ErrorKind, Location};
use crate::prim::table::ALL;

/// What a checked file registered.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The file's hooks, in order: the point and where it was registered.
    pub hooks: Vec<(String, Option<Location>)>,
    /// Whether the file defines a loop of its own (`run`).
    pub defines_run: bool,
}

/// Loads `spec` (a shipped name or a file) over the default loop in a
/// sandboxed engine, as a session would, without a model or a workspace:
/// its top level runs (a primitive it calls there is refused), `on`
/// checks each hook's point and arity. Returns what it registered, or the
/// error with its file and line.
pub fn check(spec: &Path) -> Result<CheckReport, EngineError> {
    let source = Source::resolve(spec).map_err(|e| EngineError::new(ErrorKind::Load, e))?;
    let refuse = Arc::new(|call: crate::call::Call| {
        Err(format!(
            "`{}` does not run under nib strategy check (no workspace)",
            call.decl.name
        ))
    });
    let mut engine = Engine::new(
        &ALL,
        refuse,
        EngineOptions {
            strategy_dirs: source.dir().into_iter().collect(),
            deadline: Some(Duration::from_secs(10)),
        },
    )?;
    for name in HOST_PROCS {
        let name = *name;
        engine.register(name, move |_| -> Result<Value, String> {
            Err(format!("`{name}` does not run under nib strategy check"))
        });
    }
    Source::Shipped("default").load(&mut engine)?;
    let before = engine.hook_count()?;
    source.load(&mut engine)?;
    let hooks = engine.hooks()?.into_iter().skip(before).collect();
    let text = match &source {
        Source::File(p) => std::fs::read_to_string(p).unwrap_or_default(),
        Source::Shipped(name) => SHIPPED
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.to_string())
            .unwrap_or_default(),
    };
    Ok(CheckReport {
        hooks,
        defines_run: text.contains("(define (run "),
    })
}

/// The shipped strategies, each with the first line of its description.
pub fn shipped() -> Vec<(&'static str, String)> {
    SHIPPED
        .iter()
        .map(|(name, text)| {
            let about = text
                .lines()
                .next()
                .map(|l| l.trim_start_matches(';').trim())
                .unwrap_or_default();
            let about = about
                .strip_prefix(&format!("{name}:"))
                .unwrap_or(about)
                .trim();
            (*name, about.to_string())
        })
        .collect()
}

/// A commented starting file for a strategy named `name`.
pub fn template(name: &str) -> String {
    format!(
        r#";; {name}: what this strategy does, in one line.
;;
;;   nib strategy check {name}.scm       (load it, list its hooks)
;;   nib exec --hook {name}.scm "the task"
;;
;; A hook is (on POINT procedure). Each point passes its procedure
;; arguments and takes back a result (docs/strategies.md); a wrong result
;; or a wrong number of arguments is an error naming this file and line,
;; and what the hook guards does not happen.

;; before-tool: (call) -> the call to run, or (refuse "why").
(on "before-tool"
    (lambda (call)
      (if (string-contains? (assoc-ref (assoc-ref call "args" '()) "command" "") "git push")
          (refuse "{name}: no pushing from here; say what to push instead")
          call)))

;; The other points, to uncomment as needed:
;;
;; (on "task-start" (lambda (task) #f))              ; #f, or the task text to use
;; (on "before-model" (lambda (messages tools) #f))  ; #f, messages, or (offer messages tools)
;; (on "after-reply" (lambda (reply) #f))            ; #f, or the reply to act on
;; (on "after-tool" (lambda (call result) #f))       ; #f, or the result the model gets
;; (on "before-finish" (lambda (text) #f))           ; #f to end, or a string to go on
;; (on "session-end" (lambda (summary) #f))          ; summary: tasks, usage
;;
;; From any hook: (stop "done" "why") ends the run; (task-text), (task-usage),
;; (session-usage), (session-get key default), (session-set! key value).
"#
    )
}
