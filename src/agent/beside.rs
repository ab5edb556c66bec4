//! One session shown in two places at once: the terminal client (or `nib
//! exec`) and the browser console beside it. Each confirm and each
//! strategy question is a [`Ballot`] that both places hold; the first
//! answer wins, the other place is told who answered and how, and a
//! second answer is refused with the same words. [`Beside`] is what a
//! client tells the second place: it is defined here, below the clients,
//! because clients never use each other (the command line joins them).

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::guard::approvals::Approval;
use crate::model::StreamEvent;
use crate::prim::{Answer, ConfirmAnswer, ConfirmRequest, Question};
use crate::session::{Entry, EventLog};

/// Where an answer was given: [`Said::by`].
pub const TERMINAL: &str = "the terminal";
pub const BROWSER: &str = "the browser";
/// nib itself answered (the run was interrupted, the client went away).
pub const NIB: &str = "nib";
/// [`Said::answer`] while a place holds the ballot, before it answers.
const BEING_ANSWERED: &str = "(being answered)";

/// How a ballot was answered: where, and what was said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// [`TERMINAL`], [`BROWSER`] or [`NIB`].
    pub by: String,
    /// `yes`, `no`, `edited`, a choice, a text, `skipped`.
    pub answer: String,
    /// A rejection's reason.
    pub reason: Option<String>,
    /// The standing approval the answer saved, with where.
    pub saved: Option<String>,
}

impl Said {
    pub fn new(by: &str, answer: &str) -> Said {
        Said {
            by: by.to_string(),
            answer: answer.to_string(),
            reason: None,
            saved: None,
        }
    }

    /// "answered in the browser: no (use a fixture)".
    pub fn describe(&self) -> String {
        let place = if self.by == NIB {
            "by nib".to_string()
        } else {
            format!("in {}", self.by)
        };
        match &self.reason {
            Some(r) => format!("answered {place}: {} ({r})", self.answer),
            None => format!("answered {place}: {}", self.answer),
        }
    }
}

type Watcher = Box<dyn FnOnce(&Said) + Send>;

struct State<T> {
    reply: Option<Sender<T>>,
    said: Option<Said>,
    watchers: Vec<Watcher>,
}

/// A confirm or question several places may answer: the first answer is
/// sent to the waiting session, every later one learns who answered.
pub struct Ballot<T>(Arc<Mutex<State<T>>>);

impl<T> Clone for Ballot<T> {
    fn clone(&self) -> Ballot<T> {
        Ballot(Arc::clone(&self.0))
    }
}

impl<T> fmt::Debug for Ballot<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Ballot").field(&self.answered()).finish()
    }
}

impl<T> From<Sender<T>> for Ballot<T> {
    fn from(reply: Sender<T>) -> Ballot<T> {
        Ballot::new(reply)
    }
}

