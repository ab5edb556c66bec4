//! The Scheme engine: one sandboxed Steel interpreter per session, with
//! nib's primitives registered into it, running strategies.
//!
//! - `mod.rs` (this file): the [`Engine`] API — creating an engine,
//!   running files and source, calling Scheme functions, registering host
//!   procedures, the deadline and output plumbing around every entry.
//! - `sandbox`: what Scheme can reach (`STEEL_HOME`, poisoned builtins,
//!   per-engine hardening), where its output goes, bounded sleeps.
//! - `confine`: what a strategy may load — modules only from the strategy
//!   directories, no procedural macros — checked before steel sees the
//!   source.
//! - `prims`: primitives as positional Scheme procedures (argument checks,
//!   [`Call`] building, the [`HostFn`] round trip) and JSON host procedures.
//! - `convert`: JSON ⇄ Scheme values (objects are association lists with
//!   string keys; `null` is `void`).
//! - `watchdog`: the per-run deadline that stops a runaway strategy.
//! - `budget`: the engine's memory budget (nib's allocator counts what
//!   each engine's Scheme allocates on its thread).
//! - `error`: [`EngineError`], rendered with `file:line:col`.
//!
//! The prelude (`scheme/prelude.scm`, compiled into the binary) is the
//! module `nib/prelude`: required at top level when the engine starts and
//! added to the prelude of every module, so strategies and the modules
//! they require all see its helpers, the primitives and registered host
//! procedures.
//!
//! Scheme output (`display` and friends) never reaches the host's stdout:
//! it is kept for [`Engine::take_output`] or sent to the callback given to
//! [`Engine::set_output`].
//!
//! An `Engine` is not `Send`: steel keeps its values in `Rc`s and its
//! builtin modules in thread-locals. Create it on the thread that uses it
//! (one engine thread per session, talking to the rest over channels).
//! Creating an engine costs about 0.15 s in release (0.25 s for the first
//! in a process); create one per session and keep it. Call
//! [`init_process`] early in `main`, before other threads start: it sets
//! `STEEL_HOME` for the process (`Engine::new` calls it too).

mod budget;
mod confine;
mod convert;
mod error;
mod limits;
mod nesting;
mod prims;
mod sandbox;
mod watchdog;

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use steel::SteelVal;
use steel::steel_vm::builtin::BuiltInModule;
use steel::steel_vm::engine::Engine as SteelEngine;

pub use error::{EngineError, ErrorKind, Location};
pub use sandbox::{OUTPUT_CAP, Stream, init_process};

use crate::call::{Call, Decl};
use confine::{Confinement, Origin};
use convert::{json_to_steel, steel_to_json};
use error::{SourceNames, panic_message};
use sandbox::OutputSink;
use watchdog::{Fired, Watchdog};

/// What the host does with a primitive call from Scheme. Returns the tool
/// result as JSON (an object), or Err(message) for a host failure.
pub type HostFn = Arc<dyn Fn(Call) -> Result<Value, String> + Send + Sync>;

/// How an engine is set up.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Where `require` may load modules from (besides nib's shipped
    /// `scheme/` directory). Each must exist.
    pub strategy_dirs: Vec<PathBuf>,
    /// The longest a top-level run (`run_file`, `run_source`, `call`) may
    /// take before it is stopped. `None`: no limit.
    pub deadline: Option<Duration>,
}

/// The prelude every engine loads, as the in-memory module `nib/prelude`.
const PRELUDE: &str = include_str!("../../scheme/prelude.scm");

