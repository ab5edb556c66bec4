//! The sandbox: what Scheme code can reach, and where its output goes.
//!
//! steel's `Engine::new_sandboxed()` is not a security boundary (it still
//! spawns processes, reads and sets environment variables, builds
//! unsandboxed nested engines, loads files, and runs procedural macros with
//! all of that at expansion time). Three layers close it:
//!
//! 1. **`STEEL_HOME`** is pointed at a directory under the OS temp dir that
//!    nib owns, once per process, before steel first reads it (a `Lazy`), so
//!    steel never creates or reads `~/.local/share/steel`, and user "cogs"
//!    are not on the module path.
//! 2. **Poisoning** ([`prepare_thread`]): before the first engine on a
//!    thread, the dangerous entries of steel's *shared* builtin-module
//!    objects (thread-locals without the `sync` feature) are overwritten.
//!    Every engine on the thread, and steel's private macro-expansion
//!    kernel, which no per-engine API reaches, is built from those objects,
//!    so code run at expansion time loses the capabilities too (with `eval`
//!    gone from the kernel, a procedural macro cannot even be defined;
//!    `confine` refuses them up front with a clearer message). Denied: all of
//!    `steel/process`, `steel/filesystem`, `steel/tcp`, `steel/http`,
//!    `steel/polling`, `steel/git`; environment access; the nested-engine,
//!    `eval`, `load` and dylib entry points (which could also compile a
//!    `require` the confinement scan never saw); host stdin; functions that
//!    print straight to the host's stdout; and primitives that can block
//!    the engine thread for ever (channel receives, mutex locks, thread
//!    joins). A denied procedure raises "`name` is not available to
//!    strategies".
//! 3. **Hardening** ([`harden`]) per engine: the same names are rebound as
//!    globals, including their `#%prim.` aliases; the dangerous modules are
//!    re-registered with only denied stubs (so `require-builtin` finds
//!    nothing usable); and `steel/base`, the prelude every module gets, is
//!    rebuilt as this engine's own module object (nib's primitives are added
//!    to it, so required strategy modules see them and other engines on the
//!    thread do not).
//!
//! **Output.** `display`, `displayln`, `write`, `newline`, `write-string` and
//! the rest write to `current-output-port` / `current-error-port`, whose
//! defaults come from `#%default-output-port` / `#%default-error-port`.
//! Those are replaced by ports that write to the output sink of the engine
//! running on this thread (see [`OutputSink`]); with no engine running,
//! output is dropped. `(stdout)` gives the same port. Host stdin is an empty
//! port. Strategies can still capture output themselves with
//! `(parameterize ([current-output-port (open-output-string)]) …)`.
//!
//! **Sleeping.** `time/sleep-ms` is replaced by a sleep that ends at the
//! current run's deadline, so a long sleep cannot outlast it.
//!
//! What remains: a blocking host primitive is not pre-empted, and memory
//! is bounded per run (`budget.rs`), not per session. Treat
//! strategies as trusted code with guard rails; untrusted code belongs in a
//! separate OS process under an OS sandbox.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use steel::SteelVal;
use steel::rvals::SteelString;
use steel::steel_vm::builtin::BuiltInModule;
use steel::steel_vm::engine::Engine as SteelEngine;

use super::error::REFUSED_MARK;

/// Modules strategies get nothing from, with every name they hold.
fn denied_modules() -> Vec<(&'static str, Vec<String>)> {
    use steel::steel_vm::primitives as p;
    // The full modules: the sandbox registers an empty `steel/filesystem`
    // and leaves tcp/http/polling out, but their names should still say
    // "not available" rather than "unbound".
    [
        ("steel/process", &p::PROCESS_MODULE),
        ("steel/filesystem", &p::FS_MODULE),
        ("steel/tcp", &p::TCP_MODULE),
        ("steel/http", &p::HTTP_MODULE),
        ("steel/polling", &p::POLLING_MODULE),
        ("steel/git", &p::GIT_MODULE),
    ]
    .into_iter()
    .map(|(name, m)| (name, m.with(BuiltInModule::names)))
    .collect()
}

