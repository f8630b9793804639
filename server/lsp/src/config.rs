//! Settings: what the user can configure, and where it is read from.
//!
//! Settings come in layers, each a [`SettingsPatch`] that sets only what it
//! mentions: the built-in defaults, then `[tool.shapels]` in a
//! `pyproject.toml`, then the editor's settings (`initializationOptions`,
//! then `workspace/configuration`), or the command line flags for
//! `shapels check`. A value of the wrong type is reported with the key it
//! was found under and skipped; the other keys still apply, so one typo never
//! turns the whole configuration off.
//!
//! The pyproject reader lives here rather than in the CLI so that the server
//! and `shapels check` agree on what a `pyproject.toml` means.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use shapels_analysis::{Config, HintDetail, HintMode};

/// Everything that can be configured, fully resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The fake-mode flags the analysis plays with.
    pub analysis: Config,
    /// Whether the server answers `textDocument/inlayHint` with anything.
    pub inlay_hints_enable: bool,
    /// How much each inlay hint says.
    pub inlay_hints_detail: HintDetail,
    /// Which bindings get a hint.
    pub inlay_hints_show: HintMode,
    /// No hint where a name is bound again to the shape it had.
    pub inlay_hints_hide_repeats: bool,
    /// The longest hint label in characters (`0`: no limit).
    pub inlay_hints_max_length: usize,
    /// More folders where imports of the user's own modules are looked
    /// for, after the file's folder and the workspace roots.
    pub extra_paths: Vec<PathBuf>,
    /// Folders of `.pyi` stubs with jaxtyping annotations that describe
    /// code the analysis cannot see (third-party functions and layers).
    pub stubs: Vec<PathBuf>,
}

impl Settings {
    /// Where imports are looked for besides the file's folder and the
    /// workspace roots: the stub folders (first), the extra paths (last).
    pub fn import_paths(&self) -> shapels_analysis::workspace::ImportPaths {
        shapels_analysis::workspace::ImportPaths {
            stubs: self.stubs.clone(),
            extra: self.extra_paths.clone(),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            analysis: Config::default(),
            inlay_hints_enable: true,
            inlay_hints_detail: HintDetail::Shape,
            inlay_hints_show: HintMode::All,
            inlay_hints_hide_repeats: false,
            inlay_hints_max_length: 0,
            extra_paths: Vec::new(),
            stubs: Vec::new(),
        }
    }
}

/// One layer of settings: each field is `Some` only where that layer sets it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsPatch {
    pub allow_non_fake_inputs: Option<bool>,
    pub allow_fallback_kernels: Option<bool>,
    pub static_shapes: Option<bool>,
    pub inlay_hints_enable: Option<bool>,
    pub inlay_hints_detail: Option<HintDetail>,
    pub inlay_hints_show: Option<HintMode>,
    pub inlay_hints_hide_repeats: Option<bool>,
    pub inlay_hints_max_length: Option<usize>,
    /// Absolute, or relative to the configuration file's folder (in an
    /// editor: to the first workspace folder).
    pub extra_paths: Option<Vec<PathBuf>>,
    /// Folders of stubs, resolved as `extra_paths` are.
    pub stubs: Option<Vec<PathBuf>>,
}

impl SettingsPatch {
    /// Overwrites the fields of `settings` that this layer sets.
    pub fn apply(&self, settings: &mut Settings) {
        if let Some(v) = self.allow_non_fake_inputs {
            settings.analysis.allow_non_fake_inputs = v;
        }
        if let Some(v) = self.allow_fallback_kernels {
            settings.analysis.allow_fallback_kernels = v;
        }
        if let Some(v) = self.static_shapes {
            settings.analysis.static_shapes = v;
        }
        if let Some(v) = self.inlay_hints_enable {
            settings.inlay_hints_enable = v;
        }
        if let Some(v) = self.inlay_hints_detail {
            settings.inlay_hints_detail = v;
        }
        if let Some(v) = self.inlay_hints_show {
            settings.inlay_hints_show = v;
        }
        if let Some(v) = self.inlay_hints_hide_repeats {
            settings.inlay_hints_hide_repeats = v;
        }
        if let Some(v) = self.inlay_hints_max_length {
            settings.inlay_hints_max_length = v;
        }
        if let Some(v) = &self.extra_paths {
            settings.extra_paths = v.clone();
        }
        if let Some(v) = &self.stubs {
            settings.stubs = v.clone();
        }
    }

