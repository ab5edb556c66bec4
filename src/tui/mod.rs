//! `nib` with no subcommand: the terminal client (ratatui + crossterm).
//!
//! Screen model: finished transcript lines are written once into the
//! terminal's own scrollback (above a small inline viewport), so copy,
//! search and scroll work as in any program, and a resize never duplicates
//! or loses history (the terminal owns it). The inline viewport at the
//! bottom is the only thing redrawn: the stream's unfinished line, the
//! confirm, the composer and the status line; frames are capped at 60 per
//! second and ratatui only writes the cells that changed. A confirm's full
//! screen view (`f`) uses the alternate screen, unless `--no-alt-screen`,
//! where it grows the inline viewport to the terminal's height instead.
//!
//! The agent runs on a worker thread ([`worker`]); [`app::App`] is the
//! state machine the UI thread drives with the worker's events and keys.

// The binary's edge: this client's output is the process's own stdout
// and stderr, so printing is its job (everything below the clients is
// denied print!, unwrap and expect in src/lib.rs).
#![allow(clippy::print_stdout, clippy::print_stderr)]

pub mod app;
pub mod demo;
pub mod style;
pub mod worker;

use std::io::{Stdout, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use clap::Args;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    self, DisableBracketedPaste, EnableBracketedPaste, Event, KeyEventKind,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::layout::Position;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};
use ratatui::{Terminal, TerminalOptions, Viewport};

use crate::agent::AgentConfig;
use crate::agent::beside::PageBeside;
use crate::files::Workspace;
use crate::guard::approvals::Approval;
use crate::session::{Entry, Event as LogEvent};
use crate::settings::{UsageError, UserConfig, model_config, stop, workspace};
use app::{Action, App, AppOptions};
use std::sync::Arc;
use style::Theme;
use worker::{Session, UiEvent};

/// The shortest time between two frames.
const FRAME: Duration = Duration::from_millis(16);

/// The terminal client's flags (given to `nib` itself, no subcommand).
#[derive(Debug, Args, Default)]
pub struct TuiArgs {
    /// The workspace root (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    #[command(flatten)]
    pub model_args: crate::settings::ModelArgs,
    #[command(flatten)]
    pub strategy_args: crate::settings::StrategyArgs,
    /// Continue an earlier session: its transcript, its log, its context
    /// (an id or the start of one; alone: pick from a list, `nib sessions`
    /// lists them too).
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    /// Never use the alternate screen (the full-screen diff grows the
    /// inline area instead); for terminals and multiplexers that keep no
    /// scrollback there.
    #[arg(long)]
    pub no_alt_screen: bool,
    /// Milliseconds keys are ignored after a confirm appears.
    #[arg(long, default_value_t = 400, hide = true)]
    pub arm_ms: u64,
    /// Open the browser console beside the terminal: one URL (with its
    /// token) to open on this machine; confirms and questions can be
    /// answered in either place, the first answer wins.
    #[arg(long)]
    pub console: bool,
}

/// How the client runs, beyond the session.
#[derive(Clone)]
pub struct ClientOptions {
    pub alt_screen: bool,
    pub arm_delay: Duration,
    /// Submitted as soon as the client starts (`nib demo`).
    pub first_task: Option<String>,
    /// Lines shown at the top of the transcript.
    pub banner: Vec<String>,
    /// An events.jsonl whose transcript is shown first.
    pub resume: Option<PathBuf>,
    /// The browser console beside the client.
    pub console: Option<PageBeside>,
}

