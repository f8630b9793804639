//! The VS Code extension's settings schema (`editors/vscode/package.json`)
//! against the settings the server reads (`config::editor_setting_keys`).
//!
//! Each side must have every key of the other, apart from the few keys that
//! only the client reads. The test also checks that what `package.json`
//! offers is what the server accepts: every enum value and both booleans
//! parse without an error, and the contributed defaults change nothing (VS
//! Code sends a default as if the user had set it, and an editor setting
//! overrides `pyproject.toml`; that is why the fake-mode flags default to
//! `null`, "not set here").

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value, json};
use shapels_lsp::config::{self, Settings};

/// Keys the extension reads itself and the server ignores.
const CLIENT_ONLY: &[&str] = &["shapels.server.path", "shapels.trace.server"];

fn contributed_properties() -> Map<String, Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../editors/vscode/package.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    let manifest: Value = serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("{} is not JSON: {err}", path.display()));
    manifest["contributes"]["configuration"]["properties"]
        .as_object()
        .unwrap_or_else(|| {
            panic!(
                "no contributes.configuration.properties in {}",
                path.display()
            )
        })
        .clone()
}

/// Parses `{key: value}` (the key without `shapels.`) as the editor's section.
fn parse_one(key: &str, value: &Value) -> (config::SettingsPatch, Vec<String>) {
    let section = json!({ key.strip_prefix("shapels.").unwrap(): value });
    let (patch, errors) = config::parse_editor_settings(&section);
    (patch, errors.iter().map(ToString::to_string).collect())
}

#[test]
fn package_json_and_server_have_the_same_keys() {
    let properties = contributed_properties();
    let contributed: BTreeSet<&str> = properties.keys().map(String::as_str).collect();
    let server: BTreeSet<&str> = config::editor_setting_keys().collect();
    let client_only: BTreeSet<&str> = CLIENT_ONLY.iter().copied().collect();

    let missing_in_package: Vec<&&str> = server.difference(&contributed).collect();
    assert!(
        missing_in_package.is_empty(),
        "the server reads {missing_in_package:?}, which editors/vscode/package.json does not contribute"
    );
    let unknown_to_server: Vec<&&str> = contributed
        .iter()
        .filter(|k| !server.contains(*k) && !client_only.contains(*k))
        .collect();
    assert!(
        unknown_to_server.is_empty(),
        "editors/vscode/package.json contributes {unknown_to_server:?}, which the server does not read \
         (add it to server/lsp/src/config.rs, or to CLIENT_ONLY here if only the extension reads it)"
    );
    let stale_client_only: Vec<&&str> = client_only.difference(&contributed).collect();
    assert!(
        stale_client_only.is_empty(),
        "CLIENT_ONLY names {stale_client_only:?}, which package.json no longer contributes"
    );
}

#[test]
fn package_json_offers_only_values_the_server_accepts() {
    for (key, schema) in contributed_properties() {
        if CLIENT_ONLY.contains(&key.as_str()) {
            continue;
        }
        let types: Vec<&str> = match &schema["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            other => panic!("{key}: no type in package.json ({other})"),
        };
        let mut values: Vec<Value> = Vec::new();
        if types.contains(&"boolean") {
            values.extend([json!(true), json!(false)]);
        }
        if types.contains(&"null") {
            values.push(Value::Null);
        }
        if types.contains(&"integer") {
            values.extend([schema["default"].clone(), json!(12)]);
        }
        if let Some(variants) = schema["enum"].as_array() {
            values.extend(variants.iter().cloned());
        }
        assert!(!values.is_empty(), "{key}: nothing to check in {schema}");
        for value in values {
            let (_, errors) = parse_one(&key, &value);
            assert!(
                errors.is_empty(),
                "{key}: package.json allows {value}, which the server rejects: {errors:?}"
            );
        }
        // Each key is read: a wrong type is reported under its name.
        let (_, errors) = parse_one(&key, &json!({"not": "a setting value"}));
        assert!(
            errors.iter().any(|e| e.contains(&format!("`{key}`"))),
            "{key}: the server did not read it ({errors:?})"
        );
    }
}

#[test]
fn package_json_defaults_change_nothing() {
    let mut settings = Settings::default();
    for (key, schema) in contributed_properties() {
        if CLIENT_ONLY.contains(&key.as_str()) {
            continue;
        }
        let default = schema
            .get("default")
            .unwrap_or_else(|| panic!("{key}: no default in package.json"));
        let (patch, errors) = parse_one(&key, default);
        assert!(errors.is_empty(), "{key}: default {default}: {errors:?}");
        // What `[tool.shapels]` can set must stay unset by default, or the
        // editor would override every project's pyproject.toml.
        assert!(
            patch.allow_non_fake_inputs.is_none()
                && patch.allow_fallback_kernels.is_none()
                && patch.static_shapes.is_none(),
            "{key}: the default {default} would override pyproject.toml; make it null"
        );
        patch.apply(&mut settings);
    }
    assert_eq!(
        settings,
        Settings::default(),
        "a default in editors/vscode/package.json differs from the server's own \
         (the fake-mode flags must default to null so pyproject.toml can set them)"
    );
}
