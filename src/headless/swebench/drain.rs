//! Ctrl-C during a run: the first SIGINT stops new instances from starting
//! and lets the running ones finish (their patches and predictions are
//! written as usual); the handler is then reset, so a second SIGINT ends
//! the process at once, as an unhandled one does (a resumed run picks up
//! from preds.jsonl).

use std::sync::atomic::{AtomicBool, Ordering};

static SIGINT_SEEN: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    // Only an atomic store: all a signal handler may safely do here.
    SIGINT_SEEN.store(true, Ordering::SeqCst);
}

/// Catches the next SIGINT (once: `SA_RESETHAND` restores the default
/// action for the one after).
pub fn catch_first_sigint() {
    // SAFETY: a zeroed sigaction is a valid value; the handler only does
    // an atomic store, which is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

/// Whether a SIGINT came since [`catch_first_sigint`].
pub fn sigint_seen() -> bool {
    SIGINT_SEEN.load(Ordering::SeqCst)
}
