//! The agent side of the terminal client: a worker thread that runs one
//! task at a time through the real engine (`run_task_with`), and the
//! channel messages it sends the UI thread (event-log events, model stream
//! events, confirm requests with a reply channel, the end of a task).
//!
//! The UI thread owns the terminal; this thread never touches it. A confirm
//! blocks the worker until the UI answers (or the UI goes away, which
//! counts as no). With the browser console beside the client
//! (`nib --console`), every event, confirm and question goes there too:
//! each confirm is a [`Ballot`] both hold, the first answer wins, and the
//! UI is told when the page answered ([`UiEvent::AnsweredElsewhere`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};

use std::sync::OnceLock;

use crate::agent::beside::{Attached, Ballot, Beside, Said, TERMINAL, wait_for};
use crate::agent::{
    AgentConfig, AgentSession, Confirms, LogPlace, Outcome, SessionBuilder, end_session,
    run_task_with,
};
use crate::files::Workspace;
use crate::guard::ConfirmKind;
use crate::guard::Reason;
use crate::guard::approvals::Approval;
use crate::model::StreamEvent;
use crate::prim::schema::positional;
use crate::prim::{Answer, ConfirmAnswer, ConfirmRequest, Host, Question};
use crate::session::event::Event;
use crate::session::resume::{EARLIER_KEPT, earlier_from_log, with_earlier};
use crate::session::{Entry, EventLog};
use crate::settings::UserConfig;

/// What the worker tells the UI.
#[derive(Debug)]
pub enum UiEvent {
    /// An event-log event, as written.
    Log(Box<Entry>),
    Stream(StreamEvent),
    /// A confirm waiting for the user.
    Confirm(Box<PendingConfirm>),
    /// A strategy's yes/no question (`ask`), waiting for the user.
    Ask(Box<PendingAsk>),
    /// The open confirm or question was answered in the other place (the
    /// browser console beside the client), or by nib.
    AnsweredElsewhere(Said),
    /// A Write confirm a standing approval answered.
    AutoApproved {
        what: String,
        scope: String,
    },
    /// The task ended (or could not run: the error).
    TaskDone(Result<Outcome, String>),
}

/// A strategy's question as the UI shows it, with where the answer goes.
#[derive(Debug)]
pub struct PendingAsk {
    pub question: Question,
    pub reply: Ballot<Answer>,
}

/// A confirm as the UI shows it, with where the answer goes.
#[derive(Debug)]
pub struct PendingConfirm {
    pub kind: ConfirmKind,
    pub tool: String,
    /// The call's positional form, `(fs-edit "calc.py" ...)`.
    pub form: String,
    /// For file writes: the resolved workspace-relative path.
    pub path: Option<String>,
    pub reasons: Vec<Reason>,
    pub diff: Option<String>,
    /// For file writes: the full proposed text (for `e`).
    pub proposed: Option<String>,
    /// The standing approval `a` would save, if one fits.
    pub suggestion: Option<Approval>,
    /// Why the same call is confirmed again (its file changed on disk
    /// while the previous confirm was open).
    pub again: Option<String>,
    /// Answered here or beside (the first answer wins).
    pub reply: Ballot<ConfirmAnswer>,
}

/// What the worker is asked to do.
enum Job {
    Task(String),
    /// The client is closing: run the session-end hooks, say when done.
    End(Sender<()>),
}

/// A running session: where tasks go, and the handles the UI shares.
pub struct Session {
    tasks: Sender<Job>,
    pub cancel: Arc<AtomicBool>,
    pub approvals: Arc<Mutex<Vec<Approval>>>,
    pub host: Arc<Host>,
    pub log: Arc<EventLog>,
    /// The config the next task runs with (`/model`, `/strategy` change it).
    pub cfg: Arc<Mutex<AgentConfig>>,
    /// The user config's `[prices]`, for the status line and `/cost`.
    pub prices: std::collections::BTreeMap<String, Vec<f64>>,
}

impl Session {
    /// Start the worker thread on `ws`. Events go to `ui`.
    pub fn start(
        ws: Workspace,
        cfg: AgentConfig,
        approvals: Vec<Approval>,
        ui: Sender<UiEvent>,
    ) -> Result<Session, String> {
        Session::start_with(ws, cfg, approvals, ui, None, None)
    }

