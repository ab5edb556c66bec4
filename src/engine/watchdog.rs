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

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use steel::steel_vm::ThreadStateController;

#[derive(Default)]
struct State {
    /// The armed run: its generation and deadline.
    armed: Option<(u64, Instant)>,
    /// The generation the watchdog last interrupted.
    fired: Option<u64>,
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

    /// Run `f` with the deadline armed. Returns what `f` returned and
    /// whether the deadline fired during it.
    pub fn run<R>(&mut self, deadline: Duration, f: impl FnOnce() -> R) -> (R, bool) {
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
            st.fired == Some(generation)
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
                if now >= at {
                    controller.interrupt();
                    st.fired = Some(generation);
                    st.armed = None;
                } else {
                    st = shared
                        .wake
                        .wait_timeout(st, at - now)
                        .map(|(g, _)| g)
                        .unwrap_or_else(|e| e.into_inner().0);
                }
            }
        }
    }
}
