//! nib: a coding-agent runtime. The host side: pure edit logic (`edit`),
//! workspace IO (`files`), the primitives the model calls (`prim`), the
//! guard that judges each call (`guard`), and the command-line glue (`cli`).

pub mod cli;
pub mod edit;
pub mod files;
pub mod guard;
pub mod prim;
