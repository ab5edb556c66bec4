//! The console beside another client (`nib --console`, `nib exec
//! --console`): a [`Mirror`] is the [`Beside`] the client's session talks
//! to. It shows the pages what the client shows (events, the streaming
//! text, each confirm and question, standing approvals' answers, tasks)
//! and hands the pages' answers back through the client's ballots, so the
//! first answer, here or there, is the one the session gets.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};

use super::hub::{Hub, OpenAsk};
use super::live::{Live, on_stream, open_confirm};
use crate::agent::beside::{Attached, Ballot, Beside};
use crate::model::StreamEvent;
use crate::prim::schema::positional;
use crate::prim::{Answer, ConfirmAnswer, ConfirmRequest, Question};
use crate::session::Entry;

/// The pages' view of a session another client runs.
pub struct Mirror {
    pub hub: Arc<Hub>,
    live: OnceLock<Live>,
    /// Where "always" saves; `None`: the user's config file.
    config_path: Option<PathBuf>,
    /// Which client runs the session ("the terminal", "nib exec").
    client: String,
}

impl Mirror {
    pub fn new(client: &str, config_path: Option<PathBuf>) -> Arc<Mirror> {
        Arc::new(Mirror {
            hub: Arc::default(),
            live: OnceLock::new(),
            config_path,
            client: client.to_string(),
        })
    }

    /// The session's answering side, once the client has started it.
    pub fn live(&self) -> Option<&Live> {
        self.live.get()
    }

    pub fn client(&self) -> &str {
        &self.client
    }
}

impl Beside for Mirror {
    fn attach(&self, session: Attached) {
        self.hub.push(json!({
            "k": "session",
            "id": session.log.id(),
            "root": session.root.display().to_string(),
            "model": session.model,
            "beside": self.client,
        }));
        let live = Live::attached(Arc::clone(&self.hub), session, self.config_path.clone());
        let _ = self.live.set(live);
    }

    fn event(&self, entry: &Entry) {
        let event: Value = serde_json::from_str(&entry.line).unwrap_or(Value::Null);
        self.hub.push(json!({"k": "event", "e": event}));
    }

    fn stream(&self, event: &StreamEvent) {
        on_stream(&self.hub, event);
    }

    fn confirm(&self, req: &ConfirmRequest, ballot: Ballot<ConfirmAnswer>) {
        open_confirm(&self.hub, req, ballot);
    }

    fn ask(&self, question: &Question, ballot: Ballot<Answer>) {
        self.hub.open_ask(OpenAsk {
            question: question.clone(),
            ballot,
        });
    }

    fn auto_approved(&self, req: &ConfirmRequest, scope: &str) {
        self.hub
            .push(json!({"k": "auto", "form": positional(req.call), "scope": scope}));
    }

    fn task(&self, text: &str) {
        self.hub.push(json!({"k": "task", "text": text}));
    }

    fn task_done(&self, status: &str, text: &str) {
        self.hub
            .push(json!({"k": "done", "status": status, "text": text}));
    }
}
