//! Releases that wait for a stream (peer case 52): a managed tensor's deleter runs once, after
//! the work queued on a stream up to the release is done, without blocking the caller.
//!
//! Design. The caller's thread records one pooled event on the stream (the CUDA driver's or HIP
//! runtime's event pool of `dl::EventPool`, the same events `dlpack_stream_wait` uses) and
//! queues the release here; it never waits. One completion thread, started on the first
//! deferred release and living for the rest of the process, polls the queued events with
//! `cuEventQuery` / `hipEventQuery` (never a blocking synchronize, so it can notice process exit
//! between two polls) and runs each release whose event completed, in its own thread, then gives
//! the event back to the pool. While releases are pending it sleeps between rounds for 50 µs,
//! doubling to at most 2 ms while nothing completes; with none pending it sleeps on a condition
//! variable and costs nothing.
//!
//! Why not the driver's host-function facility (`cuLaunchHostFunc`, `hipLaunchHostFunc`): a
//! host function may not call the driver, and a deleter commonly does (`cudaFree`, a caching
//! allocator's free, a Python deleter that ends up in the framework's allocator).
//!
//! Thread-safety: any thread may queue a release; the deleter then runs on the completion
//! thread (the DLPack Python specification already requires deleters to be callable from any
//! thread: a Python producer's deleter takes the GIL itself). A panic inside a release is caught
//! and the thread carries on.
//!
//! Process exit: an `atexit` handler (registered with the first deferred release) marks the
//! process as exiting; from then on the completion thread runs no release and queries no event
//! (the runtimes may be tearing down), and releases still pending are never run: their memory
//! goes with the process. A release already running when `exit` starts finishes on its own
//! thread or is cut off by the process's end. The thread is never joined. Not fork-safe (no
//! device runtime is): a child process made by `fork` has no completion thread and must not use
//! the parent's releases.

use crate::rules::Error;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, Once};
use std::time::Duration;

/// The runtime event standing for the work to wait for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Token {
    /// `(context, event)` from `Cuda::record`.
    Cuda(usize, usize),
    /// `(device, event)` from `Hip::record`.
    Hip(usize, usize),
}

impl Token {
    /// Whether the work is done; `Err` when the runtime cannot tell any more (an error of the
    /// context: the work will never complete as queued).
    fn done(self) -> Result<bool, Error> {
        match self {
            Token::Cuda(ctx, ev) => super::cuda::get()?.event_done(ctx, ev),
            Token::Hip(key, ev) => super::hip::get()?.event_done(key, ev),
        }
    }

    /// Give the event back to its pool (only after it completed).
    fn recycle(self) {
        match self {
            Token::Cuda(ctx, ev) => {
                if let Ok(c) = super::cuda::get() {
                    c.recycle(ctx, ev);
                }
            }
            Token::Hip(key, ev) => {
                if let Ok(h) = super::hip::get() {
                    h.recycle(key, ev);
                }
            }
        }
    }
}

/// A release waiting for its event.
pub(crate) struct Pending {
    pub(crate) token: Token,
    /// Runs the deleter; called exactly once, on the completion thread.
    pub(crate) release: Box<dyn FnOnce() + Send>,
}

struct Queue {
    pending: Vec<Pending>,
    worker: bool,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    pending: Vec::new(),
    worker: false,
});
static WAKE: Condvar = Condvar::new();
static EXITING: AtomicBool = AtomicBool::new(false);
static AT_EXIT: Once = Once::new();

extern "C" fn on_exit() {
    EXITING.store(true, Ordering::SeqCst);
    WAKE.notify_all();
}

/// Queue a release; starts the completion thread on first use. On `Err` (the thread could not
/// be started) the pending release is handed back unrun, with its event still recorded.
pub(crate) fn submit(p: Pending) -> Result<(), (Error, Pending)> {
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain `extern "C"` function that only stores an atomic and
        // notifies a condition variable (both usable during exit).
        unsafe { libc::atexit(on_exit) };
    });
    let mut q = QUEUE.lock().unwrap_or_else(|e| e.into_inner());
    if !q.worker {
        let started = std::thread::Builder::new()
            .name("dlpack-release".into())
            .spawn(worker);
        if let Err(e) = started {
            return Err((
                Error::BackendUnavailable(format!(
                    "the completion thread of deferred releases could not be started: {e}"
                )),
                p,
            ));
        }
        q.worker = true;
    }
    q.pending.push(p);
    drop(q);
    WAKE.notify_one();
    Ok(())
}

fn worker() {
    const FIRST: Duration = Duration::from_micros(50);
    const MOST: Duration = Duration::from_millis(2);
    let mut pause = FIRST;
    loop {
        let batch = {
            let mut q = QUEUE.lock().unwrap_or_else(|e| e.into_inner());
            while q.pending.is_empty() && !EXITING.load(Ordering::SeqCst) {
                q = WAKE.wait(q).unwrap_or_else(|e| e.into_inner());
            }
            if EXITING.load(Ordering::SeqCst) {
                return;
            }
            core::mem::take(&mut q.pending)
        };
        let mut waiting = Vec::new();
        let mut progressed = false;
        let mut batch = batch.into_iter();
        for p in batch.by_ref() {
            if EXITING.load(Ordering::SeqCst) {
                // Never run a deleter nor call a runtime once the process exits.
                waiting.push(p);
                break;
            }
            let done = p.token.done();
            if matches!(done, Ok(false)) {
                waiting.push(p);
                continue;
            }
            if done.is_ok() {
                p.token.recycle();
            } // else the runtime can no longer run the work: release, and drop the event.
            let release = p.release;
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(release));
            progressed = true;
        }
        waiting.extend(batch);
        let mut q = QUEUE.lock().unwrap_or_else(|e| e.into_inner());
        // The ones still waiting go first: releases queued in the meantime come after them.
        let newer = core::mem::replace(&mut q.pending, waiting);
        q.pending.extend(newer);
        if progressed {
            pause = FIRST;
        } else if !q.pending.is_empty() && !EXITING.load(Ordering::SeqCst) {
            let _ = WAKE.wait_timeout(q, pause);
            pause = (pause * 2).min(MOST);
        }
    }
}
