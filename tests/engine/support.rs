//! A fake host that records the calls it gets, and engine helpers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::engine::{Engine, EngineOptions, HostFn};
use nib::call::Call;
use nib::prim::table::ALL;

/// The calls a fake host received.
#[derive(Clone, Default)]
pub struct Calls(Arc<Mutex<Vec<Call>>>);

impl Calls {
    pub fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A host that records each call and answers `{"ok": true, "text": "<name> done"}`.
pub fn recording_host() -> (HostFn, Calls) {
    let calls = Calls::default();
    let c = calls.clone();
    let host: HostFn = Arc::new(move |call: Call| {
        let name = call.decl.name;
        c.0.lock().unwrap().push(call);
        Ok(
            json!({"ok": true, "text": format!("{name} done"), "decision": "allow", "refused": false}),
        )
    });
    (host, calls)
}

/// An engine with every primitive and the recording host.
pub fn engine_with(dirs: &[&Path], deadline: Option<Duration>) -> (Engine, Calls) {
    let (host, calls) = recording_host();
    let opts = EngineOptions {
        strategy_dirs: dirs.iter().map(|d| d.to_path_buf()).collect(),
        deadline,
    };
    let engine = Engine::new(&ALL, host, opts).unwrap_or_else(|e| panic!("engine: {e}"));
    (engine, calls)
}

pub fn engine() -> (Engine, Calls) {
    engine_with(&[], None)
}

/// Run source that must succeed.
pub fn run(engine: &mut Engine, src: &str) -> Value {
    engine
        .run_source("test.scm", src)
        .unwrap_or_else(|e| panic!("{src}\nfailed: {e}"))
}

/// Run source that must fail; the error's display.
pub fn fail(engine: &mut Engine, src: &str) -> crate::engine::EngineError {
    match engine.run_source("test.scm", src) {
        Ok(v) => panic!("{src}\nshould have failed, gave {v}"),
        Err(e) => e,
    }
}

/// A scratch directory with files (path → content).
pub fn scratch(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    dir
}

pub fn path_str(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

pub fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap()
}
