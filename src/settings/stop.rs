//! Stopping a client from outside: SIGINT (Ctrl-C), SIGTERM (`kill`,
//! `timeout`) and SIGHUP (the terminal went away). Every client that runs
//! a session catches them the same way: the signal only sets the run's
//! cancel flag, so the model call stops at its next chunk and a running
//! command is stopped with its whole process group (`shell` runs each
//! command in a group of its own, which a terminal's Ctrl-C never
//! reaches). The client then logs an `interrupted` event and exits with
//! [`exit_code`]: 128 + the signal's number, as a shell reports a process
//! a signal ended (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
//!
//! A second signal while the run winds down ends the process at once
//! with the same code; the client's `last` stops the commands still
//! running first (`prim::tools::stop_running_commands`), since the
//! shell's wait may not have seen the cancel flag yet.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

/// The first signal caught; 0 while none came.
static FIRST: AtomicI32 = AtomicI32::new(0);
/// How many signals came.
static COUNT: AtomicI32 = AtomicI32::new(0);

/// The signals a client stops on.
pub const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: libc::c_int) {
    // Atomics only: all a signal handler may safely do.
    let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    COUNT.fetch_add(1, Ordering::SeqCst);
}

/// Catch [`SIGNALS`]: the first sets `cancel` (from a watcher thread,
/// within 50 ms); a second ends the process with [`exit_code`] after
/// `last` ran (a client's last word in its log).
pub fn catch(cancel: Arc<AtomicBool>, last: impl Fn(i32) + Send + 'static) {
    for sig in SIGNALS {
        // SAFETY: a zeroed sigaction is a valid value; the handler only
        // touches atomics, which is async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
    let _ = std::thread::Builder::new()
        .name("nib-signals".into())
        .spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(25));
                if FIRST.load(Ordering::SeqCst) != 0 {
                    cancel.store(true, Ordering::SeqCst);
                }
                if COUNT.load(Ordering::SeqCst) >= 2 {
                    let sig = FIRST.load(Ordering::SeqCst);
                    last(sig);
                    std::process::exit(exit_code(sig));
                }
            }
        });
}

/// The signal that stopped the run, if one came.
pub fn received() -> Option<i32> {
    match FIRST.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// The exit code for a run a signal stopped: 128 + its number.
pub fn exit_code(sig: i32) -> i32 {
    128 + sig
}

/// The signal's name, `SIGTERM`.
pub fn name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        other => format!("signal {other}"),
    }
}

/// What a person reads: "stopped by SIGTERM".
pub fn describe(sig: i32) -> String {
    match sig {
        libc::SIGINT => "stopped by Ctrl-C (SIGINT)".into(),
        libc::SIGHUP => "stopped because the terminal went away (SIGHUP)".into(),
        other => format!("stopped by {}", name(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_follow_the_shell() {
        assert_eq!(exit_code(libc::SIGINT), 130);
        assert_eq!(exit_code(libc::SIGTERM), 143);
        assert_eq!(exit_code(libc::SIGHUP), 129);
        assert_eq!(name(libc::SIGTERM), "SIGTERM");
        assert!(describe(libc::SIGINT).contains("Ctrl-C"));
    }
}
