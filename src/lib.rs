//! nib: a coding-agent runtime. Pure edit logic (`edit`), workspace IO
//! (`files`), the primitives the model calls (`prim`), the guard that
//! judges each call (`guard`), the Scheme engine that runs strategies
//! (`engine`), the event log (`session`), and the command-line glue (`cli`).

pub mod cli;
pub mod edit;
pub mod engine;
pub mod files;
pub mod guard;
pub mod headless;
pub mod model;
pub mod prim;
pub mod scenario;
pub mod session;
pub mod tui;