/// A module every module requires after steel's own prelude. The caps on
/// allocating primitives are Rust (`limits.rs`), bound under every name;
/// but inside a module steel's compiler folds a call of a constant
/// builtin with literal arguments (`(expt 7 100000000)`) at compile time
/// with its own uncapped copy, out of the deadline's reach, and compiles
/// `+ - * /` to instructions that call its own arithmetic. Defined here,
/// the names that can build huge numbers are no builtins to the compiler:
/// they are neither folded nor inlined, and reach the capped procedures
/// (`%capped*` and the like, bound by `sandbox.rs`).
const LIMITS_MODULE: &str = "nib/limits";
const LIMITS: &str = r#"
(provide expt arithmetic-shift * / + - square cons equal?)
(define (expt b e) (#%prim.expt b e))
(define (arithmetic-shift n by) (#%prim.arithmetic-shift n by))
(define * %capped*)
(define / %capped/)
(define + %capped+)
(define - %capped-)
(define square %cappedsquare)
(define cons %cappedcons)
(define equal? %cappedequal?)
"#;
const PRELUDE_MODULE: &str = "nib/prelude";

/// nib's shipped Scheme directory (`scheme/` in the source tree, as built),
/// which `require` may load from when it exists. An installed binary far
/// from its source tree has none; give its strategies in
/// `EngineOptions::strategy_dirs`.
pub fn shipped_scheme_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scheme")
}

/// A sandboxed Scheme engine for one session.
pub struct Engine {
    vm: SteelEngine,
    /// This engine's own `steel/base` (the prelude of every module).
    base: BuiltInModule,
    confine: Confinement,
    names: SourceNames,
    output: Arc<OutputSink>,
    deadline: Option<Duration>,
    watchdog: Option<Watchdog>,
    /// What this engine's Scheme allocates during a run.
    memory: Arc<budget::Account>,
    hook_timeout: Arc<std::sync::Mutex<Option<Duration>>>,
    /// Set when a module from outside the strategy directories got
    /// compiled after all, or steel panicked; the engine then refuses to
    /// run anything.
    tainted: Option<String>,
}

impl Engine {
    /// A sandboxed engine with `prims` registered as Scheme procedures that
    /// call `host`, the prelude loaded, and `require` confined to
    /// `opts.strategy_dirs` and the shipped `scheme/` directory.
    pub fn new(
        prims: &[&'static Decl],
        host: HostFn,
        opts: EngineOptions,
    ) -> Result<Engine, EngineError> {
        sandbox::prepare_thread();

        let mut allowed = Vec::new();
        for dir in &opts.strategy_dirs {
            let canonical = dir.canonicalize().map_err(|e| {
                EngineError::new(
                    ErrorKind::Load,
                    format!("strategy directory {}: {e}", dir.display()),
                )
            })?;
            if !canonical.is_dir() {
                return Err(EngineError::new(
                    ErrorKind::Load,
                    format!("strategy directory {} is not a directory", dir.display()),
                ));
            }
            allowed.push(canonical);
        }
        if let Ok(shipped) = shipped_scheme_dir().canonicalize()
            && !allowed.contains(&shipped)
        {
            allowed.push(shipped);
        }

        let mut vm = guard("creating the Scheme engine", SteelEngine::new_sandboxed)?;
        let mut base = sandbox::harden(&mut vm);
        let memory = budget::Account::new(vm.get_thread_state_controller());
        let watchdog = match opts.deadline {
            Some(_) => Some(
                Watchdog::new(vm.get_thread_state_controller()).map_err(|e| {
                    EngineError::new(
                        ErrorKind::Internal,
                        format!("cannot start the deadline watchdog: {e}"),
                    )
                })?,
            ),
            None => None,
        };

        // A hook call's own time limit (`set_hook_timeout`), armed and
        // disarmed by the prelude around each hook call.
        let hook_timeout: Arc<std::sync::Mutex<Option<Duration>>> = Arc::default();
        let limit = watchdog.as_ref().map(Watchdog::hook_limit);
        let (arm, disarm) = hook_procs(limit, Arc::clone(&hook_timeout));
        for (name, proc) in [("%hook-arm", arm), ("%hook-disarm", disarm)] {
            bind(&mut vm, name, &proc);
            base.register_value(name, proc);
        }
        // What `on` checks a hook's arity with.
        let arity = SteelVal::FuncV(procedure_arity);
        bind(&mut vm, "%procedure-arity", &arity);
        base.register_value("%procedure-arity", arity);
        for decl in prims {
            let proc = prims::primitive(decl, Arc::clone(&host));
            bind(&mut vm, decl.name, &proc);
            base.register_value(decl.name, proc);
        }

        // steel searches its own search directories (from
        // STEEL_SEARCH_PATHS) before the ones added here; confinement
        // resolves in the same order.
        let mut search = steel::compiler::modules::steel_search_dirs();
        for dir in &allowed {
            vm.add_search_directory(dir.clone());
            search.push(dir.clone());
        }
        let mut confine = Confinement::new(allowed, search);

        // The prelude: a named module, required by every module (through
        // the module prelude string) and by top-level code.
        vm.register_steel_module(LIMITS_MODULE.to_string(), LIMITS.to_string());
        confine.add_named(LIMITS_MODULE);
        vm.register_steel_module(PRELUDE_MODULE.to_string(), PRELUDE.to_string());
        confine.add_named(PRELUDE_MODULE);
        let module_prelude = format!(
            "{}(require \"{LIMITS_MODULE}\")\n(require \"{PRELUDE_MODULE}\")\n",
            steel::compiler::modules::PRELUDE_STRING
        );
        vm.set_prelude_string(Cow::Owned(module_prelude));

        let mut engine = Engine {
            vm,
            base,
            confine,
            names: SourceNames::default(),
            output: Arc::new(OutputSink::new()),
            deadline: opts.deadline,
            watchdog,
            memory,
            hook_timeout,
            tainted: None,
        };
        engine.run_source(
            "nib/prelude",
            &format!("(require \"{LIMITS_MODULE}\")\n(require \"{PRELUDE_MODULE}\")"),
        )?;
        Ok(engine)
    }

    /// Run a Scheme file; returns the value of its last expression converted
    /// to JSON. Relative `require`s resolve from the file's directory.
    pub fn run_file(&mut self, path: &Path) -> Result<Value, EngineError> {
        let source = std::fs::read_to_string(path).map_err(|e| {
            EngineError::new(
                ErrorKind::Load,
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
        self.run_program(source, Some(path), &path.display().to_string())
    }

    /// Run Scheme source text; `name` names it in errors. Relative
    /// `require`s resolve as steel does for text without a file: from the
    /// working directory, then the strategy directories.
    pub fn run_source(&mut self, name: &str, source: &str) -> Result<Value, EngineError> {
        self.run_program(source.to_string(), None, name)
    }

    /// Call a Scheme function defined by what was run (a top-level
    /// definition, or a name a required module provides), with JSON args
    /// converted to Scheme.
    pub fn call(&mut self, function: &str, args: Vec<Value>) -> Result<Value, EngineError> {
        self.check_usable()?;
        let f = self.vm.extract_value(function).map_err(|_| {
            EngineError::new(
                ErrorKind::Scheme,
                format!("there is no Scheme function `{function}` (define it, or require a module that provides it)"),
            )
        })?;
        if !is_procedure(&f) {
            return Err(EngineError::new(
                ErrorKind::Scheme,
                format!(
                    "`{function}` is not a procedure, it is {}",
                    convert::describe(&f)
                ),
            ));
        }
        let mut steel_args = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            steel_args.push(json_to_steel(a).map_err(|e| {
                EngineError::new(
                    ErrorKind::Conversion,
                    format!("argument {} to `{function}`: {e}", i + 1),
                )
            })?);
        }
        let out = self.execute(|vm| vm.call_function_with_args(f, steel_args))?;
        to_json(&out, function)
    }

    /// Whether `name` is bound in the engine (by the prelude, a strategy,
    /// or a host procedure).
    pub fn defines(&self, name: &str) -> bool {
        self.vm.extract_value(name).is_ok()
    }

    /// How many hooks the loaded code registered (the prelude's `on`).
    pub fn hook_count(&mut self) -> Result<usize, EngineError> {
        let n = self.call("hook-count", Vec::new())?;
        Ok(n.as_u64().unwrap_or(0) as usize)
    }

    /// The hooks registered so far, in order: each one's point and where
    /// it was registered, when known.
    pub fn hooks(&mut self) -> Result<Vec<(String, Option<Location>)>, EngineError> {
        let listed = self.call("hook-registry", Vec::new())?;
        let mut out = Vec::new();
        for entry in listed.as_array().map(Vec::as_slice).unwrap_or_default() {
            let point = entry.get(2).and_then(Value::as_str).unwrap_or_default();
            let place = match (
                entry.get(0).and_then(Value::as_u64),
                entry.get(1).and_then(Value::as_u64),
            ) {
                (Some(start), Some(id)) => {
                    error::place_of(&self.vm, &self.names, start as usize, id as u32)
                }
                _ => None,
            };
            out.push((point.to_string(), place));
        }
        Ok(out)
    }

    /// Hooks registered from index `from` on may only tighten (a
    /// workspace's hooks); see `scheme/prelude.scm`.
    pub fn restrict_hooks_from(&mut self, from: usize) -> Result<(), EngineError> {
        self.call("restrict-hooks-from!", vec![Value::from(from as u64)])
            .map(drop)
    }

    /// Every hook registered from now on (from inside a running hook) may
    /// only tighten.
    pub fn restrict_new_hooks(&mut self) -> Result<(), EngineError> {
        self.call("restrict-new-hooks!", Vec::new()).map(drop)
    }

    /// Register an extra host procedure: Scheme calls `(name arg ...)`, the
    /// arguments arrive as JSON, the result goes back as Scheme. `Err`
    /// raises a Scheme error `"name: message"`. Register before running the
    /// code that uses it (names are bound when code is compiled); modules
    /// required afterwards see it too.
    pub fn register(
        &mut self,
        name: &str,
        f: impl Fn(Vec<Value>) -> Result<Value, String> + Send + Sync + 'static,
    ) {
        let proc = prims::json_procedure(name, Arc::new(f));
        bind(&mut self.vm, name, &proc);
        // steel caches the expression it generates for a module on first
        // use; register a fresh copy so later modules see the new name.
        let mut base = sandbox::copy_module(&self.base);
        base.register_value(name, proc);
        self.vm.register_module(base.clone());
        self.base = base;
    }

    /// Each hook call may run this long (`None`: only the run's deadline
    /// holds); one that runs longer stops the run with an error naming the
    /// hook. Needs a deadline (`EngineOptions::deadline`).
    pub fn set_hook_timeout(&mut self, limit: Option<Duration>) {
        *self
            .hook_timeout
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = limit;
    }

    /// The most one run of this engine's Scheme may grow the heap by
    /// (1 GiB unless set): past it, the run stops with an error. Counted
    /// for this engine alone, so engines on other threads never stop it.
    pub fn set_memory_budget(&mut self, bytes: u64) {
        self.memory.set_limit(bytes);
    }

    /// Stop whatever Scheme runs once `flag` is set (a client's Esc), at
    /// its next instruction. Needs a deadline (`EngineOptions::deadline`).
    pub fn watch_cancel(&mut self, flag: Arc<std::sync::atomic::AtomicBool>) {
        if let Some(w) = &self.watchdog {
            w.watch_cancel(flag);
        }
    }

    /// Send Scheme output (`display`, `write`, the error port, …) to `f` as it is
    /// written, instead of keeping it for [`Engine::take_output`].
    pub fn set_output(&mut self, f: impl Fn(Stream, &str) + Send + Sync + 'static) {
        self.output.set_callback(Arc::new(f));
    }

    /// The Scheme output kept since the last call (stdout and stderr
    /// interleaved), when no [`Engine::set_output`] callback is set.
    pub fn take_output(&mut self) -> String {
        self.output.take()
    }

    /// The directories `require` may load from, canonical.
    pub fn strategy_roots(&self) -> &[PathBuf] {
        self.confine.allowed()
    }

    fn check_usable(&self) -> Result<(), EngineError> {
        match &self.tainted {
            Some(why) => Err(EngineError::new(ErrorKind::Refused, why.clone())),
            None => Ok(()),
        }
    }

    fn run_program(
        &mut self,
        source: String,
        path: Option<&Path>,
        name: &str,
    ) -> Result<Value, EngineError> {
        self.check_usable()?;
        let origin = match path {
            Some(p) => Origin::File(p),
            None => Origin::Text(name),
        };
        nesting::check(&source, name)?;
        self.confine.check(&source, origin)?;
        if path.is_none() {
            self.names.remember(name, &source);
        }

        let before: HashSet<PathBuf> = self.vm.modules().keys().cloned().collect();
        let compiled = {
            let _running = sandbox::enter(&self.output, self.deadline);
            let vm = &mut self.vm;
            let r = guard("compiling Scheme", || match path {
                Some(p) => vm.emit_raw_program(source, p.to_path_buf()),
                None => vm.emit_raw_program_no_path(source),
            })?;
            r.map_err(|e| error::render(&self.vm, &self.names, &e))?
        };
        let outside = self
            .vm
            .modules()
            .keys()
            .find(|k| !before.contains(*k) && !self.confine.module_key_allowed(k))
            .cloned();
        if let Some(bad) = outside {
            let why = format!(
                "a module from outside the strategy directories was compiled ({}); \
                 this engine refuses to run anything further",
                bad.display()
            );
            self.tainted = Some(why.clone());
            return Err(EngineError::new(ErrorKind::Refused, why));
        }

        let values = self.execute(|vm| vm.run_raw_program(compiled))?;
        to_json(values.last().unwrap_or(&SteelVal::Void), name)
    }

    /// Run `f` on the VM with the output routed, the deadline armed and
    /// panics caught; turn a failure into an [`EngineError`].
    fn execute<R>(
        &mut self,
        f: impl FnOnce(&mut SteelEngine) -> steel::rvals::Result<R>,
    ) -> Result<R, EngineError> {
        let _running = sandbox::enter(&self.output, self.deadline);
        let controller = self.vm.get_thread_state_controller();
        let vm = &mut self.vm;
        let memory = &self.memory;
        let started = std::time::Instant::now();
        let counted = || {
            let _attributed = budget::Attributed::enter(memory);
            guard("running Scheme", || f(vm))
        };
        let (out, fired) = match (&mut self.watchdog, self.deadline) {
            (Some(w), Some(d)) => w.run(d, counted),
            _ => {
                controller.resume();
                let out = counted();
                // Clear an interrupt from the memory budget.
                controller.resume();
                (out, None)
            }
        };
        let over_budget = self.memory.went_over();
        // A panic inside steel leaves its VM half unwound (its stack, its
        // frames): nothing more runs on it.
        let out = match out {
            Err(e) => {
                self.tainted = Some(format!(
                    "{}; this engine stops here (start the run again)",
                    e.message()
                ));
                return Err(e);
            }
            Ok(out) => out,
        };
        // An error at or past the deadline is the deadline's doing, even if
        // the watchdog's interrupt had not landed yet.
        let past = self.deadline.is_some_and(|d| started.elapsed() >= d);
        match out {
            Ok(v) => Ok(v),
            Err(e) if over_budget => {
                let rendered = error::render(&self.vm, &self.names, &e);
                Err(EngineError::new(
                    ErrorKind::Runaway,
                    format!(
                        "the strategy allocated more than {} MiB in one run (its engine's memory budget) and was stopped; keep less data, or build it in parts",
                        self.memory.limit() >> 20
                    ),
                )
                .with_place(rendered))
            }
            Err(e) if fired == Some(Fired::Cancelled) => {
                let rendered = error::render(&self.vm, &self.names, &e);
                Err(
                    EngineError::new(ErrorKind::Runaway, "interrupted by the user")
                        .with_place(rendered),
                )
            }
            Err(e) if matches!(fired, Some(Fired::Hook(_))) => {
                let marker = match &fired {
                    Some(Fired::Hook(m)) => m.clone(),
                    _ => String::new(),
                };
                let limit = self
                    .hook_timeout
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .map_or(0.0, |d| d.as_secs_f64());
                let (text, place) = error::hook_places(
                    &self.vm,
                    &self.names,
                    &format!(
                        "the hook registered at {marker} ran longer than {} s (hook_timeout) and was stopped",
                        fmt_secs(limit)
                    ),
                );
                let mut err = EngineError::new(ErrorKind::Runaway, text).with_place(error::render(
                    &self.vm,
                    &self.names,
                    &e,
                ));
                if let Some(place) = place {
                    err = err.at(place);
                }
                Err(err)
            }
            Err(e) if fired.is_some() || past => {
                let rendered = error::render(&self.vm, &self.names, &e);
                let secs = self.deadline.map_or(0.0, |d| d.as_secs_f64());
                let mut err = EngineError::new(
                    ErrorKind::Runaway,
                    format!(
                        "the strategy ran longer than {} s and was stopped",
                        fmt_secs(secs)
                    ),
                );
                err = err.with_place(rendered);
                Err(err)
            }
            Err(e) => Err(error::render(&self.vm, &self.names, &e)),
        }
    }
}

/// Bind a host procedure as a global, under its name and the `#%prim.`
/// alias that code compiled inside modules refers to builtins by.
fn bind(vm: &mut SteelEngine, name: &str, proc: &SteelVal) {
    vm.register_value(name, proc.clone());
    vm.register_value(&format!("#%prim.{name}"), proc.clone());
}

/// `(%hook-arm place)` and `(%hook-disarm)`: a hook call's deadline.
fn hook_procs(
    limit: Option<watchdog::HookLimit>,
    timeout: Arc<std::sync::Mutex<Option<Duration>>>,
) -> (SteelVal, SteelVal) {
    let off = limit.clone();
    let arm = SteelVal::anonymous_boxed_function(Arc::new(move |args: &[SteelVal]| {
        let t = *timeout
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let (Some(l), Some(t)) = (&limit, t) {
            let place = match args.first() {
                Some(SteelVal::StringV(s)) => s.to_string(),
                _ => String::new(),
            };
            l.arm(t, place);
        }
        Ok(SteelVal::Void)
    }));
    let disarm = SteelVal::anonymous_boxed_function(Arc::new(move |_: &[SteelVal]| {
        if let Some(l) = &off {
            l.disarm();
        }
        Ok(SteelVal::Void)
    }));
    (arm, disarm)
}

/// `(%procedure-arity proc)`: `(arity rest?)` for a Scheme procedure
/// (`rest?`: it takes more arguments than `arity - 1`), `#f` when unknown.
fn procedure_arity(args: &[SteelVal]) -> steel::rvals::Result<SteelVal> {
    use steel::rvals::IntoSteelVal;
    match args {
        [SteelVal::Closure(c)] => vec![
            SteelVal::IntV(c.arity() as isize),
            SteelVal::BoolV(c.is_multi_arity()),
        ]
        .into_steelval(),
        [_] => Ok(SteelVal::BoolV(false)),
        _ => steel::stop!(ArityMismatch => "%procedure-arity takes one procedure"),
    }
}

/// Run steel code, turning a panic into an error.
fn guard<R>(what: &str, f: impl FnOnce() -> R) -> Result<R, EngineError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        EngineError::new(
            ErrorKind::Internal,
            format!("steel panicked while {what}: {}", panic_message(&*p)),
        )
    })
}

fn to_json(v: &SteelVal, what: &str) -> Result<Value, EngineError> {
    // steel's own printing of some values (a complex number with big
    // parts) panics; a value that cannot be described is an error too.
    guard("converting a value", || steel_to_json(v))?.map_err(|m| {
        EngineError::new(
            ErrorKind::Conversion,
            format!("the value of {what} cannot be returned as JSON: {m}"),
        )
    })
}

fn is_procedure(v: &SteelVal) -> bool {
    matches!(
        v,
        SteelVal::Closure(_)
            | SteelVal::FuncV(_)
            | SteelVal::BoxedFunction(_)
            | SteelVal::MutFunc(_)
            | SteelVal::BuiltIn(_)
            | SteelVal::ContinuationFunction(_)
    )
}

/// "5", "0.25", "1.5": seconds without trailing zeros.
fn fmt_secs(secs: f64) -> String {
    let s = format!("{secs:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}
