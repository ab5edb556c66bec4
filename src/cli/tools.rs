//! `nib tools`: the tool list exactly as the model receives it.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args;

use crate::prim::schema::tool_list;
use crate::prim::table::ALL;
use crate::prim::{Decl, Kind, Param};
use crate::settings::UsageError;

#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Print the JSON schemas the model is given, in their fixed order.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ToolsArgs) -> Result<ExitCode, UsageError> {
    let text = if args.json {
        serde_json::to_string_pretty(&tool_list(&ALL)).unwrap_or_default() + "\n"
    } else {
        ALL.iter()
            .map(|d| describe(d))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // A closed pipe (`nib tools | head`) is not an error.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// A primitive for people: its positional form, effect, doc and parameters.
fn describe(d: &Decl) -> String {
    let mut sig = format!("({}", d.name);
    for p in d.params {
        if p.required {
            sig.push_str(&format!(" {}", p.name));
        } else {
            sig.push_str(&format!(" [{}]", p.name));
        }
    }
    sig.push(')');
    let mut out = format!("{sig}    {}\n  {}\n", d.effect.as_str(), d.doc);
    for p in d.params {
        out.push_str(&param_line(p, "  "));
        for item in p.items {
            out.push_str(&param_line(item, "      "));
        }
    }
    out
}

fn param_line(p: &Param, indent: &str) -> String {
    let kind = match p.kind {
        Kind::String => "string",
        Kind::Integer => "integer",
        Kind::Boolean => "boolean",
        Kind::List => "list",
    };
    let role = if p.role == crate::prim::Role::None {
        String::new()
    } else {
        format!(", role {}", p.role.as_str())
    };
    let required = if p.required { "required" } else { "optional" };
    format!(
        "{indent}  {} ({kind}, {required}{role}): {}\n",
        p.name, p.doc
    )
}