/// Single procedures strategies may not call, wherever they are bound.
const DENIED_NAMES: &[&str] = &[
    // environment
    "env-var",
    "maybe-get-env-var",
    "set-env-var!",
    "command-line",
    "steel-home-location",
    // nested engines, run-time compilation and loading
    "Engine::new",
    "Engine::clone",
    "Engine::add-module",
    "Engine::modules->list",
    "Engine::raise_error",
    "run!",
    "load",
    "load-expanded",
    "emit-expanded",
    "eval",
    "eval!",
    "eval-string",
    "expand!",
    "read!",
    "#%require-dylib",
    "#%get-dylib",
    "#%build-dylib",
    "dylib-build",
    // values rebuilt from bytes (a serialized port is the host's stdio)
    "serialize-value",
    "deserialize-value",
    "bytes->serialized",
    "serialized->bytes",
    // files (the sandboxed port module already refuses these; belt and braces)
    "open-input-file",
    "open-output-file",
    // host stdin and stdout
    "stdin",
    "read-to-string",
    "stdout-simple-displayln",
    "debug-globals",
    "inspect",
    "dump-profiler",
    "breakpoint!",
    // threads, and what can block the engine thread for ever
    "spawn-native-thread",
    "thread-join!",
    "thread-suspend",
    "thread-resume",
    "thread-interrupt",
    "channel/recv",
    "receivers-select",
    "lock-acquire!",
    "block-on",
    "local-executor/block-on",
];

/// Every name to deny: the listed ones and all of the denied modules'.
fn denied_names() -> HashSet<String> {
    let mut deny: HashSet<String> = DENIED_NAMES.iter().map(|s| (*s).to_string()).collect();
    for (_, names) in denied_modules() {
        deny.extend(names);
    }
    deny
}

/// Why a name is not there, in the words a strategy author sees.
fn refusal(name: &str) -> String {
    format!(
        "`{name}` {REFUSED_MARK}: strategies reach files, processes, the network and the \
         environment only through nib's primitives"
    )
}

fn denied(name: &str) -> SteelVal {
    let message = refusal(name);
    SteelVal::anonymous_boxed_function(Arc::new(move |_args: &[SteelVal]| {
        Err(steel::SteelErr::new(
            steel::rerrs::ErrorKind::Generic,
            message.clone(),
        ))
    }))
}

/// A name's replacement, when it is not simply denied.
fn replacement(name: &str) -> Option<SteelVal> {
    Some(match name {
        "#%default-output-port" | "stdout" => SteelVal::FuncV(stdout_port),
        "#%default-error-port" => SteelVal::FuncV(stderr_port),
        "#%default-input-port" => SteelVal::FuncV(empty_input_port),
        "time/sleep-ms" => SteelVal::FuncV(bounded_sleep_ms),
        _ => return None,
    })
}

const REPLACED: &[&str] = &[
    "#%default-output-port",
    "stdout",
    "#%default-error-port",
    "#%default-input-port",
    "time/sleep-ms",
];

// ---------------------------------------------------------------------------
// STEEL_HOME

static STEEL_HOME: OnceLock<PathBuf> = OnceLock::new();

/// Point `STEEL_HOME` at nib's own directory, once per process. Call it
/// early in `main`, before other threads start, for the cleanest setup;
/// [`super::Engine::new`] calls it too.
pub fn init_process() -> &'static PathBuf {
    STEEL_HOME.get_or_init(|| {
        let home = std::env::temp_dir().join("nib-steel-home");
        // Failure to create it is harmless: steel then finds no cogs and
        // skips its (unused) module cache.
        let _ = std::fs::create_dir_all(&home);
        // SAFETY: called once (OnceLock), before the first engine; steel
        // reads the variable once, lazily. The hazard of set_var is another
        // thread reading the environment at the same instant; nib's main
        // calls this before starting other threads.
        unsafe { std::env::set_var("STEEL_HOME", &home) };
        home
    })
}

// ---------------------------------------------------------------------------
// Poisoning steel's shared builtin modules

thread_local! {
    static POISONED: Cell<bool> = const { Cell::new(false) };
}

