//! The console's live session: a worker thread runs tasks one at a time on
//! a session from `SessionBuilder` (as the terminal client does); every
//! event, every model text delta, every confirm and question goes to the
//! [`Hub`], and the pages' answers come back through it.
//!
//! Confirms are answered as in the terminal: a standing approval answers
//! the Write confirms it covers (the page is told, with the scope); every
//! other confirm waits for a page, and a Security confirm is never answered
//! by a standing approval, nor can "always" be chosen for one.
//!
//! Beside the terminal client or `nib exec` ([`Live::attached`]) there is
//! no worker here: the client runs the session and hands its confirms and
//! questions over as ballots (`console::beside`); the pages answer them
//! the same way, and tasks are given in the client.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::{Value, json};

use super::hub::{Hub, OpenAsk, OpenConfirm, Refused};
use super::view::{confirm_view, kind_name};
use crate::agent::beside::{Attached, BROWSER, Ballot, Said, wait_for};
use crate::agent::{AgentConfig, AgentSession, Confirms, LogPlace, SessionBuilder, run_task_with};
use crate::files::Workspace;
use crate::guard::ConfirmKind;
use crate::guard::approvals::Approval;
use crate::model::StreamEvent;
use crate::prim::schema::positional;
use crate::prim::{Answer, ConfirmAnswer, ConfirmRequest, Question};
use crate::session::EventLog;
use crate::session::event::{self, Event};
use crate::settings::UserConfig;

/// How the live session is set up, beyond its workspace and config.
#[derive(Debug, Clone, Default)]
pub struct LiveOptions {
    /// The user's config (the guard's policy, with the workspace's).
    pub user: UserConfig,
    /// Standing approvals in force.
    pub approvals: Vec<Approval>,
    /// Where "always" saves an approval; `None`: the user's config file.
    pub config_path: Option<PathBuf>,
}

/// A page's answer to a confirm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageAnswer {
    Yes,
    No(String),
    /// Approve this text instead of the proposal.
    Edited(String),
    /// Approve and save the suggested standing approval.
    Always,
}

/// How long a page's answer waits for one in flight (the terminal holds
/// the confirm while it saves an approval) before saying it lost.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

/// Why a page's answer was not taken: the HTTP status and what to say.
pub type AnswerError = (u16, String);

/// The running session and the handles the server needs.
pub struct Live {
    pub hub: Arc<Hub>,
    /// Where tasks go; `None` beside another client (tasks are given there).
    tasks: Option<Sender<String>>,
    cancel: Arc<AtomicBool>,
    approvals: Arc<Mutex<Vec<Approval>>>,
    config_path: Option<PathBuf>,
    log: Arc<EventLog>,
    busy: Arc<AtomicBool>,
}

impl Live {
    /// Start the worker on `ws`; tasks come from [`Live::submit`].
    pub fn start(
        ws: Workspace,
        cfg: AgentConfig,
        opts: LiveOptions,
        hub: Arc<Hub>,
    ) -> Result<Live, String> {
        let cancel = Arc::new(AtomicBool::new(false));
        let approvals = Arc::new(Mutex::new(opts.approvals));
        let log_cell: Arc<OnceLock<Arc<EventLog>>> = Arc::default();
        let to_hub = Arc::clone(&hub);
        let AgentSession { host, log } = SessionBuilder::new(
            ws,
            Confirms::Person(Box::new(confirmer(
                Arc::clone(&hub),
                Arc::clone(&approvals),
                Arc::clone(&cancel),
                Arc::clone(&log_cell),
            ))),
        )
        .user_config(&opts.user)
        .asker(asker(Arc::clone(&hub), Arc::clone(&cancel)))
        .log(LogPlace::New)
        .cancel(Arc::clone(&cancel))
        .subscribe(move |entry| {
            let event: Value = serde_json::from_str(&entry.line).unwrap_or(Value::Null);
            to_hub.push(json!({"k": "event", "e": event}));
        })
        .build()
        .map_err(|e| e.to_string())?;
        let _ = log_cell.set(Arc::clone(&log));
        hub.push(json!({"k": "session", "id": log.id(), "root": host.workspace().root().display().to_string(), "model": cfg.model.model}));
        let (tasks, task_rx) = channel::<String>();
        let busy = Arc::new(AtomicBool::new(false));
        let worker_hub = Arc::clone(&hub);
        let worker_log = Arc::clone(&log);
        let worker_cancel = Arc::clone(&cancel);
        let worker_busy = Arc::clone(&busy);
        std::thread::Builder::new()
            .name("nib-console-agent".into())
            .spawn(move || {
                let mut history = Value::Null;
                for task in task_rx {
                    worker_cancel.store(false, Ordering::Relaxed);
                    let mut cfg = cfg.clone();
                    cfg.history = history.clone();
                    let stream_hub = Arc::clone(&worker_hub);
                    let outcome = run_task_with(
                        Arc::clone(&host),
                        Arc::clone(&worker_log),
                        &cfg,
                        &task,
                        move |ev| on_stream(&stream_hub, ev),
                        Arc::clone(&worker_cancel),
                    );
                    let done = match outcome {
                        Ok(o) => {
                            if o.messages.is_array() {
                                history = o.messages.clone();
                            }
                            json!({"k": "done", "status": o.status.as_str(), "text": o.text})
                        }
                        Err(e) => json!({"k": "done", "status": "error", "text": e.to_string()}),
                    };
                    worker_busy.store(false, Ordering::Relaxed);
                    worker_hub.push(done);
                }
            })
            .map_err(|e| format!("cannot start the agent thread: {e}"))?;
        Ok(Live {
            hub,
            tasks: Some(tasks),
            cancel,
            approvals,
            config_path: opts.config_path,
            log,
            busy,
        })
    }

