//! Package manifests' lifecycle scripts: what npm, yarn and pnpm run on
//! their own from a `package.json`, and Composer from a `composer.json`,
//! outside nib's sandbox, so a write that sets one needs a person.

/// The manifests whose `scripts` a package manager runs on its own, each
/// with the tool that runs them.
pub const MANIFESTS: &[(&str, &str)] = &[("package.json", "npm"), ("composer.json", "composer")];

/// The tool that runs the lifecycle scripts of the manifest named `name`.
pub fn manifest_tool(name: &str) -> Option<&'static str> {
    MANIFESTS.iter().find(|(m, _)| *m == name).map(|(_, t)| *t)
}

/// The scripts of the manifest named `name` a package manager runs on its
/// own (`npm install`, `npm publish`, a git dependency's install,
/// `composer install`, `composer dump-autoload`) whose value `new` sets or
/// changes from `old`. Empty for a name that is no manifest.
pub fn lifecycle_scripts_changed(name: &str, old: &str, new: &str) -> Vec<String> {
    const NPM: &[&str] = &[
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
    // Composer's script events; `composer run-script` runs any other by
    // name only when asked.
    const COMPOSER: &[&str] = &[
        "pre-install-cmd",
        "post-install-cmd",
        "pre-update-cmd",
        "post-update-cmd",
        "pre-status-cmd",
        "post-status-cmd",
        "pre-archive-cmd",
        "post-archive-cmd",
        "pre-autoload-dump",
        "post-autoload-dump",
        "post-root-package-install",
        "post-create-project-cmd",
        "pre-operations-exec",
        "pre-package-install",
        "post-package-install",
        "pre-package-update",
        "post-package-update",
        "pre-package-uninstall",
        "post-package-uninstall",
        "pre-file-download",
        "post-file-download",
        "pre-command-run",
        "pre-pool-create",
        "init",
    ];
    let hooks: &[&str] = match name {
        "package.json" => NPM,
        "composer.json" => COMPOSER,
        _ => return Vec::new(),
    };
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
        return hooks
            .iter()
            .filter(|h| new.contains(&format!("\"{h}\"")) && !old.contains(&format!("\"{h}\"")))
            .map(|h| h.to_string())
            .collect();
    };
    hooks
        .iter()
        .filter(|h| after.get(**h).is_some_and(|v| before.get(**h) != Some(v)))
        .map(|h| h.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composer_events_are_lifecycle_scripts() {
        let old = r#"{"name":"a/b","scripts":{"test":"phpunit"}}"#;
        let new = r#"{"name":"a/b","scripts":{"test":"phpunit","post-install-cmd":["sh x"],"lint":"phpcs"}}"#;
        assert_eq!(
            lifecycle_scripts_changed("composer.json", old, new),
            vec!["post-install-cmd"]
        );
        // npm's hook names mean nothing to Composer, and the other way.
        let npm = r#"{"scripts":{"postinstall":"x","post-install-cmd":"y"}}"#;
        assert_eq!(
            lifecycle_scripts_changed("package.json", "{}", npm),
            vec!["postinstall"]
        );
        assert!(lifecycle_scripts_changed("Cargo.toml", "", npm).is_empty());
        assert_eq!(manifest_tool("composer.json"), Some("composer"));
    }
}