    /// Relative extra paths made absolute against `dir`.
    pub fn resolve_paths(&mut self, dir: &Path) {
        for paths in [&mut self.extra_paths, &mut self.stubs]
            .into_iter()
            .flatten()
        {
            for path in paths.iter_mut() {
                if path.is_relative() {
                    *path = dir.join(&*path);
                }
            }
        }
    }
}

/// A setting that was present but unusable, named by the key the user wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingError {
    /// The full key, e.g. `shapels.inlayHints.detail` or `tool.shapels.static_shapes`.
    pub key: String,
    pub message: String,
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid setting `{}`: {}", self.key, self.message)
    }
}

/// Reads one editor setting into a patch; `null` leaves the patch as it is.
type ReadSetting = fn(&Value, &mut SettingsPatch) -> Result<(), String>;

/// The editor settings the server reads, by full dotted key. This table is
/// the one place where an editor setting is added: the VS Code extension's
/// `package.json` is checked against it (`tests/vscode_settings.rs`), so the
/// two cannot drift apart.
const EDITOR_SETTINGS: &[(&str, ReadSetting)] = &[
    ("shapels.allowNonFakeInputs", |v, p| {
        json_bool(v).map(|v| p.allow_non_fake_inputs = v)
    }),
    ("shapels.allowFallbackKernels", |v, p| {
        json_bool(v).map(|v| p.allow_fallback_kernels = v)
    }),
    ("shapels.staticShapes", |v, p| {
        json_bool(v).map(|v| p.static_shapes = v)
    }),
    ("shapels.inlayHints.enable", |v, p| {
        json_bool(v).map(|v| p.inlay_hints_enable = v)
    }),
    ("shapels.inlayHints.detail", |v, p| {
        json_detail(v).map(|v| p.inlay_hints_detail = v)
    }),
    ("shapels.inlayHints.show", |v, p| {
        json_mode(v).map(|v| p.inlay_hints_show = v)
    }),
    ("shapels.inlayHints.hideRepeats", |v, p| {
        json_bool(v).map(|v| p.inlay_hints_hide_repeats = v)
    }),
    ("shapels.inlayHints.maxLength", |v, p| {
        json_length(v).map(|v| p.inlay_hints_max_length = v)
    }),
    ("shapels.extraPaths", |v, p| {
        json_paths(v).map(|v| p.extra_paths = v)
    }),
    ("shapels.stubs", |v, p| json_paths(v).map(|v| p.stubs = v)),
];

/// The full keys (`shapels.inlayHints.detail`) of every editor setting the
/// server reads, in [`parse_editor_settings`]'s dotted spelling.
pub fn editor_setting_keys() -> impl Iterator<Item = &'static str> {
    EDITOR_SETTINGS.iter().map(|(key, _)| *key)
}

/// Reads the editor's settings: the `shapels` section of `initializationOptions`,
/// of a `workspace/configuration` answer or of `didChangeConfiguration`.
///
/// `value` may be the section itself (`{"staticShapes": true}`) or an object
/// that holds it under `shapels`. Nested (`inlayHints: {enable}`) and dotted
/// (`"inlayHints.enable"`) spellings are both accepted, because clients
/// differ in which one they send. Keys shapels does not know are ignored:
/// editors put their own client-side settings (`trace.server`, the server
/// path) in the same section.
pub fn parse_editor_settings(value: &Value) -> (SettingsPatch, Vec<SettingError>) {
    let mut patch = SettingsPatch::default();
    let mut errors = Vec::new();
    let section = match value {
        Value::Null => return (patch, errors),
        Value::Object(map) => match map.get("shapels") {
            Some(Value::Object(inner)) => inner,
            Some(Value::Null) => return (patch, errors),
            Some(other) => {
                errors.push(SettingError {
                    key: "shapels".into(),
                    message: format!("expected an object, found {other}"),
                });
                return (patch, errors);
            }
            None => map,
        },
        other => {
            errors.push(SettingError {
                key: "shapels".into(),
                message: format!("expected an object, found {other}"),
            });
            return (patch, errors);
        }
    };

    let mut flat: Vec<(String, &Value)> = Vec::new();
    for (key, value) in section {
        match (key.as_str(), value) {
            ("inlayHints", Value::Object(inner)) => {
                flat.extend(inner.iter().map(|(k, v)| (format!("inlayHints.{k}"), v)));
            }
            _ => flat.push((key.clone(), value)),
        }
    }

    for (key, value) in flat {
        let full_key = format!("shapels.{key}");
        let Some((_, read)) = EDITOR_SETTINGS.iter().find(|(k, _)| *k == full_key) else {
            tracing::debug!("ignoring unknown setting `{full_key}`");
            continue;
        };
        if let Err(message) = read(value, &mut patch) {
            errors.push(SettingError {
                key: full_key,
                message,
            });
        }
    }
    (patch, errors)
}