pub fn run(args: TuiArgs, console: Option<PageBeside>) -> Result<ExitCode, UsageError> {
    require_terminal("nib")?;
    crate::engine::init_process();
    let config = UserConfig::load()?;
    let ws = workspace(args.root.clone())?;
    let (model, _server) = model_config(&args.model_args, &config)?;
    let chosen = args.strategy_args.choose(&config, None)?;
    let resume = match &args.resume {
        None => None,
        Some(id) => Some(find_session(ws.root(), id)?),
    };
    let cfg = AgentConfig {
        model,
        strategy: chosen.strategy,
        hooks: chosen.hooks,
        config_hooks: chosen.config_hooks,
        settings: chosen.settings,
        history: serde_json::Value::Null,
        program: None,
        max_steps: config.max_steps.unwrap_or(30).max(1),
        max_tokens: 0,
        deadline: Duration::from_secs(24 * 3600),
    };
    let opts = ClientOptions {
        alt_screen: !args.no_alt_screen,
        arm_delay: Duration::from_millis(args.arm_ms),
        first_task: None,
        banner: vec![format!("nib in {}", ws.root().display())],
        resume,
        console,
    };
    run_client(ws, cfg, config.approvals, opts)
}

/// The client reads keys from stdin and draws on stdout: both must be a
/// terminal. Said before anything is set up, with where to go instead.
pub(crate) fn require_terminal(what: &str) -> Result<(), UsageError> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return Ok(());
    }
    Err(UsageError(format!(
        "{what} is the terminal client and needs a terminal (stdin and stdout are not one); \
         to run a task without one, use `nib exec` (see `nib exec --help`)"
    )))
}

/// The session `--resume` names: an id or the start of one; with none, a
/// picker (the sessions, newest last, and a number to type) when there is
/// more than one.
fn find_session(root: &Path, id: &str) -> Result<PathBuf, UsageError> {
    let dir = root.join(".nib").join("sessions");
    if !id.is_empty() {
        return crate::session::resume::find(&dir, id).map_err(UsageError);
    }
    let all = crate::session::resume::list(&dir);
    if all.len() < 2 {
        return crate::session::resume::find(&dir, "").map_err(UsageError);
    }
    pick_session(&all)
}

/// A line-mode picker, before the terminal is taken over: the last 20
/// sessions numbered, Enter alone for the newest.
fn pick_session(all: &[crate::session::resume::SessionSummary]) -> Result<PathBuf, UsageError> {
    use std::io::BufRead;
    let shown = &all[all.len().saturating_sub(20)..];
    eprintln!("sessions in this workspace (newest last):");
    for (i, s) in shown.iter().enumerate() {
        let task: String = s
            .task
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(60)
            .collect();
        eprintln!(
            "  {:>2}  {}  {:<11}  {}",
            i + 1,
            s.started.get(..16).unwrap_or(&s.started).replace('T', " "),
            s.status,
            style::mask_secrets(&task)
        );
    }
    eprint!("resume which? [number, Enter for {}] ", shown.len());
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| UsageError(format!("cannot read the choice: {e}")))?;
    let line = line.trim();
    let n = if line.is_empty() {
        shown.len()
    } else {
        line.parse::<usize>().map_err(|_| {
            UsageError(format!(
                "{line:?} is not a number from 1 to {}; `nib --resume ID` takes an id",
                shown.len()
            ))
        })?
    };
    shown
        .get(n.wrapping_sub(1))
        .map(|s| s.path.clone())
        .ok_or_else(|| {
            UsageError(format!(
                "no session {n}: give a number from 1 to {}",
                shown.len()
            ))
        })
}

/// How long closing waits for the session-end hooks.
const SESSION_END_WAIT: Duration = Duration::from_secs(10);