    /// The pages' side of a session another client runs (the terminal
    /// client, `nib exec`): answers, interrupts, no tasks.
    pub fn attached(hub: Arc<Hub>, session: Attached, config_path: Option<PathBuf>) -> Live {
        Live {
            hub,
            tasks: None,
            cancel: session.cancel,
            approvals: session.approvals,
            config_path,
            log: session.log,
            busy: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Whether tasks can be given here (not beside another client).
    pub fn takes_tasks(&self) -> bool {
        self.tasks.is_some()
    }

    /// Run `task`; refused while another runs.
    pub fn submit(&self, task: &str) -> Result<(), String> {
        let Some(tasks) = &self.tasks else {
            return Err(
                "this console is beside the terminal client (or nib exec): give tasks there".into(),
            );
        };
        let task = task.trim();
        if task.is_empty() {
            return Err("the task is empty: say what the agent should do".into());
        }
        if self.busy.swap(true, Ordering::Relaxed) {
            return Err("a task is running: wait for it to end, or interrupt it first".into());
        }
        self.hub.push(json!({"k": "task", "text": task}));
        tasks
            .send(task.to_string())
            .map_err(|_| "the agent thread has stopped; restart nib console".to_string())
    }

    /// Stop the running task (its open confirms are answered no).
    pub fn interrupt(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.hub.refuse_all("the user interrupted the run");
    }

    pub fn log(&self) -> &Arc<EventLog> {
        &self.log
    }

    /// A page answers confirm `id`. The first answer wins; a later one is
    /// told who answered (409). "always" is refused for a Security confirm
    /// (403) and where no standing approval fits.
    pub fn answer(&self, id: u64, answer: PageAnswer) -> Result<(), AnswerError> {
        let refused = |r: Refused| match r {
            Refused::Unknown => (404, format!("no confirm {id} is open")),
            Refused::Answered(how) => (409, how),
        };
        let (kind, editable, suggestion, ballot, tool, path) = self
            .hub
            .peek_confirm(id, |c| {
                (
                    c.kind,
                    c.editable,
                    c.suggestion.clone(),
                    c.ballot.clone(),
                    c.tool.clone(),
                    c.path.clone(),
                )
            })
            .map_err(refused)?;
        let approval = match &answer {
            PageAnswer::Always if kind == ConfirmKind::Security => {
                return Err((
                    403,
                    "standing approvals cannot answer a security confirm: approve or reject it"
                        .into(),
                ));
            }
            PageAnswer::Always => match suggestion {
                Some(a) => Some(a),
                None => {
                    return Err((
                        400,
                        "no standing approval fits this call: approve or reject it".into(),
                    ));
                }
            },
            PageAnswer::Edited(_) if !editable => {
                return Err((400, "this confirm cannot be edited here (not a file write, or its text holds a credential)".into()));
            }
            _ => None,
        };
        // From here nobody else can answer; a failure below gives the
        // confirm back (the claim is dropped).
        let claim = ballot.claim(BROWSER).map_err(|said| {
            let said = ballot.settled(SETTLE).unwrap_or(said);
            (409, format!("already {}", said.describe()))
        })?;
        let saved = match &approval {
            Some(a) => match self.save_approval(a) {
                Ok(saved) => Some(saved),
                Err(e) => return Err((500, format!("could not save the approval: {e}"))),
            },
            None => None,
        };
        let (said, reply, reason) = match answer {
            PageAnswer::Yes | PageAnswer::Always => (
                "yes",
                ConfirmAnswer {
                    approved: true,
                    reason: None,
                    edited: None,
                },
                None,
            ),
            PageAnswer::Edited(text) => (
                "edited",
                ConfirmAnswer {
                    approved: true,
                    reason: None,
                    edited: Some(text),
                },
                None,
            ),
            PageAnswer::No(reason) => {
                let reason = Some(reason.trim().to_string()).filter(|r| !r.is_empty());
                (
                    "no",
                    ConfirmAnswer {
                        approved: false,
                        reason: reason.clone(),
                        edited: None,
                    },
                    reason,
                )
            }
        };
        let _ = self.log.emit(&Event::ConfirmAnswer(event::ConfirmAnswer {
            tool,
            path,
            kind: kind_name(kind).into(),
            answer: said.into(),
            by: "user".into(),
            reason: reason.clone(),
            saved_approval: saved.clone(),
            scope: None,
        }));
        let mut how = Said::new(BROWSER, said);
        how.reason = reason;
        how.saved = saved;
        claim.give(how, reply);
        Ok(())
    }

    fn save_approval(&self, a: &Approval) -> Result<String, String> {
        let path = self
            .config_path
            .clone()
            .or_else(UserConfig::path)
            .ok_or("neither XDG_CONFIG_HOME nor HOME is set: no user config to save to")?;
        UserConfig::add_approval_at(&path, a)?;
        self.approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(a.clone());
        Ok(format!("{} (in {})", a.scope(), path.display()))
    }

    /// A page answers question `id`: `true`/`false` for yes/no, a string
    /// for a choice or text, `null` to skip.
    pub fn answer_ask(&self, id: u64, value: &Value) -> Result<(), AnswerError> {
        let (question, ballot) = self
            .hub
            .peek_ask(id, |a| (a.question.clone(), a.ballot.clone()))
            .map_err(|r| match r {
                Refused::Unknown => (404, format!("no question {id} is open")),
                Refused::Answered(how) => (409, how),
            })?;
        let answer = match (&question, value) {
            (_, Value::Null) => Answer::Skipped,
            (Question::YesNo(_), Value::Bool(b)) => Answer::Yes(*b),
            (Question::Choice(_, choices), Value::String(s)) if choices.contains(s) => {
                Answer::Choice(s.clone())
            }
            (Question::Text(_), Value::String(s)) => Answer::Text(s.clone()),
            (q, v) => {
                let want = match q {
                    Question::YesNo(_) => "true or false",
                    Question::Choice(..) => "one of the choices, as a string",
                    Question::Text(_) => "a string",
                };
                return Err((
                    400,
                    format!("{v} does not answer this question: send {want}"),
                ));
            }
        };
        let said = match &answer {
            Answer::Yes(true) => "yes".to_string(),
            Answer::Yes(false) => "no".to_string(),
            Answer::Choice(s) | Answer::Text(s) => s.clone(),
            Answer::Skipped => "skipped".to_string(),
        };
        ballot
            .answer(Said::new(BROWSER, &said), answer)
            .map_err(|said| {
                let said = ballot.settled(SETTLE).unwrap_or(said);
                (409, format!("already {}", said.describe()))
            })
    }
}

pub(super) fn on_stream(hub: &Hub, ev: &StreamEvent) {
    match ev {
        StreamEvent::TextDelta(d) => hub.push(json!({"k": "text", "d": d})),
        StreamEvent::ReasoningDelta(d) => hub.push(json!({"k": "reasoning", "d": d})),
        _ => {}
    }
}

/// The host's confirm callback: a standing approval answers the Write
/// confirms it covers; everything else is opened in the hub and waits.
fn confirmer(
    hub: Arc<Hub>,
    approvals: Arc<Mutex<Vec<Approval>>>,
    cancel: Arc<AtomicBool>,
    log: Arc<OnceLock<Arc<EventLog>>>,
) -> impl Fn(&ConfirmRequest) -> ConfirmAnswer + Send + Sync + 'static {
    move |req: &ConfirmRequest| {
        if let Some(a) = crate::agent::standing_approval(&approvals, req, &log) {
            hub.push(json!({"k": "auto", "form": positional(req.call), "scope": a.scope()}));
            return true.into();
        }
        if cancel.load(Ordering::Relaxed) {
            return ConfirmAnswer {
                approved: false,
                reason: Some("the user interrupted the run".into()),
                edited: None,
            };
        }
        let (reply, answer) = channel();
        let ballot = Ballot::new(reply);
        open_confirm(&hub, req, ballot.clone());
        let interrupted = ConfirmAnswer {
            approved: false,
            reason: Some("the user interrupted the run".into()),
            edited: None,
        };
        wait_for(&ballot, &answer, &cancel, interrupted, "no")
    }
}

/// Show `req` to the pages, answered through `ballot`.
pub fn open_confirm(hub: &Arc<Hub>, req: &ConfirmRequest, ballot: Ballot<ConfirmAnswer>) {
    let (view, suggestion, editable) = confirm_view(req);
    hub.open_confirm(
        view,
        OpenConfirm {
            kind: req.kind,
            tool: req.call.decl.name.to_string(),
            path: req.path.map(str::to_string),
            suggestion,
            editable,
            ballot,
        },
    );
}

/// A strategy's `ask`: opened in the hub; the worker waits for a page.
fn asker(
    hub: Arc<Hub>,
    cancel: Arc<AtomicBool>,
) -> impl Fn(&Question) -> Option<Answer> + Send + Sync + 'static {
    move |question: &Question| {
        if cancel.load(Ordering::Relaxed) {
            return Some(Answer::Skipped);
        }
        let (reply, answer) = channel();
        let ballot = Ballot::new(reply);
        hub.open_ask(OpenAsk {
            question: question.clone(),
            ballot: ballot.clone(),
        });
        Some(wait_for(
            &ballot,
            &answer,
            &cancel,
            Answer::Skipped,
            "skipped",
        ))
    }
}