    /// [`Session::start`], resuming the session logged in `resume` (an
    /// events.jsonl): new events are appended to it, and its tasks and
    /// answers are the context of the next task, as if it had never ended.
    /// With `beside` (the browser console), the session is shown and
    /// answered there too.
    pub fn start_with(
        ws: Workspace,
        cfg: AgentConfig,
        approvals: Vec<Approval>,
        ui: Sender<UiEvent>,
        resume: Option<&std::path::Path>,
        beside: Option<Arc<dyn Beside>>,
    ) -> Result<Session, String> {
        // The guard's policy: the user's config, tightened by the
        // workspace's (the same as nib exec's).
        let user = UserConfig::load().map_err(|e| e.to_string())?;
        let (place, earlier) = match resume {
            Some(path) => (LogPlace::At(path.to_path_buf()), earlier_from_log(path)),
            None => (LogPlace::New, Vec::new()),
        };
        let to_ui = ui.clone();
        let cancel = Arc::new(AtomicBool::new(false));
        let approvals = Arc::new(Mutex::new(approvals));
        // The confirmer logs standing approvals' answers; the log exists
        // once the session is built.
        let log_cell: Arc<OnceLock<Arc<EventLog>>> = Arc::default();
        let to_beside = beside.clone();
        let AgentSession { host, log } = SessionBuilder::new(
            ws,
            Confirms::Person(Box::new(confirmer(
                ui.clone(),
                Arc::clone(&approvals),
                Arc::clone(&cancel),
                Arc::clone(&log_cell),
                beside.clone(),
            ))),
        )
        .user_config(&user)
        .asker(asker(ui.clone(), Arc::clone(&cancel), beside.clone()))
        .log(place)
        .cancel(Arc::clone(&cancel))
        .subscribe(move |entry| {
            if let Some(b) = &to_beside {
                b.event(entry);
            }
            let _ = to_ui.send(UiEvent::Log(Box::new(entry.clone())));
        })
        .build()
        .map_err(|e| e.to_string())?;
        let _ = log_cell.set(Arc::clone(&log));
        if let Some(b) = &beside {
            b.attach(Attached {
                log: Arc::clone(&log),
                approvals: Arc::clone(&approvals),
                cancel: Arc::clone(&cancel),
                root: host.workspace().root().to_path_buf(),
                model: cfg.model.model.clone(),
            });
        }
        let cfg = Arc::new(Mutex::new(cfg));
        let (tasks, task_rx) = channel::<Job>();
        let worker = Worker {
            host: Arc::clone(&host),
            log: Arc::clone(&log),
            cfg: Arc::clone(&cfg),
            cancel: Arc::clone(&cancel),
            ui,
            earlier,
            beside,
        };
        std::thread::Builder::new()
            .name("nib-agent".into())
            .spawn(move || worker.serve(task_rx))
            .map_err(|e| format!("cannot start the agent thread: {e}"))?;
        Ok(Session {
            tasks,
            cancel,
            approvals,
            host,
            log,
            cfg,
            prices: user.prices.clone(),
        })
    }

    /// Queue a task; it runs when the previous one has ended.
    pub fn submit(&self, task: String) -> bool {
        self.tasks.send(Job::Task(task)).is_ok()
    }

    /// End the session, as the client closes (a quit, Ctrl-C or Ctrl-D, a
    /// signal): a running task is stopped, then the strategy's session-end
    /// hooks run, as `nib exec` runs them after its task. Waits for them
    /// up to `wait`; returns whether they finished.
    pub fn end(&self, wait: std::time::Duration) -> bool {
        self.interrupt();
        let (done, ended) = channel();
        if self.tasks.send(Job::End(done)).is_err() {
            return false;
        }
        ended.recv_timeout(wait).is_ok()
    }