/// Overwrite the dangerous entries of steel's shared builtin modules on
/// this thread. Must run before the first steel engine on the thread;
/// idempotent.
pub fn prepare_thread() {
    init_process();
    if POISONED.with(Cell::get) {
        return;
    }
    // Thread-local destructors run in reverse order of first use. steel's
    // lists share an empty-list singleton kept in a thread-local, and
    // dropping a list at thread exit touches it; if steel's own
    // thread-locals (struct vtables holding lists) are created first, the
    // singleton is gone when they drop and the thread aborts on exit. So
    // create the singleton before anything else of steel's.
    drop(SteelVal::ListV(Default::default()));
    use steel::steel_vm::primitives as p;
    let modules: Vec<BuiltInModule> = [
        &p::MAP_MODULE,
        &p::SET_MODULE,
        &p::LIST_MODULE,
        &p::STRING_MODULE,
        &p::VECTOR_MODULE,
        &p::IMMUTABLE_VECTOR_MODULE,
        &p::BYTEVECTOR_MODULE,
        &p::STREAM_MODULE,
        &p::IDENTITY_MODULE,
        &p::NUMBER_MODULE,
        &p::EQUALITY_MODULE,
        &p::ORD_MODULE,
        &p::TRANSDUCER_MODULE,
        &p::SYMBOL_MODULE,
        &p::IO_MODULE,
        &p::FS_MODULE,
        &p::FS_MODULE_SB,
        &p::PORT_MODULE,
        &p::PORT_MODULE_WITHOUT_FILESYSTEM,
        &p::META_MODULE,
        &p::JSON_MODULE,
        &p::CONSTANTS_MODULE,
        &p::SYNTAX_MODULE,
        &p::SANDBOXED_META_MODULE,
        &p::PROCESS_MODULE,
        &p::RANDOM_MODULE,
        &p::RESULT_MODULE,
        &p::TYPE_ID_MODULE,
        &p::OPTION_MODULE,
        &p::TCP_MODULE,
        &p::HTTP_MODULE,
        &p::POLLING_MODULE,
        &p::PRELUDE_MODULE,
        &p::SB_PRELUDE,
        &p::TIME_MODULE,
        &p::THREADING_MODULE,
        &p::MUTABLE_VECTOR_MODULE,
        &p::PRIVATE_READER_MODULE,
        &p::GIT_MODULE,
        &p::HASHES_MODULE,
    ]
    .into_iter()
    .map(|m| m.with(BuiltInModule::clone))
    .collect();

    let deny = denied_names();
    for module in &modules {
        // A clone shares the module's inner map: writing to it writes to
        // the thread's shared object.
        let mut m = module.clone();
        for name in m.names() {
            if let Some(v) = replacement(&name) {
                m.register_value(&name, v);
            } else if super::limits::CAPPED.contains(&name.as_str()) {
                if let Some(v) = super::limits::capped(&name, &m.get(name.clone())) {
                    m.register_value(&name, v);
                }
            } else if deny.contains(&name) {
                m.register_value(&name, denied(&name));
            }
        }
    }
    POISONED.with(|p| p.set(true));
}

// ---------------------------------------------------------------------------
// Per-engine hardening

/// Lock down a fresh `new_sandboxed` engine and return its own `steel/base`
/// module (the prelude of every module), to which host procedures are
/// added.
pub fn harden(vm: &mut SteelEngine) -> BuiltInModule {
    let deny = denied_names();
    for (name, names) in denied_modules() {
        let mut stub = BuiltInModule::new(name);
        for n in names {
            stub.register_value(&n, denied(&n));
        }
        vm.register_module(stub);
    }

    for name in &deny {
        let v = denied(name);
        vm.register_value(name, v.clone());
        vm.register_value(&format!("#%prim.{name}"), v);
    }
    for name in REPLACED {
        if let Some(v) = replacement(name) {
            vm.register_value(name, v.clone());
            vm.register_value(&format!("#%prim.{name}"), v);
        }
    }
    for (name, v) in super::limits::made() {
        vm.register_value(&name, v.clone());
        vm.register_value(&format!("%capped{name}"), v.clone());
        vm.register_value(&format!("#%prim.{name}"), v);
    }

    // The meta module is shared by every engine on the thread; give this
    // engine a copy without the denied names (they are already poisoned in
    // the shared object; this keeps `require-builtin steel/meta` clean even
    // if poisoning was skipped).
    let meta = rebuilt("steel/meta", vm, &deny);
    vm.register_module(meta);
    let base = rebuilt("steel/base", vm, &deny);
    vm.register_module(base.clone());
    base
}

