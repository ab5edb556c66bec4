//! A process-wide cap on concurrent model requests per endpoint: a map from
//! endpoint URL to a counting semaphore whose waiters are served first come,
//! first served, so several workers sharing one server take turns fairly
//! instead of the fastest thread starving the others.
//!
//! The cap is off (0) until [`set_endpoint_concurrency`] sets it; `nib
//! swebench` sets it from `--model-concurrency` (default: its worker count).
//! [`Client::reply`](super::Client::reply) holds one permit for the whole
//! call, retries and their backoff included, so a server that answers 429
//! is not sent more requests meanwhile.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// The process's gates.
static GLOBAL: Gates = Gates::new();

/// Caps concurrent model requests to each endpoint at `n` (0: no cap),
/// from now on, in the whole process. Requests already waiting see the new
/// cap the next time a permit is released.
pub fn set_endpoint_concurrency(n: usize) {
    GLOBAL.set_limit(n);
}

/// The cap [`set_endpoint_concurrency`] set (0: none).
pub fn endpoint_concurrency() -> usize {
    GLOBAL.limit.load(Ordering::SeqCst)
}

/// Waits until a request to `endpoint` may go out under the process's cap,
/// in arrival order. With no cap set this returns at once.
pub(crate) fn acquire(endpoint: &str) -> Permit {
    GLOBAL.acquire(endpoint)
}

/// A cap and one semaphore per endpoint.
struct Gates {
    /// The most requests in flight per endpoint; 0: no cap.
    limit: AtomicUsize,
    map: Mutex<Option<HashMap<String, Arc<Gate>>>>,
}

/// One endpoint's semaphore.
#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
    freed: Condvar,
}

#[derive(Default)]
struct GateState {
    in_flight: usize,
    /// Tickets of the waiting callers, oldest first.
    queue: VecDeque<u64>,
    next_ticket: u64,
}

/// A request's right to be in flight; released when dropped.
pub(crate) struct Permit(Option<Arc<Gate>>);

impl Gates {
    const fn new() -> Gates {
        Gates {
            limit: AtomicUsize::new(0),
            map: Mutex::new(None),
        }
    }

    fn set_limit(&self, n: usize) {
        self.limit.store(n, Ordering::SeqCst);
        let map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        for gate in map.iter().flat_map(HashMap::values) {
            // Taking the gate's lock orders this wake-up after any waiter's
            // check, so none misses the new cap.
            drop(gate.state.lock().unwrap_or_else(PoisonError::into_inner));
            gate.freed.notify_all();
        }
    }

    fn acquire(&self, endpoint: &str) -> Permit {
        if self.limit.load(Ordering::SeqCst) == 0 {
            return Permit(None);
        }
        let gate = {
            let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
            let map = map.get_or_insert_with(HashMap::new);
            Arc::clone(map.entry(endpoint.to_string()).or_default())
        };
        let mut state = gate.state.lock().unwrap_or_else(PoisonError::into_inner);
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.queue.push_back(ticket);
        loop {
            let limit = self.limit.load(Ordering::SeqCst);
            let first = state.queue.front() == Some(&ticket);
            if first && (limit == 0 || state.in_flight < limit) {
                break;
            }
            state = gate
                .freed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.queue.pop_front();
        state.in_flight += 1;
        drop(state);
        // The next in line may fit too (the cap may be more than one).
        gate.freed.notify_all();
        Permit(Some(gate))
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(gate) = self.0.take() {
            let mut state = gate.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.in_flight = state.in_flight.saturating_sub(1);
            drop(state);
            gate.freed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    // Gates of the test's own, so the process's cap stays off for others.
    static GATES: Gates = Gates::new();

    #[test]
    fn the_cap_holds_per_endpoint_and_waiters_go_in_order() {
        GATES.set_limit(2);
        let in_flight = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let (in_flight, peak) = (Arc::clone(&in_flight), Arc::clone(&peak));
                std::thread::spawn(move || {
                    let _permit = GATES.acquire("http://test.invalid/a");
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        // Another endpoint is not held up by the first one's queue.
        let other = GATES.acquire("http://test.invalid/b");
        let other2 = GATES.acquire("http://test.invalid/b");
        drop((other, other2));
        for t in threads {
            t.join().expect("worker");
        }
        assert_eq!(peak.load(Ordering::SeqCst), 2);

        // First come, first served: with the one permit held, later callers
        // get it in the order they asked.
        GATES.set_limit(1);
        let held = GATES.acquire("http://test.invalid/c");
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for i in 0..4 {
            let order = Arc::clone(&order);
            waiters.push(std::thread::spawn(move || {
                let _p = GATES.acquire("http://test.invalid/c");
                order.lock().expect("order").push(i);
            }));
            // Let each waiter queue before the next one starts.
            while queued("http://test.invalid/c") < i + 1 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        drop(held);
        for w in waiters {
            w.join().expect("waiter");
        }
        assert_eq!(*order.lock().expect("order"), vec![0, 1, 2, 3]);

        // Raising the cap lets a waiter in without a release.
        let first = GATES.acquire("http://test.invalid/d");
        let waiter = std::thread::spawn(|| drop(GATES.acquire("http://test.invalid/d")));
        while queued("http://test.invalid/d") < 1 {
            std::thread::sleep(Duration::from_millis(1));
        }
        GATES.set_limit(0);
        waiter.join().expect("waiter got in");
        drop(first);
    }

    fn queued(endpoint: &str) -> usize {
        let map = GATES.map.lock().expect("gates");
        map.as_ref()
            .and_then(|m| m.get(endpoint))
            .map_or(0, |g| g.state.lock().expect("state").queue.len())
    }
}
