//! The live session's state as the pages see it: every message pushed so
//! far (a page that opens late, or reconnects, gets them all from the
//! number it last saw), and the confirms and questions waiting for an
//! answer. An open confirm holds its [`Ballot`], the one way back to the
//! agent's thread, shared with the terminal client when the console runs
//! beside it: whoever answers first wins (a page, another page, the
//! terminal, nib stopping the run), every page is told who and how, and
//! every later answer is refused with the same words.
//!
//! Every message is masked before it is kept ([`mask_json`]), so no page
//! can be sent an unmasked credential, whatever produced the text.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};

use super::view::mask_json;
use crate::agent::beside::{Ballot, NIB, Said};
use crate::guard::ConfirmKind;
use crate::guard::approvals::Approval;
use crate::prim::{Answer, ConfirmAnswer, Question};

/// A confirm waiting for its answer.
pub struct OpenConfirm {
    pub kind: ConfirmKind,
    pub tool: String,
    pub path: Option<String>,
    /// The standing approval "always" would save (never for Security).
    pub suggestion: Option<Approval>,
    /// The proposed text could be shown unmasked, so it may be edited.
    pub editable: bool,
    pub ballot: Ballot<ConfirmAnswer>,
}

/// A strategy's question waiting for its answer.
pub struct OpenAsk {
    pub question: Question,
    pub ballot: Ballot<Answer>,
}

/// Why an answer was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// No such confirm or question.
    Unknown,
    /// Someone answered first: who, and what.
    Answered(String),
}

#[derive(Default)]
struct State {
    /// Masked JSON messages; message `n` has sequence number `n + 1`.
    messages: Vec<String>,
    confirms: HashMap<u64, OpenConfirm>,
    asks: HashMap<u64, OpenAsk>,
    /// How each closed confirm or question was answered.
    answered: HashMap<u64, String>,
    next_id: u64,
}

