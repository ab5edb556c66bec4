//! The live session's state as the pages see it: every message pushed so
//! far (a page that opens late, or reconnects, gets them all from the
//! number it last saw), and the confirms and questions waiting for an
//! answer. An open confirm holds the one channel back to the agent's
//! thread; whoever takes it first answers (a page, another page, a standing
//! approval), and every later answer learns who did and how.
//!
//! Every message is masked before it is kept ([`mask_json`]), so no page
//! can be sent an unmasked credential, whatever produced the text.

use std::collections::HashMap;
use std::sync::mpsc::Sender;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};

use super::view::mask_json;
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
    pub reply: Sender<ConfirmAnswer>,
}

/// A strategy's question waiting for its answer.
pub struct OpenAsk {
    pub question: Question,
    pub reply: Sender<Answer>,
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
    /// here). Returns the confirm's id.
    pub fn open_confirm(&self, mut view: Value, open: OpenConfirm) -> u64 {
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
        id
    }

    /// Look at an open confirm without taking it.
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

    /// Take an open confirm to answer it: the first caller gets it, every
    /// later one learns who answered.
    pub fn take_confirm(&self, id: u64) -> Result<OpenConfirm, Refused> {
        let mut state = self.lock();
        match state.confirms.remove(&id) {
            Some(open) => {
                state.answered.insert(id, "being answered".into());
                Ok(open)
            }
            None => Err(self.refusal(&state, id)),
        }
    }

    /// Give back a confirm taken but not answered (saving its approval
    /// failed).
    pub fn restore_confirm(&self, id: u64, open: OpenConfirm) {
        let mut state = self.lock();
        state.answered.remove(&id);
        state.confirms.insert(id, open);
    }

    /// Record how a confirm or question was answered, send it back to the
    /// waiting thread, and tell every page.
    pub fn close(&self, id: u64, by: &str, said: &str, extra: Value) {
        self.lock()
            .answered
            .insert(id, format!("already answered by {by}: {said}"));
        let mut message = json!({"k": "answered", "id": id, "by": by, "answer": said});
        if let (Some(m), Value::Object(more)) = (message.as_object_mut(), extra) {
            m.extend(more);
        }
        self.push(message);
    }

    /// Open a question; returns its id.
    pub fn open_ask(&self, open: OpenAsk) -> u64 {
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
        self.push(view);
        id
    }

    pub fn take_ask(&self, id: u64) -> Result<OpenAsk, Refused> {
        let mut state = self.lock();
        match state.asks.remove(&id) {
            Some(open) => {
                state.answered.insert(id, "being answered".into());
                Ok(open)
            }
            None => Err(self.refusal(&state, id)),
        }
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
        for (id, open) in confirms {
            let _ = open.reply.send(ConfirmAnswer {
                approved: false,
                reason: Some(reason.to_string()),
                edited: None,
            });
            self.close(id, "nib", "no", json!({"reason": reason}));
        }
        for (id, open) in asks {
            let _ = open.reply.send(Answer::Skipped);
            self.close(id, "nib", "skipped", Value::Null);
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
    fn the_first_answer_wins_and_the_second_learns_who() {
        let hub = Hub::default();
        let (reply, answers) = channel();
        let id = hub.open_confirm(
            json!({"tool": "fs-edit"}),
            OpenConfirm {
                kind: ConfirmKind::Write,
                tool: "fs-edit".into(),
                path: Some("a.rs".into()),
                suggestion: None,
                editable: true,
                reply,
            },
        );
        let open = hub.take_confirm(id).unwrap();
        assert!(matches!(hub.take_confirm(id), Err(Refused::Answered(_))));
        let _ = open.reply.send(true.into());
        hub.close(id, "page", "yes", Value::Null);
        assert_eq!(
            hub.take_confirm(id).err(),
            Some(Refused::Answered("already answered by page: yes".into()))
        );
        assert!(answers.recv().unwrap().approved);
        assert_eq!(hub.take_confirm(99).err(), Some(Refused::Unknown));
        let (last, messages) = hub.since(0, Duration::ZERO);
        assert_eq!(last, 2);
        assert!(messages[0].contains("\"k\":\"confirm\""), "{messages:?}");
        assert!(messages[1].contains("\"k\":\"answered\""), "{messages:?}");
        assert!(hub.since(2, Duration::from_millis(1)).1.is_empty());
    }
}
