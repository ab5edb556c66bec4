//! `nib exec --console`: the browser console as the person's way to
//! answer a run that otherwise answers by policy. A Write confirm is
//! answered by `--approve writes` or by a standing approval that covers it
//! (the page is told which); every other confirm, and every Security
//! confirm, waits for an answer in the page, as do the strategy's
//! questions. A wait ends with the run's `--timeout` or a signal (the
//! answer is then no), so a page nobody opens cannot hold a script forever.
//! stderr says what waits and how it was answered.

use std::sync::atomic::AtomicBool;
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex, OnceLock};

use super::progress::{self, Shared};
use crate::agent::beside::{Attached, Ballot, Beside, PageBeside, wait_for};
use crate::agent::{AgentSession, Confirms, log_auto_yes, standing_approval};
use crate::guard::ConfirmKind;
use crate::guard::approvals::Approval;
use crate::prim::schema::positional;
use crate::prim::{Answer, ConfirmAnswer, ConfirmRequest, Question};
use crate::session::EventLog;
use crate::settings::UserConfig;

/// The page beside one run, and what the run's confirmer shares with it.
pub struct Page {
    pub beside: Arc<dyn Beside>,
    pub cancel: Arc<AtomicBool>,
    approvals: Arc<Mutex<Vec<Approval>>>,
    log: Arc<OnceLock<Arc<EventLog>>>,
    /// The run's progress, so the heartbeat says what it waits for.
    tally: Shared,
}

impl Page {
    pub fn new(console: &PageBeside, config: &UserConfig, tally: &Shared) -> Page {
        Page {
            beside: Arc::clone(&console.beside),
            cancel: Arc::new(AtomicBool::new(false)),
            approvals: Arc::new(Mutex::new(config.approvals.clone())),
            log: Arc::default(),
            tally: Arc::clone(tally),
        }
    }

    /// The session started: the page gets its log and handles.
    pub fn attach(&self, session: &AgentSession, model: &str) {
        let _ = self.log.set(Arc::clone(&session.log));
        self.beside.attach(Attached {
            log: Arc::clone(&session.log),
            approvals: Arc::clone(&self.approvals),
            cancel: Arc::clone(&self.cancel),
            root: session.host.workspace().root().to_path_buf(),
            model: model.to_string(),
        });
    }

    /// The run's confirms: policy first, then the page.
    pub fn confirms(&self, approve_writes: bool) -> Confirms {
        let beside = Arc::clone(&self.beside);
        let cancel = Arc::clone(&self.cancel);
        let approvals = Arc::clone(&self.approvals);
        let log = Arc::clone(&self.log);
        let tally = Arc::clone(&self.tally);
        Confirms::Person(Box::new(move |req: &ConfirmRequest| {
            let what = match req.path {
                Some(p) => format!("{} {p}", req.call.decl.name),
                None => positional(req.call),
            };
            if req.kind == ConfirmKind::Write && approve_writes {
                log_auto_yes(&log, req, "policy", "--approve writes".into());
                beside.auto_approved(req, "--approve writes");
                return true.into();
            }
            if let Some(a) = standing_approval(&approvals, req, &log) {
                beside.auto_approved(req, &a.scope());
                return true.into();
            }
            let (reply, answer) = channel();
            let ballot = Ballot::new(reply);
            beside.confirm(req, ballot.clone());
            let kind = match req.kind {
                ConfirmKind::Security => "a security confirm",
                ConfirmKind::Write => "a confirm",
            };
            eprintln!("nib exec: {kind} waits for an answer in the console: {what}");
            progress::busy(
                &tally,
                format!("waiting for your answer in the console ({what})"),
            );
            let interrupted = ConfirmAnswer {
                approved: false,
                reason: Some("the run was stopped".into()),
                edited: None,
            };
            let got = wait_for(&ballot, &answer, &cancel, interrupted, "no");
            if let Some(said) = ballot.answered() {
                eprintln!("nib exec: {what}: {}", said.describe());
            }
            progress::busy(&tally, format!("running {}", req.call.decl.name));
            got
        }))
    }

    /// The strategy's questions go to the page.
    pub fn asker(&self) -> impl Fn(&Question) -> Option<Answer> + Send + Sync + 'static {
        let beside = Arc::clone(&self.beside);
        let cancel = Arc::clone(&self.cancel);
        let tally = Arc::clone(&self.tally);
        move |question: &Question| {
            let (reply, answer) = channel();
            let ballot = Ballot::new(reply);
            beside.ask(question, ballot.clone());
            let first = question
                .text()
                .lines()
                .next()
                .unwrap_or_default()
                .to_string();
            eprintln!("nib exec: a question waits for an answer in the console: {first}");
            progress::busy(
                &tally,
                "waiting for your answer to a question in the console".into(),
            );
            let got = wait_for(&ballot, &answer, &cancel, Answer::Skipped, "skipped");
            if let Some(said) = ballot.answered() {
                eprintln!("nib exec: {}", said.describe());
            }
            progress::idle(&tally);
            Some(got)
        }
    }
}
