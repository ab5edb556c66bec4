//! The model client against the scripted model over real HTTP on loopback,
//! for each of the three protocols.
//!
//! - `streams`: exact replies (text, reasoning, two fragmented tool calls,
//!   usage with cache counts); the same stream split at every byte
//!   boundary; finish by length; unknown fields and server quirks.
//! - `faults`: cut streams, retries on 429/5xx and hang-ups, stalls and
//!   timeouts, mid-stream errors, an exhausted script.
//! - `requests`: the bodies and headers sent, per protocol.
//! - `local`: what real local servers do (no streaming with tools, no
//!   usage, tool calls as text), unstreamed replies, and waits bounded by
//!   Retry-After, the deadline and the cancel flag.
//! - `hostile`: servers that stream without end or only keep-alives, ended
//!   by the reply's size and progress bounds and the run's deadline.
//!
//! Run with `cargo test --test model`.

#[path = "model/faults.rs"]
mod faults;
#[path = "model/hostile.rs"]
mod hostile;
#[path = "model/local.rs"]
mod local;
#[path = "model/requests.rs"]
mod requests;
#[path = "model/streams.rs"]
mod streams;
#[path = "model/support.rs"]
mod support;