/// A JSON `null` means "not set here", so it maps to `None` rather than to an error.
fn json_bool(value: &Value) -> Result<Option<bool>, String> {
    match value {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        other => Err(format!("expected true or false, found {other}")),
    }
}

fn json_paths(value: &Value) -> Result<Option<Vec<PathBuf>>, String> {
    match value {
        Value::Null => Ok(None),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(PathBuf::from(s)),
                other => Err(format!("expected a list of paths, found {other} in it")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        other => Err(format!("expected a list of paths, found {other}")),
    }
}

fn json_detail(value: &Value) -> Result<Option<HintDetail>, String> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => parse_detail(s).map(Some),
        other => Err(format!("expected \"shape\" or \"full\", found {other}")),
    }
}

fn json_mode(value: &Value) -> Result<Option<HintMode>, String> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => parse_mode(s).map(Some),
        other => Err(format!(
            "expected \"all\", \"parameters\" or \"changes\", found {other}"
        )),
    }
}

/// Parses the spelling of a [`HintMode`]: `all`, `parameters`, `changes`.
pub fn parse_mode(s: &str) -> Result<HintMode, String> {
    match s {
        "all" => Ok(HintMode::All),
        "parameters" => Ok(HintMode::Parameters),
        "changes" => Ok(HintMode::Changes),
        other => Err(format!(
            "expected \"all\", \"parameters\" or \"changes\", found {other:?}"
        )),
    }
}

/// A label length: a whole number, `0` for no limit.
fn json_length(value: &Value) -> Result<Option<usize>, String> {
    match value {
        Value::Null => Ok(None),
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                format!("expected a whole number of characters, 0 for no limit, found {n}")
            }),
        other => Err(format!(
            "expected a whole number of characters, 0 for no limit, found {other}"
        )),
    }
}

/// Parses the spelling of a [`HintDetail`] shared by the settings and the CLI.
pub fn parse_detail(s: &str) -> Result<HintDetail, String> {
    match s {
        "shape" => Ok(HintDetail::Shape),
        "full" => Ok(HintDetail::Full),
        other => Err(format!("expected \"shape\" or \"full\", found {other:?}")),
    }
}

/// Why a configuration file could not be used at all.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot parse {}: {message}", path.display())]
    Toml { path: PathBuf, message: String },
}

/// The settings found in one configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSettings {
    /// The file they were read from.
    pub path: PathBuf,
    /// Whether the file has a shapels section at all (`[tool.shapels]` in a pyproject).
    pub has_section: bool,
    pub patch: SettingsPatch,
    /// Keys that were present but unusable; the rest of `patch` still applies.
    pub errors: Vec<SettingError>,
}

/// The name of the file that [`discover`] looks for.
pub const PYPROJECT: &str = "pyproject.toml";

/// Reads a configuration file: `[tool.shapels]` of a file named
/// `pyproject.toml`, the top-level keys of any other TOML file (such as a
/// `shapels.toml` given to `shapels check --config-file`).
pub fn read_config_file(path: &Path) -> Result<FileSettings, ConfigFileError> {
    let text = read_limited(path).map_err(|source| ConfigFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let is_pyproject = path.file_name().is_some_and(|name| name == PYPROJECT);
    let mut settings =
        parse_toml_settings(&text, is_pyproject).map_err(|message| ConfigFileError::Toml {
            path: path.to_path_buf(),
            message,
        })?;
    if let Some(dir) = path.parent() {
        settings.patch.resolve_paths(dir);
    }
    settings.path = path.to_path_buf();
    Ok(settings)
}

/// The largest configuration file read: a `pyproject.toml` is a few
/// kilobytes, and `--config-file /dev/zero` must not read until memory
/// runs out.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The text of a regular file of at most [`MAX_CONFIG_BYTES`], read no
/// further than that.
fn read_limited(path: &Path) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    // `stat` first: opening a named pipe blocks until a writer comes.
    if !std::fs::metadata(path)?.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    let file = std::fs::File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("larger than {} KiB", MAX_CONFIG_BYTES / 1024),
        ));
    }
    String::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::InvalidData, "not UTF-8"))
}