/// The live state, shared by the agent's thread and every connection.
#[derive(Default)]
pub struct Hub {
    state: Mutex<State>,
    wake: Condvar,
}

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keep `message` (masked) and wake every stream.
    pub fn push(&self, message: Value) {
        let text = mask_json(message).to_string();
        self.lock().messages.push(text);
        self.wake.notify_all();
    }

    /// The messages after sequence number `seen`, waiting up to `wait` for
    /// one when there are none yet: `(last sequence number, messages)`.
    pub fn since(&self, seen: u64, wait: Duration) -> (u64, Vec<String>) {
        let mut state = self.lock();
        if state.messages.len() as u64 <= seen {
            state = self
                .wake
                .wait_timeout_while(state, wait, |s| s.messages.len() as u64 <= seen)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let from = (seen as usize).min(state.messages.len());
        (state.messages.len() as u64, state.messages[from..].to_vec())
    }

    /// Open a confirm: `view` is what the pages show (its `id` is set
    /// here). Returns the confirm's id. However its ballot is answered,
    /// the confirm closes for every page.
    pub fn open_confirm(self: &Arc<Self>, mut view: Value, open: OpenConfirm) -> u64 {
        let ballot = open.ballot.clone();
        let id = {
            let mut state = self.lock();
            state.next_id += 1;
            let id = state.next_id;
            state.confirms.insert(id, open);
            id
        };
        view["id"] = json!(id);
        view["k"] = json!("confirm");
        self.push(view);
        let hub = Arc::clone(self);
        ballot.on_answer(move |said| hub.close(id, said));
        id
    }

    /// Look at an open confirm.
    pub fn peek_confirm<R>(
        &self,
        id: u64,
        f: impl FnOnce(&OpenConfirm) -> R,
    ) -> Result<R, Refused> {
        let state = self.lock();
        match state.confirms.get(&id) {
            Some(open) => Ok(f(open)),
            None => Err(self.refusal(&state, id)),
        }
    }

    /// Look at an open question.
    pub fn peek_ask<R>(&self, id: u64, f: impl FnOnce(&OpenAsk) -> R) -> Result<R, Refused> {
        let state = self.lock();
        match state.asks.get(&id) {
            Some(open) => Ok(f(open)),
            None => Err(self.refusal(&state, id)),
        }
    }

    /// A confirm or question was answered: it closes, later answers are
    /// told how, and every page is told.
    fn close(&self, id: u64, said: &Said) {
        {
            let mut state = self.lock();
            state.confirms.remove(&id);
            state.asks.remove(&id);
            state
                .answered
                .insert(id, format!("already {}", said.describe()));
        }
        self.push(json!({
            "k": "answered",
            "id": id,
            "by": said.by,
            "answer": said.answer,
            "reason": said.reason,
            "saved": said.saved,
        }));
    }

    /// Open a question; returns its id.
    pub fn open_ask(self: &Arc<Self>, open: OpenAsk) -> u64 {
        let (id, view) = {
            let mut state = self.lock();
            state.next_id += 1;
            let id = state.next_id;
            let view = match &open.question {
                Question::YesNo(q) => json!({"type": "yesno", "question": q}),
                Question::Choice(q, choices) => {
                    json!({"type": "choice", "question": q, "choices": choices})
                }
                Question::Text(q) => json!({"type": "text", "question": q}),
            };
            state.asks.insert(id, open);
            (id, view)
        };
        let mut view = view;
        view["id"] = json!(id);
        view["k"] = json!("ask");
        let ballot = self.peek_ask(id, |a| a.ballot.clone());
        self.push(view);
        if let Ok(ballot) = ballot {
            let hub = Arc::clone(self);
            ballot.on_answer(move |said| hub.close(id, said));
        }
        id
    }

    /// Every open confirm and question is answered no (the session is
    /// going away, or the run was interrupted).
    pub fn refuse_all(&self, reason: &str) {
        let (confirms, asks): (Vec<_>, Vec<_>) = {
            let mut state = self.lock();
            (
                state.confirms.drain().collect(),
                state.asks.drain().collect(),
            )
        };
        // Each ballot's watcher closes it for the pages.
        for (_, open) in confirms {
            let mut said = Said::new(NIB, "no");
            said.reason = Some(reason.to_string());
            let no = ConfirmAnswer {
                approved: false,
                reason: Some(reason.to_string()),
                edited: None,
            };
            let _ = open.ballot.answer(said, no);
        }
        for (_, open) in asks {
            let _ = open
                .ballot
                .answer(Said::new(NIB, "skipped"), Answer::Skipped);
        }
    }

    fn refusal(&self, state: &State, id: u64) -> Refused {
        match state.answered.get(&id) {
            Some(how) => Refused::Answered(how.clone()),
            None => Refused::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn a_confirm_closes_for_every_page_however_it_was_answered() {
        use crate::agent::beside::TERMINAL;
        let hub = Arc::new(Hub::default());
        let (reply, answers) = channel();
        let ballot = Ballot::new(reply);
        let id = hub.open_confirm(
            json!({"tool": "fs-edit"}),
            OpenConfirm {
                kind: ConfirmKind::Write,
                tool: "fs-edit".into(),
                path: Some("a.rs".into()),
                suggestion: None,
                editable: true,
                ballot: ballot.clone(),
            },
        );
        assert!(hub.peek_confirm(id, |_| ()).is_ok());
        ballot
            .answer(Said::new(TERMINAL, "yes"), true.into())
            .unwrap();
        assert_eq!(
            hub.peek_confirm(id, |_| ()).err(),
            Some(Refused::Answered(
                "already answered in the terminal: yes".into()
            ))
        );
        assert!(answers.recv().unwrap().approved);
        assert_eq!(hub.peek_confirm(99, |_| ()).err(), Some(Refused::Unknown));
        let (last, messages) = hub.since(0, Duration::ZERO);
        assert_eq!(last, 2);
        assert!(messages[0].contains("\"k\":\"confirm\""), "{messages:?}");
        assert!(messages[1].contains("\"k\":\"answered\""), "{messages:?}");
        assert!(hub.since(2, Duration::from_millis(1)).1.is_empty());
    }
}
