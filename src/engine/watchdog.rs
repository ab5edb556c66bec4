//! The deadline on a top-level run: one watchdog thread per engine that
//! interrupts the VM when a run outlives its deadline.
//!
//! steel has no instruction budget. Its VM checks an interrupt flag before
//! every instruction, set through the thread-state controller from any
//! thread; a stopped run returns an error and the VM stays usable once the
//! flag is cleared with `resume()`. steel's own `InterruptHandler` misses
//! deadlines after a quick call (a stale message) and
//! `Engine::with_interrupted` is never read, so we keep our own watchdog.
//!
//! Each run arms the watchdog with a generation number and disarms it
//! after. Arming, disarming and firing happen under one mutex, so a timer
//! meant for one run can never stop a later one; `resume()` after every run
//! clears an interrupt that landed just as the run finished.
//!
//! A blocking host primitive is not pre-empted: the interrupt takes effect
//! when control returns to the VM.
//!
//! The memory budget is not kept here but counted per engine by nib's
//! allocator (`budget.rs`), which interrupts the VM itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use steel::steel_vm::ThreadStateController;

/// How long a run may go on after the cancel flag is set before the VM is
/// interrupted: a loop that sees the cancelled model call ends by itself
/// within it, keeping its conversation for the next task; a hook that
/// loops does not.
const CANCEL_GRACE: Duration = Duration::from_secs(5);
/// How often the cancel flag is checked.
const CANCEL_POLL: Duration = Duration::from_millis(5);

/// Why the watchdog stopped a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fired {
    Deadline,
    /// The client's cancel flag was set (Esc in the terminal client).
    Cancelled,
    /// One hook call outlived the hook time limit; the hook's place marker.
    Hook(String),
}

#[derive(Default)]
struct State {
    /// The armed run: its generation and deadline.
    armed: Option<(u64, Instant)>,
    /// The generation the watchdog last interrupted, and why.
    fired: Option<(u64, Fired)>,
    /// A hook call's own deadline, and the hook's place marker.
    hook: Option<(Instant, String)>,
    /// Set by a client to stop the run (polled while armed), and when
    /// the watchdog first saw it set.
    cancel: Option<Arc<AtomicBool>>,
    cancel_seen: Option<Instant>,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere while holding it; the
        // state is plain data and stays meaningful.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub(crate) struct Watchdog {
    shared: Arc<Shared>,
    controller: ThreadStateController,
    generation: u64,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    pub fn new(controller: ThreadStateController) -> std::io::Result<Watchdog> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let s = Arc::clone(&shared);
        let c = controller.clone();
        let thread = std::thread::Builder::new()
            .name("nib-engine-watchdog".into())
            .spawn(move || watch(&s, &c))?;
        Ok(Watchdog {
            shared,
            controller,
            generation: 0,
            thread: Some(thread),
        })
    }

    /// Stop any run once `flag` is set.
    pub fn watch_cancel(&self, flag: Arc<AtomicBool>) {
        self.shared.lock().cancel = Some(flag);
    }

    /// A handle that arms and disarms a hook call's own deadline.
    pub fn hook_limit(&self) -> HookLimit {
        HookLimit(Arc::clone(&self.shared))
    }

    /// Run `f` with the deadline armed. Returns
    /// what `f` returned and why the watchdog stopped it, if it did.
    pub fn run<R>(&mut self, deadline: Duration, f: impl FnOnce() -> R) -> (R, Option<Fired>) {
        self.generation += 1;
        let generation = self.generation;
        self.controller.resume();
        {
            let mut st = self.shared.lock();
            st.armed = Some((generation, Instant::now() + deadline));
            st.fired = None;
        }
        self.shared.wake.notify_all();
        let out = f();
        let fired = {
            let mut st = self.shared.lock();
            st.armed = None;
            st.hook = None;
            st.cancel_seen = None;
            st.fired
                .take()
                .filter(|(g, _)| *g == generation)
                .map(|(_, why)| why)
        };
        // Clear an interrupt that landed after `f` returned.
        self.controller.resume();
        (out, fired)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Arms and disarms one hook call's deadline (from the prelude's
/// `%hook-arm` / `%hook-disarm`).
#[derive(Clone)]
pub(crate) struct HookLimit(Arc<Shared>);

impl HookLimit {
    pub fn arm(&self, limit: Duration, place: String) {
        self.0.lock().hook = Some((Instant::now() + limit, place));
        self.0.wake.notify_all();
    }

    pub fn disarm(&self) {
        self.0.lock().hook = None;
    }
}

fn watch(shared: &Shared, controller: &ThreadStateController) {
    let mut st = shared.lock();
    loop {
        if st.shutdown {
            return;
        }
        match st.armed {
            None => {
                st = shared.wake.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            Some((generation, at)) => {
                let now = Instant::now();
                let flag = st
                    .cancel
                    .as_ref()
                    .is_some_and(|c| c.load(Ordering::Relaxed));
                if !flag {
                    st.cancel_seen = None;
                } else if st.cancel_seen.is_none() {
                    st.cancel_seen = Some(now);
                }
                let cancelled = st
                    .cancel_seen
                    .is_some_and(|seen| now.duration_since(seen) >= CANCEL_GRACE);
                let hook_over = st
                    .hook
                    .as_ref()
                    .filter(|(h, _)| now >= *h)
                    .map(|(_, p)| p.clone());
                let why = if cancelled {
                    Some(Fired::Cancelled)
                } else if let Some(place) = hook_over {
                    Some(Fired::Hook(place))
                } else if now >= at {
                    Some(Fired::Deadline)
                } else {
                    None
                };
                if let Some(why) = why {
                    controller.interrupt();
                    st.fired = Some((generation, why));
                    st.armed = None;
                    st.hook = None;
                } else {
                    let polled = st.cancel.is_some();
                    let until = st.hook.as_ref().map_or(at, |(h, _)| (*h).min(at));
                    let wait = if polled {
                        (until - now).min(CANCEL_POLL)
                    } else {
                        until - now
                    };
                    st = shared
                        .wake
                        .wait_timeout(st, wait)
                        .map(|(g, _)| g)
                        .unwrap_or_else(|e| e.into_inner().0);
                }
            }
        }
    }
}
