//! package.json's lifecycle scripts: what npm, yarn and pnpm run on their
//! own, outside nib's sandbox, so a write that sets one needs a person.

/// The package.json scripts npm, yarn and pnpm run on their own
/// (`npm install`, `npm publish`, `npm pack`, a git dependency's install)
/// whose value `new` sets or changes from `old`.
pub fn lifecycle_scripts_changed(old: &str, new: &str) -> Vec<String> {
    const HOOKS: &[&str] = &[
        "preinstall",
        "install",
        "postinstall",
        "preprepare",
        "prepare",
        "postprepare",
        "prepublish",
        "prepublishOnly",
        "prepack",
        "postpack",
        "publish",
        "postpublish",
        "preversion",
        "version",
        "postversion",
        "preuninstall",
        "uninstall",
        "postuninstall",
        "dependencies",
    ];
    let scripts = |text: &str| -> Option<serde_json::Map<String, serde_json::Value>> {
        match serde_json::from_str::<serde_json::Value>(text).ok()? {
            serde_json::Value::Object(mut o) => match o.remove("scripts")? {
                serde_json::Value::Object(s) => Some(s),
                _ => None,
            },
            _ => None,
        }
    };
    let before = scripts(old).unwrap_or_default();
    let Some(after) = scripts(new) else {
        // Not JSON npm can read: npm would refuse it too; a text that
        // names a hook is still a finding.
        return HOOKS
            .iter()
            .filter(|h| new.contains(&format!("\"{h}\"")) && !old.contains(&format!("\"{h}\"")))
            .map(|h| h.to_string())
            .collect();
    };
    HOOKS
        .iter()
        .filter(|h| after.get(**h).is_some_and(|v| before.get(**h) != Some(v)))
        .map(|h| h.to_string())
        .collect()
}