/// Lines of a message longer than this are cut: a TOML error quotes the
/// line it is on, which can be a 200 KB line of generated data.
const MAX_QUOTED_LINE: usize = 200;

/// `message` with each line cut to [`MAX_QUOTED_LINE`] characters.
fn cap_lines(message: &str) -> String {
    message
        .lines()
        .map(|line| match line.char_indices().nth(MAX_QUOTED_LINE) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Parses settings from TOML text; see [`read_config_file`]. The returned
/// `path` is empty, for the caller to fill.
pub fn parse_toml_settings(text: &str, is_pyproject: bool) -> Result<FileSettings, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|err: toml::de::Error| cap_lines(&err.to_string()))?;
    let mut out = FileSettings::default();
    let (section, prefix) = if is_pyproject {
        match table.get("tool").and_then(|tool| tool.get("shapels")) {
            None => return Ok(out),
            Some(toml::Value::Table(section)) => (section, "tool.shapels."),
            Some(_) => {
                out.has_section = true;
                out.errors.push(SettingError {
                    key: "tool.shapels".into(),
                    message: "expected a table".into(),
                });
                return Ok(out);
            }
        }
    } else {
        (&table, "")
    };
    out.has_section = true;
    for (key, value) in section {
        let full_key = format!("{prefix}{key}");
        let result = match key.as_str() {
            "allow_non_fake_inputs" => toml_bool(value).map(|v| out.patch.allow_non_fake_inputs = Some(v)),
            "allow_fallback_kernels" => toml_bool(value).map(|v| out.patch.allow_fallback_kernels = Some(v)),
            "static_shapes" => toml_bool(value).map(|v| out.patch.static_shapes = Some(v)),
            "extra-paths" | "extra_paths" => toml_paths(value).map(|v| out.patch.extra_paths = Some(v)),
            "stubs" => toml_paths(value).map(|v| out.patch.stubs = Some(v)),
            _ => Err("unknown key; expected one of allow_non_fake_inputs, allow_fallback_kernels, static_shapes, extra-paths, stubs".into()),
        };
        if let Err(message) = result {
            out.errors.push(SettingError {
                key: full_key,
                message,
            });
        }
    }
    Ok(out)
}

fn toml_paths(value: &toml::Value) -> Result<Vec<PathBuf>, String> {
    let items = value
        .as_array()
        .ok_or_else(|| format!("expected a list of paths, found {value}"))?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .map(PathBuf::from)
                .ok_or_else(|| format!("expected a list of paths, found {item} in it"))
        })
        .collect()
}

fn toml_bool(value: &toml::Value) -> Result<bool, String> {
    value
        .as_bool()
        .ok_or_else(|| format!("expected true or false, found {value}"))
}

