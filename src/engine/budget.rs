//! The memory budget of one engine: how much its Scheme may allocate
//! during one run, counted per engine, not per process.
//!
//! steel keeps no count of its heap, so nib's global allocator keeps one:
//! while an engine runs Scheme on its thread, that thread's allocations
//! are charged to the engine's [`Account`] and its frees credited, both by
//! the same thread (an engine never leaves its thread; its values are
//! `Rc`s). Host procedures (model calls, tools, output) run with the
//! account set aside: what nib itself allocates is not the strategy's.
//! Every other thread, and this one outside a run, pays nothing but one
//! thread-local read per allocation.
//!
//! An allocation that takes the account past its limit cannot be refused
//! (the allocator would abort the process); it is let through and the
//! VM is interrupted, so the run stops at its next instruction, with an
//! error naming the budget. Steel checks that flag before every
//! instruction: that is the safe point. One primitive's allocation is
//! bounded by the caps in `limits.rs`, so a run overshoots by at most one
//! such step.
//!
//! Several engines on several threads (swebench workers, tests) each have
//! their own account: one's growth never stops another.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use steel::steel_vm::ThreadStateController;

/// How much one engine's Scheme may grow the heap during one run, unless
/// the engine is given another budget.
pub(crate) const MEMORY_BUDGET: u64 = 1 << 30;

/// The allocator that charges an engine's account. It is nib's global
/// allocator, so it counts in every binary and test that links nib.
pub(crate) struct CountingAllocator;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

// SAFETY: every method forwards to `System` with the same arguments; the
// count is kept beside it and never changes what is allocated.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            charge(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            charge(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) };
        charge(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            charge(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

thread_local! {
    /// The account this thread's allocations are charged to, while an
    /// engine runs Scheme here. A const, drop-free thread-local: reading
    /// it never allocates, so the allocator may.
    static CURRENT: Cell<*const Account> = const { Cell::new(std::ptr::null()) };
}

/// Add `bytes` (negative: a free) to the current account, if any; past
/// the limit, interrupt the engine.
#[inline]
fn charge(bytes: i64) {
    let _ = CURRENT.try_with(|c| {
        let account = c.get();
        if account.is_null() {
            return;
        }
        // SAFETY: `CURRENT` is non-null only between `Attributed::enter`
        // and its drop, and the guard holds an `Arc` of the account.
        let account = unsafe { &*account };
        account.add(bytes);
    });
}

/// One engine's count of the bytes its Scheme holds beyond what it held
/// when the run began.
pub(crate) struct Account {
    /// Written only by the engine's thread (a load and a store, no locked
    /// instruction); atomic so the type is `Sync`.
    used: AtomicI64,
    limit: AtomicI64,
    over: AtomicBool,
    controller: ThreadStateController,
}

impl Account {
    pub fn new(controller: ThreadStateController) -> Arc<Account> {
        Arc::new(Account {
            used: AtomicI64::new(0),
            limit: AtomicI64::new(MEMORY_BUDGET as i64),
            over: AtomicBool::new(false),
            controller,
        })
    }

    /// The most one run may grow the heap by.
    pub fn set_limit(&self, bytes: u64) {
        self.limit
            .store(bytes.min(i64::MAX as u64) as i64, Ordering::Relaxed);
    }

    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed).max(0) as u64
    }

    /// Whether the run now ending went past the limit.
    pub fn went_over(&self) -> bool {
        self.over.load(Ordering::Relaxed)
    }

    fn add(&self, bytes: i64) {
        let used = self.used.load(Ordering::Relaxed).saturating_add(bytes);
        self.used.store(used, Ordering::Relaxed);
        if used > self.limit.load(Ordering::Relaxed) && !self.over.load(Ordering::Relaxed) {
            self.over.store(true, Ordering::Relaxed);
            // Two atomic stores: the VM stops at its next instruction.
            self.controller.interrupt();
        }
    }
}

/// Charges this thread's allocations to an account until dropped: one
/// run of Scheme. The count starts at zero.
pub(crate) struct Attributed {
    account: Arc<Account>,
    previous: *const Account,
}

impl Attributed {
    pub fn enter(account: &Arc<Account>) -> Attributed {
        account.used.store(0, Ordering::Relaxed);
        account.over.store(false, Ordering::Relaxed);
        let account = Arc::clone(account);
        let previous = CURRENT.with(|c| c.replace(Arc::as_ptr(&account)));
        Attributed { account, previous }
    }
}

impl Drop for Attributed {
    fn drop(&mut self) {
        let previous = self.previous;
        CURRENT.with(|c| c.set(previous));
        // Keep the account alive until it is no longer current.
        let _ = &self.account;
    }
}

/// Sets the current account aside until dropped: a host procedure's own
/// work is nib's, not the strategy's.
pub(crate) struct HostSection {
    previous: *const Account,
}

impl HostSection {
    pub fn enter() -> HostSection {
        HostSection {
            previous: CURRENT.with(|c| c.replace(std::ptr::null())),
        }
    }
}

impl Drop for HostSection {
    fn drop(&mut self) {
        let previous = self.previous;
        CURRENT.with(|c| c.set(previous));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_charged_and_frees_credited_only_while_attributed() {
        let engine = steel::steel_vm::engine::Engine::new_raw();
        let account = Account::new(engine.get_thread_state_controller());
        account.set_limit(u64::MAX / 2);
        let outside = vec![0u8; 1 << 20];
        {
            let _run = Attributed::enter(&account);
            let inside = vec![1u8; 4 << 20];
            assert!(account.used.load(Ordering::Relaxed) >= 4 << 20);
            {
                let _host = HostSection::enter();
                let host_own = vec![2u8; 8 << 20];
                drop(host_own);
            }
            assert!(account.used.load(Ordering::Relaxed) < 5 << 20);
            drop(inside);
            assert!(account.used.load(Ordering::Relaxed) < 1 << 16);
        }
        drop(outside);
        assert!(account.used.load(Ordering::Relaxed) < 1 << 16);
        assert!(!account.went_over());
    }

    #[test]
    fn going_over_interrupts_and_is_remembered() {
        let engine = steel::steel_vm::engine::Engine::new_raw();
        let controller = engine.get_thread_state_controller();
        let account = Account::new(controller.clone());
        account.set_limit(1 << 20);
        {
            let _run = Attributed::enter(&account);
            let big = vec![0u8; 2 << 20];
            drop(big);
        }
        assert!(account.went_over());
        controller.resume();
        // The next run starts afresh.
        drop(Attributed::enter(&account));
        assert!(!account.went_over());
    }
}