/// A fresh module named `name` holding the engine's current module of that
/// name, with denied names stubbed and replacements applied.
pub fn rebuilt(name: &str, vm: &SteelEngine, deny: &HashSet<String>) -> BuiltInModule {
    let mut fresh = BuiltInModule::new(name.to_string());
    if let Some(orig) = vm.builtin_modules().get(name) {
        for n in orig.names() {
            let v = if let Some(v) = replacement(&n) {
                v
            } else if deny.contains(&n) {
                denied(&n)
            } else {
                orig.get(n.clone())
            };
            fresh.register_value(&n, v);
        }
    }
    fresh
}

/// A copy of `module` (to re-register after adding a name: steel caches
/// the expression it generates for a module on first use).
pub fn copy_module(module: &BuiltInModule) -> BuiltInModule {
    let mut fresh = BuiltInModule::new(module.name().to_string());
    for n in module.names() {
        let v = module.get(n.clone());
        fresh.register_value(&n, v);
    }
    fresh
}

// ---------------------------------------------------------------------------
// Output

/// Which stream Scheme wrote to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Where an engine's Scheme output goes. By default it is kept in a buffer
/// (capped at [`OUTPUT_CAP`] bytes) that [`super::Engine::take_output`]
/// drains; [`super::Engine::set_output`] sends it to a callback instead.
pub(crate) struct OutputSink {
    state: Mutex<SinkState>,
}

/// The most output kept when nobody drains it.
pub const OUTPUT_CAP: usize = 1 << 20;

type OutputFn = Arc<dyn Fn(Stream, &str) + Send + Sync>;

struct SinkState {
    callback: Option<OutputFn>,
    buffer: String,
    dropped: bool,
    /// Bytes of an incomplete UTF-8 sequence, per stream.
    partial: [Vec<u8>; 2],
}

impl OutputSink {
    pub fn new() -> OutputSink {
        OutputSink {
            state: Mutex::new(SinkState {
                callback: None,
                buffer: String::new(),
                dropped: false,
                partial: [Vec::new(), Vec::new()],
            }),
        }
    }

    pub fn set_callback(&self, f: OutputFn) {
        self.lock().callback = Some(f);
    }

    pub fn take(&self) -> String {
        let mut st = self.lock();
        let mut out = std::mem::take(&mut st.buffer);
        if std::mem::take(&mut st.dropped) {
            out.push_str("\n[nib: output beyond 1 MiB was dropped]\n");
        }
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SinkState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self, stream: Stream, bytes: &[u8]) {
        let callback;
        let text;
        {
            let mut st = self.lock();
            let slot = &mut st.partial[stream as usize];
            slot.extend_from_slice(bytes);
            let valid = match std::str::from_utf8(slot) {
                Ok(_) => slot.len(),
                // Keep an incomplete sequence at the end for the next write;
                // replace anything truly invalid.
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(_) => slot.len(),
            };
            let rest = slot.split_off(valid);
            text = String::from_utf8_lossy(slot).into_owned();
            *slot = rest;
            callback = st.callback.clone();
            if callback.is_none() {
                let room = OUTPUT_CAP.saturating_sub(st.buffer.len());
                if text.len() <= room {
                    st.buffer.push_str(&text);
                } else {
                    let mut cut = room;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    st.buffer.push_str(&text[..cut]);
                    st.dropped = true;
                }
            }
        }
        if let Some(f) = callback
            && !text.is_empty()
        {
            // A panicking sink must not unwind through steel.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _host = super::budget::HostSection::enter();
                f(stream, &text)
            }));
        }
    }
}