impl<T> Ballot<T> {
    /// A ballot whose winning answer goes to `reply`.
    pub fn new(reply: Sender<T>) -> Ballot<T> {
        Ballot(Arc::new(Mutex::new(State {
            reply: Some(reply),
            said: None,
            watchers: Vec::new(),
        })))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Take the ballot to answer it from `by`: nobody else can until the
    /// claim is given or dropped (dropped: the ballot is open again). When
    /// someone answered first, how they did.
    pub fn claim(&self, by: &str) -> Result<Claim<T>, Said> {
        let mut state = self.lock();
        if let Some(said) = &state.said {
            return Err(said.clone());
        }
        state.said = Some(Said::new(by, BEING_ANSWERED));
        Ok(Claim {
            ballot: self.clone(),
            given: false,
        })
    }

    /// Answer at once (a claim given straight away).
    pub fn answer(&self, said: Said, value: T) -> Result<(), Said> {
        self.claim(&said.by.clone())?.give(said, value);
        Ok(())
    }

    /// How the ballot was answered, once it was.
    pub fn answered(&self) -> Option<Said> {
        self.lock().said.clone()
    }

    /// How the ballot was answered, waiting up to `within` while another
    /// place holds it (saving an approval, logging) before it answers.
    pub fn settled(&self, within: Duration) -> Option<Said> {
        let until = std::time::Instant::now() + within;
        loop {
            let said = self.answered();
            let holding = said.as_ref().is_some_and(|s| s.answer == BEING_ANSWERED);
            if !holding || std::time::Instant::now() >= until {
                return said;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Call `f` when the ballot is answered (at once if it was).
    pub fn on_answer(&self, f: impl FnOnce(&Said) + Send + 'static) {
        let mut state = self.lock();
        match (&state.said, &state.reply) {
            // Given: the reply was sent.
            (Some(said), None) => {
                let said = said.clone();
                drop(state);
                f(&said);
            }
            _ => state.watchers.push(Box::new(f)),
        }
    }

    /// Whether two handles are the same ballot.
    pub fn same(&self, other: &Ballot<T>) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A ballot taken by one place, to be answered ([`Claim::give`]).
pub struct Claim<T> {
    ballot: Ballot<T>,
    given: bool,
}

impl<T> Claim<T> {
    /// Tell every watcher, then send `value` to the waiting session: in
    /// that order, so each place has closed this ballot before the session
    /// can open the next one.
    pub fn give(mut self, said: Said, value: T) {
        self.given = true;
        let (reply, watchers) = {
            let mut state = self.ballot.lock();
            state.said = Some(said.clone());
            (state.reply.take(), std::mem::take(&mut state.watchers))
        };
        for w in watchers {
            w(&said);
        }
        if let Some(reply) = reply {
            // The session may have stopped waiting: nothing to tell.
            let _ = reply.send(value);
        }
    }
}

impl<T> Drop for Claim<T> {
    fn drop(&mut self) {
        if !self.given {
            self.ballot.lock().said = None;
        }
    }
}

/// Wait for a ballot's answer on `answers`, until `cancel` is set (the run
/// was interrupted, or its time is up): then the ballot is answered by
/// nib with `otherwise` (each place is told) and that is returned.
pub fn wait_for<T: Clone>(
    ballot: &Ballot<T>,
    answers: &Receiver<T>,
    cancel: &AtomicBool,
    otherwise: T,
    said: &str,
) -> T {
    loop {
        match answers.recv_timeout(Duration::from_millis(50)) {
            Ok(value) => return value,
            Err(RecvTimeoutError::Disconnected) => return otherwise,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if cancel.load(Ordering::Relaxed) {
            let mut no = Said::new(NIB, said);
            no.reason = Some("the run was interrupted".into());
            if ballot.answer(no, otherwise.clone()).is_ok() {
                return otherwise;
            }
            // Someone answered in the same moment: theirs is on its way.
        }
    }
}

/// The browser console a client was started beside: where its session
/// goes, and the URL (with its token) to tell the person.
#[derive(Clone)]
pub struct PageBeside {
    pub beside: Arc<dyn Beside>,
    pub url: String,
}

/// What a client shares with the second place when its session starts.
#[derive(Clone)]
pub struct Attached {
    pub log: Arc<EventLog>,
    /// The standing approvals in force ("always" adds to them).
    pub approvals: Arc<Mutex<Vec<Approval>>>,
    /// The running task's stop flag (the page's **interrupt**).
    pub cancel: Arc<AtomicBool>,
    pub root: PathBuf,
    pub model: String,
}

/// A second place a session is shown and answered in (the browser
/// console beside the terminal client or `nib exec`). The client calls it
/// with everything it shows itself; answers come back through the ballots.
pub trait Beside: Send + Sync {
    /// The session started.
    fn attach(&self, session: Attached);
    /// An event of the session's log, as written.
    fn event(&self, entry: &Entry);
    /// The model's streaming text.
    fn stream(&self, event: &StreamEvent);
    /// A confirm waiting for an answer here or in the client.
    fn confirm(&self, req: &ConfirmRequest, ballot: Ballot<ConfirmAnswer>);
    /// A strategy's question, likewise.
    fn ask(&self, question: &Question, ballot: Ballot<Answer>);
    /// A Write confirm a standing approval answered (its scope).
    fn auto_approved(&self, req: &ConfirmRequest, scope: &str);
    /// A task started, as typed.
    fn task(&self, text: &str);
    /// The task ended: its status and final text.
    fn task_done(&self, status: &str, text: &str);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn the_first_answer_wins_and_every_watcher_learns_it_once() {
        let (tx, rx) = channel();
        let ballot: Ballot<bool> = Ballot::new(tx);
        let (seen_tx, seen) = channel();
        ballot.on_answer(move |s| seen_tx.send(s.by.clone()).unwrap());
        let claim = ballot.claim(TERMINAL).unwrap();
        // While claimed, nobody else answers.
        assert!(ballot.answer(Said::new(BROWSER, "no"), false).is_err());
        claim.give(Said::new(TERMINAL, "yes"), true);
        assert!(rx.recv().unwrap());
        assert!(rx.try_recv().is_err());
        assert_eq!(seen.recv().unwrap(), TERMINAL);
        let late = ballot.answer(Said::new(BROWSER, "no"), false).unwrap_err();
        assert_eq!(late.describe(), "answered in the terminal: yes");
        // A watcher added after the answer is told at once.
        let (tx2, rx2) = channel();
        ballot.on_answer(move |s| tx2.send(s.answer.clone()).unwrap());
        assert_eq!(rx2.recv().unwrap(), "yes");
    }

    #[test]
    fn a_dropped_claim_opens_the_ballot_again() {
        let (tx, rx) = channel();
        let ballot: Ballot<u8> = Ballot::new(tx);
        drop(ballot.claim(BROWSER).unwrap());
        assert_eq!(ballot.answered(), None);
        ballot.answer(Said::new(TERMINAL, "yes"), 7).unwrap();
        assert_eq!(rx.recv().unwrap(), 7);
    }

    #[test]
    fn a_cancelled_wait_is_answered_by_nib() {
        let (tx, rx) = channel();
        let ballot: Ballot<bool> = Ballot::new(tx);
        let cancel = AtomicBool::new(true);
        assert!(!wait_for(&ballot, &rx, &cancel, false, "no"));
        assert_eq!(ballot.answered().unwrap().by, NIB);
    }
}