/// The settings of the nearest `pyproject.toml` with a `[tool.shapels]`
/// section in `dir` or above it, up to and including `ceiling` when given.
/// A pyproject without the section is passed over, so that a sub-package's
/// packaging file does not hide the project's shapels settings.
pub fn discover(
    dir: &Path,
    ceiling: Option<&Path>,
) -> Result<Option<FileSettings>, ConfigFileError> {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    for ancestor in dir.ancestors() {
        if ceiling.is_some_and(|ceiling| !ancestor.starts_with(ceiling)) {
            break;
        }
        let candidate = ancestor.join(PYPROJECT);
        if !candidate.is_file() {
            continue;
        }
        let settings = read_config_file(&candidate)?;
        if settings.has_section {
            return Ok(Some(settings));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn editor_settings_nested_and_dotted() {
        let (patch, errors) = parse_editor_settings(&json!({
            "shapels": {
                "allowNonFakeInputs": true,
                "staticShapes": false,
                "inlayHints": {"enable": false},
                "inlayHints.detail": "full",
                "trace": {"server": "verbose"}
            }
        }));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            patch,
            SettingsPatch {
                allow_non_fake_inputs: Some(true),
                allow_fallback_kernels: None,
                static_shapes: Some(false),
                inlay_hints_enable: Some(false),
                inlay_hints_detail: Some(HintDetail::Full),
                inlay_hints_show: None,
                inlay_hints_hide_repeats: None,
                inlay_hints_max_length: None,
                extra_paths: None,
                stubs: None,
            }
        );
    }

    #[test]
    fn every_editor_setting_reaches_its_field() {
        let non_defaults = json!({
            "shapels.allowNonFakeInputs": true,
            "shapels.allowFallbackKernels": false,
            "shapels.staticShapes": true,
            "shapels.inlayHints.enable": false,
            "shapels.inlayHints.detail": "full",
            "shapels.inlayHints.show": "changes",
            "shapels.inlayHints.hideRepeats": true,
            "shapels.inlayHints.maxLength": 30,
            "shapels.extraPaths": ["lib"],
            "shapels.stubs": ["typings"],
        });
        let mut keys: Vec<&str> = non_defaults
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut table: Vec<&str> = editor_setting_keys().collect();
        table.sort_unstable();
        assert_eq!(table, keys, "a setting was added: give it a value here");
        let section: serde_json::Map<String, Value> = non_defaults
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.strip_prefix("shapels.").unwrap().to_string(), v.clone()))
            .collect();
        let (patch, errors) = parse_editor_settings(&Value::Object(section));
        assert!(errors.is_empty(), "{errors:?}");
        // No `..Default::default()`: a new field must be set by some key.
        assert_eq!(
            patch,
            SettingsPatch {
                allow_non_fake_inputs: Some(true),
                allow_fallback_kernels: Some(false),
                static_shapes: Some(true),
                inlay_hints_enable: Some(false),
                inlay_hints_detail: Some(HintDetail::Full),
                inlay_hints_show: Some(HintMode::Changes),
                inlay_hints_hide_repeats: Some(true),
                inlay_hints_max_length: Some(30),
                extra_paths: Some(vec![PathBuf::from("lib")]),
                stubs: Some(vec![PathBuf::from("typings")]),
            }
        );
    }

    #[test]
    fn pyproject_stubs_are_relative_to_the_file() {
        let mut settings =
            parse_toml_settings("[tool.shapels]\nstubs = [\"typings\"]\n", true).unwrap();
        assert!(settings.errors.is_empty(), "{:?}", settings.errors);
        settings.patch.resolve_paths(Path::new("/proj"));
        assert_eq!(
            settings.patch.stubs,
            Some(vec![PathBuf::from("/proj/typings")])
        );
        let mut resolved = Settings::default();
        settings.patch.apply(&mut resolved);
        assert_eq!(
            resolved.import_paths().stubs,
            vec![PathBuf::from("/proj/typings")]
        );
        assert!(resolved.import_paths().extra.is_empty());
    }

    #[test]
    fn hint_settings_refuse_what_they_cannot_mean() {
        let (patch, errors) = parse_editor_settings(&json!({
            "inlayHints": {"show": "some", "maxLength": -3, "hideRepeats": "yes"}
        }));
        let mut keys: Vec<&str> = errors.iter().map(|e| e.key.as_str()).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "shapels.inlayHints.hideRepeats",
                "shapels.inlayHints.maxLength",
                "shapels.inlayHints.show"
            ]
        );
        assert_eq!(patch, SettingsPatch::default());
        let (patch, errors) = parse_editor_settings(&json!({"inlayHints.maxLength": 0}));
        assert!(errors.is_empty());
        assert_eq!(patch.inlay_hints_max_length, Some(0));
    }

    #[test]
    fn editor_settings_section_without_wrapper() {
        let (patch, errors) = parse_editor_settings(&json!({"allowFallbackKernels": false}));
        assert!(errors.is_empty());
        assert_eq!(patch.allow_fallback_kernels, Some(false));
    }

    #[test]
    fn bad_values_are_reported_by_key_and_the_rest_applies() {
        let (patch, errors) = parse_editor_settings(&json!({
            "shapels": {"staticShapes": "yes", "inlayHints": {"detail": "everything"}, "allowNonFakeInputs": true}
        }));
        let keys: Vec<&str> = errors.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["shapels.inlayHints.detail", "shapels.staticShapes"]);
        assert_eq!(patch.allow_non_fake_inputs, Some(true));
        assert_eq!(patch.static_shapes, None);
        assert!(errors[1].to_string().contains("`shapels.staticShapes`"));
    }

    #[test]
    fn null_settings_change_nothing() {
        assert_eq!(
            parse_editor_settings(&Value::Null),
            (SettingsPatch::default(), vec![])
        );
        assert_eq!(
            parse_editor_settings(&json!({"shapels": null})),
            (SettingsPatch::default(), vec![])
        );
        let (_, errors) = parse_editor_settings(&json!({"shapels": 3}));
        assert_eq!(errors[0].key, "shapels");
    }

    #[test]
    fn pyproject_section() {
        let settings = parse_toml_settings(
            "[project]\nname = \"m\"\n[tool.shapels]\nstatic_shapes = true\nallow_fallback_kernels = 1\nbogus = 2\n",
            true,
        )
        .unwrap();
        assert!(settings.has_section);
        assert_eq!(settings.patch.static_shapes, Some(true));
        assert_eq!(settings.patch.allow_fallback_kernels, None);
        let keys: Vec<&str> = settings.errors.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(
            keys,
            ["tool.shapels.allow_fallback_kernels", "tool.shapels.bogus"]
        );
    }

    #[test]
    fn pyproject_extra_paths_are_relative_to_the_file() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join(PYPROJECT);
        std::fs::write(
            &file,
            "[tool.shapels]\nextra-paths = [\"lib\", \"/opt/shared\"]\n",
        )
        .unwrap();
        let settings = read_config_file(&file).unwrap();
        assert_eq!(
            settings.patch.extra_paths,
            Some(vec![root.path().join("lib"), PathBuf::from("/opt/shared")])
        );
        let bad = parse_toml_settings("[tool.shapels]\nextra-paths = \"lib\"\n", true).unwrap();
        assert_eq!(bad.errors[0].key, "tool.shapels.extra-paths");
    }

    #[test]
    fn pyproject_without_section() {
        let settings = parse_toml_settings("[project]\nname = \"m\"\n", true).unwrap();
        assert!(!settings.has_section);
        assert_eq!(settings.patch, SettingsPatch::default());
    }

    #[test]
    fn standalone_file_uses_top_level_keys() {
        let settings = parse_toml_settings("allow_non_fake_inputs = true\n", false).unwrap();
        assert_eq!(settings.patch.allow_non_fake_inputs, Some(true));
    }

    #[test]
    fn broken_toml_is_an_error() {
        assert!(parse_toml_settings("[tool.shapels\n", true).is_err());
    }

    #[test]
    fn layers_apply_in_order() {
        let mut settings = Settings::default();
        SettingsPatch {
            static_shapes: Some(true),
            allow_fallback_kernels: Some(false),
            ..Default::default()
        }
        .apply(&mut settings);
        SettingsPatch {
            static_shapes: Some(false),
            ..Default::default()
        }
        .apply(&mut settings);
        assert!(!settings.analysis.static_shapes);
        assert!(!settings.analysis.allow_fallback_kernels);
        assert!(settings.inlay_hints_enable);
    }

    #[test]
    fn discovery_skips_pyprojects_without_a_section_and_stops_at_the_ceiling() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        let package = project.join("pkg");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(
            root.path().join(PYPROJECT),
            "[tool.shapels]\nstatic_shapes = false\n",
        )
        .unwrap();
        std::fs::write(
            project.join(PYPROJECT),
            "[tool.shapels]\nstatic_shapes = true\n",
        )
        .unwrap();
        std::fs::write(package.join(PYPROJECT), "[project]\nname = \"pkg\"\n").unwrap();

        let found = discover(&package, None).unwrap().unwrap();
        assert_eq!(found.path, project.join(PYPROJECT));
        assert_eq!(found.patch.static_shapes, Some(true));

        assert_eq!(discover(&package, Some(&package)).unwrap(), None);
        let at_root = discover(root.path(), None).unwrap().unwrap();
        assert_eq!(at_root.patch.static_shapes, Some(false));
    }

    #[test]
    fn the_repository_pyproject_leaves_its_fixtures_on_the_defaults() {
        // The root pyproject.toml packages the wheel; without a
        // [tool.shapels] section it is passed over, so the fixtures and
        // examples below it keep the settings their expectations assume.
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let own = repo.join(PYPROJECT).canonicalize().unwrap();
        assert!(!read_config_file(&own).unwrap().has_section);
        for dir in ["tests/fixtures/diagnostics", "examples", "tests/corpus"] {
            let dir = repo.join(dir).canonicalize().unwrap();
            let found = discover(&dir, None).unwrap();
            assert!(
                found.as_ref().is_none_or(|f| f.path != own),
                "{} takes its settings from the repository's pyproject.toml",
                dir.display()
            );
        }
    }
}
