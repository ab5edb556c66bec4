//! Ctrl-C during a run: the first SIGINT stops new instances from starting
//! and lets the running ones finish (their patches and predictions are
//! written as usual); a second SIGINT ends the process at once with exit
//! code 1 (a resumed run picks up from preds.jsonl), after a last step of
//! its own: removing the instances' containers, which would otherwise
//! outlive it, and writing run.json and preds.json.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

static SIGINTS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_sigint(_: libc::c_int) {
    // Only an atomic add: all a signal handler may safely do here.
    SIGINTS.fetch_add(1, Ordering::SeqCst);
}

/// Catches SIGINT: the first one drains the run ([`sigint_seen`]); on the
/// second, `last` runs and the process exits 1.
pub fn catch_sigint(last: Box<dyn Fn() + Send>) {
    // SAFETY: a zeroed sigaction is a valid value; the handler only does
    // an atomic add, which is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
    // The second signal's work is no handler's to do (it spawns
    // processes): a thread watches the count instead.
    let _ = std::thread::Builder::new()
        .name("nib-sigint".into())
        .spawn(move || {
            while SIGINTS.load(Ordering::SeqCst) < 2 {
                std::thread::sleep(Duration::from_millis(50));
            }
            eprintln!("nib swebench: second Ctrl-C: stopping now");
            last();
            std::process::exit(1);
        });
}

/// Whether a SIGINT came since [`catch_sigint`].
pub fn sigint_seen() -> bool {
    SIGINTS.load(Ordering::SeqCst) > 0
}