/// Run the client on a session until the user quits.
pub fn run_client(
    ws: Workspace,
    cfg: AgentConfig,
    approvals: Vec<Approval>,
    opts: ClientOptions,
) -> Result<ExitCode, UsageError> {
    let (tx, rx) = channel();
    let beside = opts.console.as_ref().map(|c| Arc::clone(&c.beside));
    let session = Session::start_with(ws, cfg, approvals, tx, opts.resume.as_deref(), beside)
        .map_err(UsageError)?;
    let mut app = App::new(
        session,
        rx,
        AppOptions {
            theme: Theme::detect(),
            arm_delay: opts.arm_delay,
            config_path: None,
        },
    );
    for line in &opts.banner {
        app.push_line(Line::from(line.clone()));
    }
    if let Some(path) = &opts.resume {
        replay(&mut app, path);
    }
    if let Some(c) = &opts.console {
        app.push_notice(&console_notice(&c.url));
    }
    if let Some(task) = &opts.first_task {
        app.submit(task, Instant::now());
    }
    // SIGTERM, SIGHUP (and SIGINT from outside; Ctrl-C is a key here):
    // stop the task and its commands, log it, give the terminal back.
    {
        let log = Arc::clone(&app.session().log);
        stop::catch(app.session().cancel.clone(), move |sig| {
            // A second signal: nib exits now, so its commands go first.
            crate::prim::tools::stop_running_commands();
            let _ = log.emit(&stopped_event(sig));
            restore();
        });
    }
    watch_for_hangup();
    let mut term = Term::start(opts.alt_screen)
        .map_err(|e| UsageError(format!("cannot set up the terminal: {e}")))?;
    let result = event_loop(&mut app, &mut term);
    let signal = stop::received();
    if let Some(sig) = signal {
        // The worker has seen the cancel flag: wait (a little) for the
        // task to end, so its commands are stopped before nib exits.
        let until = Instant::now() + Duration::from_secs(5);
        while app.running() && Instant::now() < until {
            app.pump(Duration::from_millis(50), Instant::now());
        }
        let _ = app.session().log.emit(&stopped_event(sig));
    }
    // However the client closes, the strategy's session-end hooks run,
    // as after `nib exec`'s task.
    app.session().end(SESSION_END_WAIT);
    term.stop();
    result.map_err(|e| UsageError(format!("terminal error: {e}")))?;
    if let Some(sig) = signal {
        eprintln!(
            "nib: {}; `nib --resume {}` continues the session",
            stop::describe(sig),
            app.session().log.id()
        );
        return Ok(ExitCode::from(stop::exit_code(sig).clamp(0, 255) as u8));
    }
    Ok(ExitCode::SUCCESS)
}

