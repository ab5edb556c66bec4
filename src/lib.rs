//! nib: a coding-agent runtime. The host side: pure edit logic (`edit`),
//! workspace IO (`files`), and the command-line glue (`cli`).

pub mod cli;
pub mod edit;
pub mod files;