    /// Ask the running task to stop (Esc).
    pub fn interrupt(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

struct Worker {
    host: Arc<Host>,
    log: Arc<EventLog>,
    cfg: Arc<Mutex<AgentConfig>>,
    cancel: Arc<AtomicBool>,
    ui: Sender<UiEvent>,
    /// Tasks and answers of a resumed session.
    earlier: Vec<(String, String)>,
    beside: Option<Arc<dyn Beside>>,
}

impl Worker {
    fn serve(self, tasks: Receiver<Job>) {
        // Each task is a fresh run of the strategy; the earlier tasks of the
        // session and their answers go in front of the next one so "now do
        // the same for mean" has something to refer to.
        let mut earlier = self.earlier.clone();
        // The conversation so far: the next task continues it (the real
        // messages, not a summary), once a task of this run has ended.
        let mut history = serde_json::Value::Null;
        for job in tasks {
            let task = match job {
                Job::Task(task) => task,
                Job::End(done) => {
                    let cfg = self
                        .cfg
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .clone();
                    // An error is in the log (an `error` event).
                    let _ = end_session(Arc::clone(&self.host), Arc::clone(&self.log), &cfg);
                    let _ = done.send(());
                    return;
                }
            };
            let prompt = if history.is_array() {
                task.clone()
            } else {
                with_earlier(&earlier, &task)
            };
            self.cancel.store(false, Ordering::Relaxed);
            let mut cfg = self
                .cfg
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            cfg.history = history.clone();
            let ui = self.ui.clone();
            let log = Arc::clone(&self.log);
            if let Some(b) = &self.beside {
                b.task(&task);
            }
            let beside = self.beside.clone();
            let outcome = run_task_with(
                Arc::clone(&self.host),
                Arc::clone(&self.log),
                &cfg,
                &prompt,
                move |ev| {
                    // What the stream cannot show (a fallback, a retry's
                    // wait) is a notice in the log, so the transcript and
                    // a resumed session both show it.
                    if let Some(n) = crate::settings::notice::of_stream(ev) {
                        let _ = log.emit(&Event::Notice(n));
                    }
                    if let Some(b) = &beside {
                        b.stream(ev);
                    }
                    let _ = ui.send(UiEvent::Stream(ev.clone()));
                },
                Arc::clone(&self.cancel),
            );
            if let Ok(o) = &outcome {
                earlier.push((task.clone(), o.text.clone()));
                if earlier.len() > EARLIER_KEPT {
                    earlier.remove(0);
                }
                if o.messages.is_array() {
                    history = o.messages.clone();
                }
            }
            if let Some(b) = &self.beside {
                match &outcome {
                    Ok(o) => b.task_done(o.status.as_str(), &o.text),
                    Err(e) => b.task_done("error", &e.to_string()),
                }
            }
            let done = UiEvent::TaskDone(outcome.map_err(|e| e.to_string()));
            if self.ui.send(done).is_err() {
                return;
            }
        }
    }
}

/// The host's confirm callback: standing approvals answer the Write
/// confirms they cover; everything else goes to the UI and waits.
fn confirmer(
    ui: Sender<UiEvent>,
    approvals: Arc<Mutex<Vec<Approval>>>,
    cancel: Arc<AtomicBool>,
    log: Arc<OnceLock<Arc<EventLog>>>,
    beside: Option<Arc<dyn Beside>>,
) -> impl Fn(&ConfirmRequest) -> ConfirmAnswer + Send + Sync + 'static {
    let ui = Mutex::new(ui);
    move |req: &ConfirmRequest| {
        let ui = ui.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let rel = req.path.unwrap_or("");
        let form = positional(req.call);
        if let Some(a) = crate::agent::standing_approval(&approvals, req, &log) {
            if let Some(b) = &beside {
                b.auto_approved(req, &a.scope());
            }
            let _ = ui.send(UiEvent::AutoApproved {
                what: form,
                scope: a.scope(),
            });
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
        told_when_answered_elsewhere(&ballot, &ui);
        if let Some(b) = &beside {
            b.confirm(req, ballot.clone());
        }
        let pending = PendingConfirm {
            kind: req.kind,
            tool: req.call.decl.name.to_string(),
            form,
            path: req.path.map(str::to_string),
            reasons: req.reasons.to_vec(),
            diff: req.diff.map(str::to_string),
            proposed: req.proposed.map(str::to_string),
            suggestion: Approval::suggest(req.call, rel),
            again: req.again.map(str::to_string),
            reply: ballot.clone(),
        };
        if ui.send(UiEvent::Confirm(Box::new(pending))).is_err() {
            let _ = ballot.answer(Said::new(crate::agent::beside::NIB, "no"), false.into());
        }
        let interrupted = ConfirmAnswer {
            approved: false,
            reason: Some("the user interrupted the run".into()),
            edited: None,
        };
        wait_for(&ballot, &answer, &cancel, interrupted, "no")
    }
}

/// Tell the UI when `ballot` is answered anywhere but in the terminal, so
/// its confirm or question closes and says where it was answered.
fn told_when_answered_elsewhere<T>(ballot: &Ballot<T>, ui: &Sender<UiEvent>) {
    let ui = Mutex::new(ui.clone());
    ballot.on_answer(move |said| {
        if said.by != TERMINAL {
            let ui = ui.lock().unwrap_or_else(PoisonError::into_inner);
            let _ = ui.send(UiEvent::AnsweredElsewhere(said.clone()));
        }
    });
}

/// A strategy's `ask`: the question goes to the UI and the worker waits
/// for the answer (no when the run was interrupted or the UI went away).
fn asker(
    ui: Sender<UiEvent>,
    cancel: Arc<AtomicBool>,
    beside: Option<Arc<dyn Beside>>,
) -> impl Fn(&Question) -> Option<Answer> + Send + Sync + 'static {
    let ui = Mutex::new(ui);
    move |question: &Question| {
        if cancel.load(Ordering::Relaxed) {
            return Some(Answer::Skipped);
        }
        let ui = ui.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let (reply, answer) = channel();
        let ballot = Ballot::new(reply);
        told_when_answered_elsewhere(&ballot, &ui);
        if let Some(b) = &beside {
            b.ask(question, ballot.clone());
        }
        let pending = PendingAsk {
            question: question.clone(),
            reply: ballot.clone(),
        };
        if ui.send(UiEvent::Ask(Box::new(pending))).is_err() {
            let _ = ballot.answer(
                Said::new(crate::agent::beside::NIB, "skipped"),
                Answer::Skipped,
            );
        }
        Some(wait_for(
            &ballot,
            &answer,
            &cancel,
            Answer::Skipped,
            "skipped",
        ))
    }
}
