//! Starting a session: the one builder every client uses (exec, swebench,
//! the terminal client, the demo, the scenario runner), so the workspace,
//! the guard's policy, how confirms are answered and the event log are
//! put together the same way everywhere.
//!
//! ```text
//! SessionBuilder::new(ws, Confirms::Policy { approve_writes: true })
//!     .user_config(&config)       // guard policy: user's, tightened by .nib/config.toml
//!     .subscribe(progress)        // sees every event, warnings included
//!     .shell_place(place)         // where `shell` runs (default: here)
//!     .build()?                   // -> AgentSession { host, log }
//!     .run(&cfg, task, |_| {})?   // -> Outcome
//! ```

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::{AgentConfig, Outcome, run_task_with};
use crate::engine::EngineError;
use crate::files::Workspace;
use crate::guard::GuardPolicy;
use crate::model::StreamEvent;
use crate::prim::tools::ShellPlace;
use crate::prim::{Answer, Asker, ConfirmAnswer, ConfirmRequest, Host, Question};
use crate::session::event::{self, Event};
use crate::session::{Entry, EventLog, SessionError};
use crate::settings::{UsageError, UserConfig, guard_policy};

/// How a session's confirms are answered.
pub enum Confirms {
    /// Nobody watches (`nib exec`, swebench): Write confirms are answered
    /// by `approve_writes`, every Security confirm is refused.
    Policy { approve_writes: bool },
    /// A person answers, through the client (the terminal client, a
    /// scenario's scripted answers).
    Person(Box<dyn Fn(&ConfirmRequest) -> ConfirmAnswer + Send + Sync>),
}

/// Where the session's events go.
#[derive(Debug, Clone, Default)]
pub enum LogPlace {
    /// A new session directory, `<root>/.nib/sessions/<id>/events.jsonl`.
    #[default]
    New,
    /// Appended to this file (a resumed session, swebench's per-instance log).
    At(PathBuf),
}

/// Why a session could not start.
#[derive(Debug)]
pub enum SetupError {
    /// The user's or the workspace's configuration.
    Config(UsageError),
    /// The event log.
    Log(SessionError),
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::Config(e) => e.fmt(f),
            SetupError::Log(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SetupError {}

impl From<SetupError> for UsageError {
    fn from(e: SetupError) -> UsageError {
        match e {
            SetupError::Config(e) => e,
            SetupError::Log(e) => UsageError(e.to_string()),
        }
    }
}

type Subscriber = Box<dyn Fn(&Entry) + Send + Sync>;

/// Everything a session is started from.
pub struct SessionBuilder {
    ws: Workspace,
    confirms: Confirms,
    policy: Option<GuardPolicy>,
    user: Option<UserConfig>,
    log: LogPlace,
    cancel: Option<Arc<AtomicBool>>,
    asker: Option<Asker>,
    subscribers: Vec<Subscriber>,
    shell_place: ShellPlace,
}

impl SessionBuilder {
    /// A session on `ws` whose confirms are answered by `confirms`, with
    /// the guard's default policy until told otherwise.
    pub fn new(ws: Workspace, confirms: Confirms) -> SessionBuilder {
        SessionBuilder {
            ws,
            confirms,
            policy: None,
            user: None,
            log: LogPlace::New,
            cancel: None,
            asker: None,
            subscribers: Vec::new(),
            shell_place: ShellPlace::Local,
        }
    }

    /// The guard's policy from the user's config, tightened by the
    /// workspace's `.nib/config.toml` (read when the session is built).
    pub fn user_config(mut self, user: &UserConfig) -> SessionBuilder {
        self.user = Some(user.clone());
        self
    }

    /// This policy instead (tests, scenarios).
    pub fn policy(mut self, policy: GuardPolicy) -> SessionBuilder {
        self.policy = Some(policy);
        self
    }

    pub fn log(mut self, place: LogPlace) -> SessionBuilder {
        self.log = place;
        self
    }

    /// The flag that stops the running task (the client's Esc).
    pub fn cancel(mut self, flag: Arc<AtomicBool>) -> SessionBuilder {
        self.cancel = Some(flag);
        self
    }

    /// Where a strategy's `ask` questions go (the terminal client);
    /// without one they are answered by policy.
    pub fn asker(
        mut self,
        f: impl Fn(&Question) -> Option<Answer> + Send + Sync + 'static,
    ) -> SessionBuilder {
        self.asker = Some(Box::new(f));
        self
    }

    /// Calls `f` with every event of the session, from the first.
    pub fn subscribe(mut self, f: impl Fn(&Entry) + Send + Sync + 'static) -> SessionBuilder {
        self.subscribers.push(Box::new(f));
        self
    }

    /// Where the session's `shell` commands run (default: this machine,
    /// in the workspace root).
    pub fn shell_place(mut self, place: ShellPlace) -> SessionBuilder {
        self.shell_place = place;
        self
    }

    pub fn build(self) -> Result<AgentSession, SetupError> {
        let policy = match (self.policy, &self.user) {
            (Some(p), _) => p,
            (None, Some(user)) => guard_policy(user, self.ws.root()).map_err(SetupError::Config)?,
            // No user config: the workspace's may still tighten.
            (None, None) => {
                guard_policy(&UserConfig::default(), self.ws.root()).map_err(SetupError::Config)?
            }
        };
        let log = match &self.log {
            LogPlace::New => EventLog::create(self.ws.root()),
            LogPlace::At(path) => EventLog::at(path),
        }
        .map_err(SetupError::Log)?;
        for f in self.subscribers {
            log.subscribe(f);
        }
        let mut warnings = policy.paths.warnings().to_vec();
        let host = match self.confirms {
            Confirms::Policy { approve_writes } => Host::unattended(self.ws, approve_writes),
            Confirms::Person(f) => Host::new(self.ws, f),
        };
        let mut host = host.with_policy(policy).with_shell_place(self.shell_place);
        if let Some(flag) = self.cancel {
            host = host.with_cancel(flag);
        }
        if let Some(asker) = self.asker {
            host = host.with_asker(asker);
        }
        warnings.extend(host.sandbox_status().1);
        for message in warnings {
            let _ = log.emit(&Event::Warning(event::Warning { message }));
        }
        Ok(AgentSession {
            host: Arc::new(host),
            log: Arc::new(log),
        })
    }
}

/// A started session: its host (workspace, guard, file state) and its log.
/// Tasks run one after another on it.
#[derive(Clone)]
pub struct AgentSession {
    pub host: Arc<Host>,
    pub log: Arc<EventLog>,
}

impl AgentSession {
    /// Runs one task to its end (see [`run_task_with`]); the host's cancel
    /// flag stops it.
    pub fn run(
        &self,
        cfg: &AgentConfig,
        task: &str,
        on_stream: impl FnMut(&StreamEvent) + Send + 'static,
    ) -> Result<Outcome, EngineError> {
        run_task_with(
            Arc::clone(&self.host),
            Arc::clone(&self.log),
            cfg,
            task,
            on_stream,
            self.host.cancel_flag(),
        )
    }
}
