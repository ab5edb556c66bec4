//! `nib console`: the browser console (`crate::console`); `--demo` sets
//! up the terminal demo's project and scripted model for it here, where
//! both clients may be used. `--console` on the terminal client and
//! `nib exec` starts the console beside them here too ([`beside`]).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::agent::beside::PageBeside;
use crate::console::{ConsoleArgs, LiveOptions};
use crate::files::Workspace;
use crate::model::scripted::ScriptedServer;
use crate::settings::{UsageError, UserConfig};
use crate::tui::demo;

/// The demo's workspace config: calc.py protected, so the two-edit fix is
/// a Security confirm (the design's check of the console approves it).
const DEMO_CONFIG: &str = "# written by nib console --demo\n[guard]\nprotected = [\"calc.py\"]\n";

/// With `wanted` (`--console`), the browser console beside `client`, on
/// the workspace at `root` (default: the current directory).
pub fn beside(
    wanted: bool,
    root: Option<PathBuf>,
    client: &str,
) -> Result<Option<PageBeside>, UsageError> {
    if !wanted {
        return Ok(None);
    }
    let ws = crate::settings::workspace(root)?;
    let (mirror, console) = crate::console::start_beside(client, ws.root().to_path_buf(), None)?;
    Ok(Some(PageBeside {
        beside: mirror,
        url: console.url(),
    }))
}

pub fn run(args: ConsoleArgs) -> Result<ExitCode, UsageError> {
    if !args.demo {
        return crate::console::run(args);
    }
    crate::engine::init_process();
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id()).rotate_left(32);
    let dir = args.dir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("nib-console-demo-{:x}", seed & 0xff_ffff))
    });
    let key = demo::FakeKey::generate(seed);
    demo::prepare(&dir, &key)
        .and_then(|()| std::fs::create_dir_all(dir.join(".nib")))
        .and_then(|()| std::fs::write(dir.join(".nib").join("config.toml"), DEMO_CONFIG))
        .map_err(|e| UsageError(format!("cannot set up the demo in {}: {e}", dir.display())))?;
    eprintln!(
        "nib console --demo: the example project is in {}",
        dir.display()
    );
    let ws = Workspace::open(&dir).map_err(|e| UsageError(e.to_string()))?;
    let server = ScriptedServer::start(demo::script(&key))
        .map_err(|e| UsageError(format!("could not start the scripted model: {e}")))?;
    let config = UserConfig::load()?;
    let opts = LiveOptions {
        approvals: config.approvals.clone(),
        user: config,
        config_path: None,
    };
    let console = crate::console::start_live(
        ws,
        demo::agent_config(&server),
        opts,
        args.swebench.clone(),
        Some(demo::TASK),
    )?;
    let code = crate::console::serve_until_killed(&console);
    drop(server);
    code
}