/// The terminal can go away without a SIGHUP reaching nib (the session's
/// leader, a shell, ignored it and does not pass it on): crossterm then
/// reads end-of-file in a loop it never leaves, and nib would spin with
/// its commands running. A hung-up terminal polls as POLLHUP: nib then
/// stops as for SIGHUP and, the UI thread being stuck in that read, a
/// second SIGHUP a moment later ends the process (`stop::catch`'s second
/// signal: the commands still running are stopped, `interrupted` logged).
fn watch_for_hangup() {
    let _ = std::thread::Builder::new()
        .name("nib-hangup".into())
        .spawn(|| {
            loop {
                std::thread::sleep(Duration::from_millis(200));
                let mut tty = libc::pollfd {
                    fd: libc::STDIN_FILENO,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: poll(2) on one valid pollfd, without waiting.
                let ready = unsafe { libc::poll(&mut tty, 1, 0) };
                let gone = libc::POLLHUP | libc::POLLERR | libc::POLLNVAL;
                if ready <= 0 || tty.revents & gone == 0 {
                    continue;
                }
                // SAFETY: kill(2) of this process with a signal it catches.
                if stop::received().is_none() {
                    unsafe {
                        libc::kill(libc::getpid(), libc::SIGHUP);
                    }
                }
                // The task stops meanwhile (its model call, its commands).
                std::thread::sleep(Duration::from_secs(1));
                unsafe {
                    libc::kill(libc::getpid(), libc::SIGHUP);
                }
                return;
            }
        });
}

/// What the transcript says about the console beside the client.
pub fn console_notice(url: &str) -> String {
    format!(
        "the browser console is open at {url} (this machine only; the token in it is the key): \
         confirms and questions can be answered there or here, the first answer wins"
    )
}

/// The `interrupted` event of a client a signal stopped.
fn stopped_event(sig: i32) -> LogEvent {
    LogEvent::Interrupted(crate::session::event::Interrupted {
        by: stop::name(sig),
        message: format!(
            "{}; the commands it ran were stopped with everything they started",
            stop::describe(sig)
        ),
        exit_code: Some(stop::exit_code(sig)),
    })
}

/// Show an earlier session's events as its transcript: each task as it
/// was typed, the model's narration, the tool cards, notices, and each
/// answer rendered as it was shown live.
pub fn replay(app: &mut App, events: &Path) {
    let text = match std::fs::read_to_string(events) {
        Ok(t) => t,
        Err(e) => {
            app.push_line(Line::from(format!(
                "cannot resume {}: {e}",
                events.display()
            )));
            return;
        }
    };
    app.push_line(Line::from(format!("── resumed {} ──", events.display())));
    let now = Instant::now();
    for line in text.lines() {
        // A line a kill cut short does not read: skip it.
        let Ok(entry) = Entry::parse(line) else {
            continue;
        };
        match &entry.event {
            LogEvent::SessionStart(start) => {
                let task = crate::session::resume::own_task(&start.task);
                app.push_prompt(task);
            }
            LogEvent::LlmResp(resp) if resp.tool_calls > 0 => {
                // Narration before tool calls (the final answer is the
                // turn's end, below).
                if let Some(said) = &resp.text {
                    app.push_markdown_text(said);
                }
                app.on_event(UiEvent::Log(Box::new(entry)), now);
            }
            LogEvent::TurnEnd(end) if end.reason == "done" => {
                app.push_markdown_text(&end.text);
            }
            LogEvent::TurnEnd(_) => {}
            _ => app.on_event(UiEvent::Log(Box::new(entry)), now),
        }
    }
    app.push_line(Line::from("── end of the resumed session ──"));
}

fn event_loop(app: &mut App, term: &mut Term) -> std::io::Result<()> {
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME;
    loop {
        if app.pump(Duration::ZERO, Instant::now()) {
            dirty = true;
        }
        let wait = if dirty {
            FRAME.saturating_sub(last_draw.elapsed())
        } else {
            Duration::from_millis(50)
        };
        if event::poll(wait)? {
            match event::read()? {
                Event::Key(key) if key.kind != KeyEventKind::Release => {
                    match app.handle_key(key, Instant::now()) {
                        Action::Quit => return Ok(()),
                        Action::Edit(path) => {
                            let result = term.suspended(|| run_editor(&path))?;
                            app.edit_done(result);
                        }
                        Action::None => {}
                    }
                    dirty = true;
                }
                Event::Paste(text) => {
                    app.paste(&text);
                    dirty = true;
                }
                Event::Resize(..) => dirty = true,
                _ => {}
            }
        }
        if app.quitting() || stop::received().is_some() {
            return Ok(());
        }
        // The elapsed-time counter moves while a task runs.
        if app.running() && last_draw.elapsed() >= Duration::from_millis(250) {
            dirty = true;
        }
        if dirty && last_draw.elapsed() >= FRAME {
            term.draw(app)?;
            last_draw = Instant::now();
            dirty = false;
        }
    }
}

/// Open `path` in `$VISUAL` or `$EDITOR` (else `vi`), through `sh -c` so an
/// editor given with arguments works; waits for it to exit.
pub fn run_editor(path: &Path) -> Result<(), String> {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|v| !v.trim().is_empty())
        })
        .unwrap_or_else(|| "vi".into());
    run_editor_with(&editor, path)
}

/// Run `editor` (a shell command line; the file is appended as its last
/// argument) on `path` and wait for it.
pub fn run_editor_with(editor: &str, path: &Path) -> Result<(), String> {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("nib-edit")
        .arg(path)
        .status()
        .map_err(|e| format!("cannot run the editor {editor:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the editor {editor:?} exited with {status}"))
    }
}

type Backend = CrosstermBackend<Stdout>;