thread_local! {
    /// The sink of the engine running on this thread, if any.
    static CURRENT_SINK: RefCell<Option<Arc<OutputSink>>> = const { RefCell::new(None) };
    /// When the current run must end.
    static CURRENT_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Marks an engine as the one running on this thread for its lifetime.
pub(crate) struct Running {
    sink: Option<Arc<OutputSink>>,
    deadline: Option<Instant>,
}

/// Route output to `sink` and bound sleeps by `deadline` until the guard
/// drops (restoring what was there).
pub(crate) fn enter(sink: &Arc<OutputSink>, deadline: Option<Duration>) -> Running {
    let at = deadline.map(|d| Instant::now() + d);
    Running {
        sink: CURRENT_SINK.with(|s| s.replace(Some(Arc::clone(sink)))),
        deadline: CURRENT_DEADLINE.with(|d| d.replace(at)),
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let sink = self.sink.take();
        CURRENT_SINK.with(|s| *s.borrow_mut() = sink);
        CURRENT_DEADLINE.with(|d| d.set(self.deadline));
    }
}

/// The port Scheme's default output ports write to.
struct SinkPort(Stream);

impl Write for SinkPort {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let sink = CURRENT_SINK.with(|s| s.borrow().clone());
        if let Some(sink) = sink {
            sink.write(self.0, buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn stdout_port(_args: &[SteelVal]) -> steel::rvals::Result<SteelVal> {
    Ok(SteelVal::new_dyn_writer_port(SinkPort(Stream::Stdout)))
}

fn stderr_port(_args: &[SteelVal]) -> steel::rvals::Result<SteelVal> {
    Ok(SteelVal::new_dyn_writer_port(SinkPort(Stream::Stderr)))
}

fn empty_input_port(_args: &[SteelVal]) -> steel::rvals::Result<SteelVal> {
    Ok(steel::primitives::ports::open_input_string(
        &SteelString::from(""),
    ))
}

/// `(time/sleep-ms n)`, ending at the current run's deadline at the latest.
fn bounded_sleep_ms(args: &[SteelVal]) -> steel::rvals::Result<SteelVal> {
    let ms = match args {
        [SteelVal::IntV(ms)] => (*ms).max(0) as u64,
        [SteelVal::NumV(ms)] if ms.is_finite() => ms.max(0.0) as u64,
        _ => steel::stop!(TypeMismatch => "time/sleep-ms expects one number of milliseconds"),
    };
    let wait = Duration::from_millis(ms);
    if let Some(at) = CURRENT_DEADLINE.with(Cell::get) {
        let left = at.saturating_duration_since(Instant::now());
        if wait > left {
            // Sleep to the deadline and stop there: the program would be
            // stopped anyway, and finishing first would race the watchdog.
            std::thread::sleep(left);
            steel::stop!(Generic => "the deadline passed during time/sleep-ms");
        }
    }
    std::thread::sleep(wait);
    Ok(SteelVal::Void)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hardened() -> SteelEngine {
        prepare_thread();
        let mut vm = SteelEngine::new_sandboxed();
        harden(&mut vm);
        vm
    }

    fn refused(vm: &mut SteelEngine, src: &str) -> bool {
        match vm.compile_and_run_raw_program(src.to_string()) {
            Ok(v) => panic!("{src} ran: {v:?}"),
            Err(e) => e.to_string().contains(REFUSED_MARK),
        }
    }

    /// Without the engine's load-time scan, the poisoned macro kernel
    /// still refuses: a procedural macro cannot even be defined (the kernel
    /// needs `eval`), let alone read the environment at expansion time.
    #[test]
    fn the_macro_kernel_is_poisoned_too() {
        let mut vm = hardened();
        assert!(refused(
            &mut vm,
            r#"(define-syntax (home stx) (syntax-case stx () [(_) (with-syntax ([h (env-var "HOME")]) #'h)])) (home)"#
        ));
        assert!(refused(&mut vm, r#"(env-var "HOME")"#));
        assert!(refused(&mut vm, r#"(#%prim.set-env-var! "NIB_X" "1")"#));
        // A module gets the hardened prelude too.
        vm.register_steel_module(
            "t/m.scm".into(),
            "(provide f) (define (f) (env-var \"HOME\"))".into(),
        );
        assert!(refused(&mut vm, r#"(require "t/m.scm") (f)"#));
    }

    #[test]
    fn output_keeps_split_utf8_together() {
        let sink = OutputSink::new();
        let bytes = "é✓".as_bytes();
        for b in bytes {
            sink.write(Stream::Stdout, std::slice::from_ref(b));
        }
        assert_eq!(sink.take(), "é✓");
        sink.write(Stream::Stdout, &[0xff, b'a']);
        assert_eq!(sink.take(), "\u{fffd}a");
    }
}