/// The real terminal: an inline viewport, and a full-screen one on the
/// alternate screen while a confirm is shown full screen.
struct Term {
    inline: Terminal<Backend>,
    height: u16,
    full: Option<Terminal<Backend>>,
    alt_allowed: bool,
    /// History that arrived while the alternate screen was up.
    held: Vec<Line<'static>>,
}

impl Term {
    fn start(alt_allowed: bool) -> std::io::Result<Term> {
        enable_raw_mode()?;
        execute!(std::io::stdout(), EnableBracketedPaste)?;
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        let height = 4;
        let inline = inline_terminal(height)?;
        Ok(Term {
            inline,
            height,
            full: None,
            alt_allowed,
            held: Vec::new(),
        })
    }

    fn stop(&mut self) {
        if self.full.take().is_some() {
            let _ = execute!(std::io::stdout(), LeaveAlternateScreen);
        }
        let _ = self.inline.clear();
        let area = self.inline.get_frame().area();
        let _ = self.inline.set_cursor_position(Position::new(0, area.y));
        restore();
        println!();
    }

    /// Run `f` with the terminal given back to the shell (for `$EDITOR`).
    fn suspended<R>(&mut self, f: impl FnOnce() -> R) -> std::io::Result<R> {
        if self.full.is_some() {
            execute!(std::io::stdout(), LeaveAlternateScreen)?;
        }
        disable_raw_mode()?;
        let out = f();
        enable_raw_mode()?;
        if self.full.is_some() {
            execute!(std::io::stdout(), EnterAlternateScreen)?;
            if let Some(full) = &mut self.full {
                full.clear()?;
            }
        }
        self.inline.clear()?;
        Ok(out)
    }

    fn draw(&mut self, app: &mut App) -> std::io::Result<()> {
        let (cols, rows) = ratatui::crossterm::terminal::size()?;
        let now = Instant::now();
        let new = app.take_new_history(cols);
        if app.take_bell() {
            let mut out = std::io::stdout();
            out.write_all(b"\x07")?;
            out.flush()?;
        }
        if app.wants_full_screen() && self.alt_allowed {
            self.held.extend(new);
            if self.full.is_none() {
                execute!(std::io::stdout(), EnterAlternateScreen)?;
                self.full = Some(Terminal::new(CrosstermBackend::new(std::io::stdout()))?);
            }
            if let Some(full) = &mut self.full {
                full.draw(|f| app.render(f.area(), f.buffer_mut(), now))?;
            }
            return Ok(());
        }
        if self.full.take().is_some() {
            execute!(std::io::stdout(), LeaveAlternateScreen)?;
            self.inline.clear()?;
        }
        let want = app.desired_height(cols, rows);
        if want != self.height {
            // A new viewport at the old one's top row: ratatui scrolls the
            // screen up when it does not fit below.
            self.inline.clear()?;
            let top = self.inline.get_frame().area().y;
            self.inline.set_cursor_position(Position::new(0, top))?;
            self.inline = inline_terminal(want)?;
            self.height = want;
        }
        let mut lines = std::mem::take(&mut self.held);
        lines.extend(new);
        // Insert in pieces no taller than the screen.
        for chunk in lines.chunks(rows.max(2) as usize - 1) {
            let chunk = chunk.to_vec();
            self.inline.insert_before(chunk.len() as u16, |buf| {
                Paragraph::new(chunk).render(buf.area, buf);
            })?;
        }
        self.inline
            .draw(|f| app.render(f.area(), f.buffer_mut(), now))?;
        Ok(())
    }
}

fn inline_terminal(height: u16) -> std::io::Result<Terminal<Backend>> {
    Terminal::with_options(
        CrosstermBackend::new(std::io::stdout()),
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )
}

/// Give the terminal back: raw mode off, main screen, cursor shown.
fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        DisableBracketedPaste,
        LeaveAlternateScreen,
        ratatui::crossterm::cursor::Show
    );
}
