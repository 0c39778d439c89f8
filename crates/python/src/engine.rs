//! The Python-free core: translate once, run many times.
//!
//! A [`Translated`] model holds the causal program and one compiled interpreter that is never
//! run itself; every run clones it (the compiled code is shared, see
//! `moss_codegen::Interpreter`), sets its parameters and start values, and simulates. So a
//! run with other parameter values costs a simulation, never a translation, and runs on
//! several threads need no locking. [`translation_count`] counts translations in this process,
//! which is how the tests prove that a parameter change did not translate again.

use moss_codegen::{ExecutableModel, Interpreter};
use moss_frontend::api::{flatten_model, FailureKind, LoadOptions};
use moss_frontend::starts::{expose_start_values, StartParameter};
use moss_results::SimResult;
use moss_sim::{SimOptions, SimStats};
use moss_symbolic::program::VarKind;
use moss_symbolic::CausalProgram;
use moss_syntax::{Diagnostic, SourceMap};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

static TRANSLATIONS: AtomicU64 = AtomicU64::new(0);

/// How many models this process has translated (flattened and analysed).
pub fn translation_count() -> u64 {
    TRANSLATIONS.load(Ordering::Relaxed)
}

/// Where a model came from: enough to translate it again (with other structural values).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Source {
    /// Class name or `.mo` file.
    pub model: String,
    pub libs: Vec<PathBuf>,
    pub use_modelicapath: bool,
    /// Modifiers of the top-level class (`name`, Modelica value text), for structural
    /// parameters given other values than the model's ([`Translated::translate`]).
    pub modifiers: Vec<(String, String)>,
}

/// One located diagnostic, resolved against its source map (file, 1-based line and column).
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    pub severity: &'static str,
    pub message: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub help: Option<String>,
    /// The full rendering with the source excerpt, as `moss` prints it.
    pub rendered: String,
}

/// Why a model could not be translated.
#[derive(Debug)]
pub struct TranslateError {
    pub kind: FailureKind,
    pub diagnostics: Vec<Located>,
}

/// Why a run could not be made or failed.
#[derive(Debug)]
pub enum RunError {
    /// A parameter or start value that cannot be set; `structural` when setting it needs
    /// another translation.
    Parameter {
        name: String,
        message: String,
        structural: bool,
    },
    /// Invalid options (times, tolerance, output filter).
    Options(String),
    /// The simulation failed; `time` is where, when known.
    Simulation {
        message: String,
        time: Option<f64>,
        partial: Option<Box<SimResult>>,
    },
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Parameter { message, .. } | RunError::Options(message) => {
                write!(f, "{message}")
            }
            RunError::Simulation { message, .. } => write!(f, "simulation failed {message}"),
        }
    }
}

/// A translated model, ready to run any number of times.
pub struct Translated {
    pub source: Source,
    /// Start values made settable: variable name → hidden parameter.
    pub starts: HashMap<String, String>,
    /// Translation warnings (rendered).
    pub warnings: Vec<String>,
    template: Interpreter,
}

/// What crosses a process boundary (pickle): the program, not the text it came from, so a
/// worker on another machine needs neither the model files nor the library.
#[derive(Serialize, Deserialize)]
struct Shipped {
    format: u32,
    source: Source,
    starts: Vec<(String, String)>,
    warnings: Vec<String>,
    program: CausalProgram,
}

/// Bumped whenever [`Shipped`] or the program types change shape.
const SHIPPED_FORMAT: u32 = 2;

/// What one run asks for beyond the simulation options.
#[derive(Clone, Debug, Default)]
pub struct RunInput {
    pub params: Vec<(String, f64)>,
    pub start_values: Vec<(String, f64)>,
}

/// A finished run.
pub struct Run {
    pub result: SimResult,
    pub stats: SimStats,
    pub terminated: Option<String>,
    pub warnings: Vec<String>,
}

impl Translated {
    /// Flatten and translate `source`. With modifiers, the class translated is one that
    /// extends the model with them (see [`wrapper`]), under the model's name.
    pub fn translate(source: Source) -> Result<Translated, TranslateError> {
        TRANSLATIONS.fetch_add(1, Ordering::Relaxed);
        let mut flat = if source.modifiers.is_empty() {
            flatten(&source.model, source.libs.clone(), source.use_modelicapath)?
        } else {
            let wrapper = Wrapper::write(&source).map_err(|m| TranslateError {
                kind: FailureKind::Model,
                diagnostics: vec![Located::plain(m)],
            })?;
            let mut libs = wrapper.libs.clone();
            libs.extend(source.libs.iter().cloned());
            let flat = flatten(&wrapper.file(), libs, source.use_modelicapath);
            drop(wrapper);
            let mut flat = flat?;
            check_modified(&flat.model, &source.modifiers)?;
            flat.model.name = wrapper_target_name(&flat.model.name, &source.model);
            flat
        };
        let starts = expose_start_values(&mut flat.model);
        let mut warnings: Vec<String> = flat
            .warnings
            .iter()
            .map(|d| d.render(&flat.model.sources))
            .collect();
        let program = moss_symbolic::translate(&flat.model).map_err(|d| TranslateError {
            kind: FailureKind::Model,
            diagnostics: locate_all(&d, &flat.model.sources),
        })?;
        warnings.extend(program.report.warnings.iter().cloned());
        let starts = starts
            .into_iter()
            .map(
                |StartParameter {
                     variable,
                     parameter,
                 }| (variable, parameter),
            )
            .collect();
        Self::from_program(source, starts, warnings, program)
    }

    fn from_program(
        source: Source,
        starts: HashMap<String, String>,
        warnings: Vec<String>,
        program: CausalProgram,
    ) -> Result<Translated, TranslateError> {
        let template = Interpreter::new(program).map_err(|e| TranslateError {
            kind: FailureKind::Model,
            diagnostics: vec![Located::plain(e.to_string())],
        })?;
        Ok(Translated {
            source,
            starts,
            warnings,
            template,
        })
    }

    pub fn program(&self) -> &CausalProgram {
        &self.template.program
    }

    /// The bytes of [`Translated::from_bytes`].
    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        let mut starts: Vec<(String, String)> = self
            .starts
            .iter()
            .map(|(v, p)| (v.clone(), p.clone()))
            .collect();
        starts.sort();
        let shipped = Shipped {
            format: SHIPPED_FORMAT,
            source: self.source.clone(),
            starts,
            warnings: self.warnings.clone(),
            program: self.program().clone(),
        };
        postcard::to_stdvec(&shipped).map_err(|e| format!("cannot serialize the model: {e}"))
    }

    /// A model from [`Translated::to_bytes`]: compiled again (cheap), not translated.
    pub fn from_bytes(bytes: &[u8]) -> Result<Translated, String> {
        let shipped: Shipped = postcard::from_bytes(bytes)
            .map_err(|e| format!("not a serialized moss model (or another version): {e}"))?;
        if shipped.format != SHIPPED_FORMAT {
            return Err(format!(
                "the model was serialized in format {} but this moss reads format {}",
                shipped.format, SHIPPED_FORMAT
            ));
        }
        let starts = shipped.starts.into_iter().collect();
        Self::from_program(shipped.source, starts, shipped.warnings, shipped.program).map_err(|e| {
            let messages: Vec<String> = e.diagnostics.into_iter().map(|d| d.message).collect();
            messages.join("; ")
        })
    }

    /// Check every parameter and start value of `input` without running (the first error).
    pub fn check_input(&self, input: &RunInput) -> Result<(), RunError> {
        let mut probe = self.template.clone();
        self.apply(&mut probe, input)
    }

    /// Simulate once with `input` on a fresh copy of the compiled model.
    pub fn run(&self, input: &RunInput, opts: &SimOptions) -> Result<Run, RunError> {
        let mut model = self.template.clone();
        self.apply(&mut model, input)?;
        let outcome = moss_sim::simulate_with_stats(&mut model, self.program(), opts);
        let warnings = model.warnings();
        match outcome {
            Ok(sim) => Ok(Run {
                result: sim.result,
                stats: sim.stats,
                terminated: sim.terminated,
                warnings,
            }),
            Err(e) => Err(match e.kind {
                moss_sim::SimErrorKind::Options(m) => RunError::Options(m),
                kind => RunError::Simulation {
                    time: failure_time(&kind),
                    message: kind.to_string(),
                    partial: e.partial,
                },
            }),
        }
    }

    fn apply(&self, model: &mut Interpreter, input: &RunInput) -> Result<(), RunError> {
        for (name, value) in &input.params {
            self.set_parameter(model, name, *value)?;
        }
        for (name, value) in &input.start_values {
            let Some(parameter) = self.starts.get(name) else {
                return Err(self.start_error(name));
            };
            model
                .set_parameter(parameter, *value)
                .map_err(|e| RunError::Parameter {
                    name: name.clone(),
                    message: e.message,
                    structural: false,
                })?;
        }
        Ok(())
    }

    fn set_parameter(
        &self,
        model: &mut Interpreter,
        name: &str,
        value: f64,
    ) -> Result<(), RunError> {
        if let Some(start_of) = self.starts.iter().find(|(_, p)| p.as_str() == name) {
            return Err(RunError::Parameter {
                name: name.into(),
                message: format!(
                    "`{name}` is internal; pass start_values={{\"{}\": ...}}",
                    start_of.0
                ),
                structural: false,
            });
        }
        model.set_parameter(name, value).map_err(|e| {
            let structural = self.is_structural(name);
            let message = if structural {
                format!(
                    "{}; from Python: model.retranslate(params={{\"{name}\": ...}})",
                    e.message
                )
            } else {
                e.message
            };
            RunError::Parameter {
                name: name.into(),
                structural,
                message,
            }
        })
    }

    /// A parameter whose value the translation used: evaluated (`Evaluate=true`, or a zero
    /// that made an equation singular), or folded by the frontend (array sizes, `if`
    /// conditions), in which case the program has no parameter of that name at all but the
    /// model declares one.
    fn is_structural(&self, name: &str) -> bool {
        let program = self.program();
        if program.report.evaluated(name).is_some() {
            return true;
        }
        program
            .var_by_name(name)
            .is_some_and(|v| program.vars[v as usize].kind == VarKind::Constant)
    }

    fn start_error(&self, name: &str) -> RunError {
        let program = self.program();
        let why = match program
            .var_by_name(name)
            .map(|v| program.vars[v as usize].kind)
        {
            None if !program.aliases.iter().any(|a| a.name == name) => {
                "the model has no variable of that name".to_string()
            }
            Some(VarKind::Parameter | VarKind::DependentParameter | VarKind::Constant) => {
                "it is a parameter; pass it in params= instead".to_string()
            }
            _ => "its start value is not a literal initial condition (it is computed from \
                  parameters, or only a guess for an iteration variable, or the variable was \
                  eliminated as an alias of another one); set the parameters it depends on, \
                  or the start value of the variable it is an alias of"
                .to_string(),
        };
        RunError::Parameter {
            name: name.into(),
            message: format!("cannot set the start value of `{name}`: {why}"),
            structural: false,
        }
    }
}

/// Every modifier must name something the model has: the frontend accepts a modifier of
/// an element that does not exist in an `extends`, which here would be a silent no-op.
fn check_modified(
    flat: &moss_frontend::FlatModel,
    modifiers: &[(String, String)],
) -> Result<(), TranslateError> {
    for (name, _) in modifiers {
        let found = flat.variables.iter().any(|v| {
            v.name == *name
                || v.name
                    .strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with(['[', '.']))
        });
        if !found {
            return Err(TranslateError {
                kind: FailureKind::Model,
                diagnostics: vec![Located::plain(format!(
                    "cannot modify `{name}`: the model has no component of that name"
                ))],
            });
        }
    }
    Ok(())
}

fn flatten(
    model: &str,
    libs: Vec<PathBuf>,
    use_modelicapath: bool,
) -> Result<moss_frontend::api::Flattened, TranslateError> {
    let load = LoadOptions {
        libs,
        use_modelicapath,
        use_bundled: true,
    };
    flatten_model(&load, model).map_err(|f| TranslateError {
        kind: f.kind,
        diagnostics: locate_all(&f.diagnostics, &f.sources),
    })
}

/// The class moss translates when structural parameters get new values: a model that
/// extends the user's model with the modifiers, `model W extends M(n = 4); end W;`. It is
/// written to a temporary directory that is removed when the wrapper is dropped.
///
/// For a class name, the wrapper file extends it by its full name (found on the same library
/// path). For a `.mo` file, whose last class may not be reachable by name, the wrapper is a
/// copy of the file with the extending class appended (so it comes last, in the same
/// `within` scope), and the file's directory is on the library path as it would be.
struct Wrapper {
    dir: PathBuf,
    libs: Vec<PathBuf>,
}

const WRAPPER_CLASS: &str = "MossStructuralVariant";

static WRAPPERS: AtomicU64 = AtomicU64::new(0);

impl Wrapper {
    fn write(source: &Source) -> Result<Wrapper, String> {
        let n = WRAPPERS.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("moss-python-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let mut wrapper = Wrapper { dir, libs: vec![] };
        let mods: Vec<String> = source
            .modifiers
            .iter()
            .map(|(name, value)| format!("{name} = {value}"))
            .collect();
        let mods = mods.join(", ");
        let is_file = source.model.ends_with(".mo");
        let (text, libs) = if is_file {
            let path = std::path::Path::new(&source.model);
            let original = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let last = last_class_name(&original)
                .ok_or_else(|| format!("{} defines no class", path.display()))?;
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let text = format!(
                "{original}\nmodel {WRAPPER_CLASS}\n  extends {last}({mods});\nend {WRAPPER_CLASS};\n"
            );
            (text, vec![dir])
        } else {
            let text = format!(
                "model {WRAPPER_CLASS}\n  extends {}({mods});\nend {WRAPPER_CLASS};\n",
                source.model
            );
            (text, vec![])
        };
        std::fs::write(wrapper.file(), text)
            .map_err(|e| format!("cannot write {}: {e}", wrapper.file()))?;
        wrapper.libs = libs;
        Ok(wrapper)
    }

    fn file(&self) -> String {
        self.dir
            .join(format!("{WRAPPER_CLASS}.mo"))
            .display()
            .to_string()
    }
}

impl Drop for Wrapper {
    fn drop(&mut self) {
        // best effort: a leftover file in the temporary directory harms nothing
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The name of the last top-level class a Modelica file defines (what `moss` simulates
/// for a file), from its syntax tree.
fn last_class_name(text: &str) -> Option<String> {
    let (tree, _) = moss_syntax::parse_str(moss_syntax::FileId(0), text);
    tree.classes.last().map(|c| c.class.name.name.to_string())
}

/// The model's own name for a translated wrapper: the class name for a class, the last
/// class of the file for a file (the wrapper's name is an implementation detail).
fn wrapper_target_name(wrapper_name: &str, model: &str) -> String {
    if model.ends_with(".mo") {
        let within = wrapper_name
            .rsplit_once('.')
            .map(|(w, _)| format!("{w}."))
            .unwrap_or_default();
        std::fs::read_to_string(model)
            .ok()
            .and_then(|t| last_class_name(&t))
            .map_or_else(|| wrapper_name.to_string(), |n| format!("{within}{n}"))
    } else {
        model.to_string()
    }
}

fn failure_time(kind: &moss_sim::SimErrorKind) -> Option<f64> {
    match kind {
        moss_sim::SimErrorKind::Runtime(e) => Some(e.time),
        moss_sim::SimErrorKind::Chattering(c) => Some(c.time),
        _ => None,
    }
}

impl Located {
    fn plain(message: String) -> Located {
        Located {
            severity: "error",
            rendered: format!("error: {message}"),
            message,
            file: None,
            line: None,
            column: None,
            help: None,
        }
    }
}

fn locate_all(diags: &[Diagnostic], sources: &SourceMap) -> Vec<Located> {
    diags.iter().map(|d| locate(d, sources)).collect()
}

fn locate(d: &Diagnostic, sources: &SourceMap) -> Located {
    let place = (!d.span.is_dummy())
        .then(|| sources.get(d.span.file))
        .flatten()
        .map(|f| (f.path.display().to_string(), f.line_col(d.span.start)));
    Located {
        severity: if d.is_error() { "error" } else { "warning" },
        message: d.message.clone(),
        file: place.as_ref().map(|(f, _)| f.clone()),
        line: place.as_ref().map(|(_, (l, _))| *l),
        column: place.as_ref().map(|(_, (_, c))| *c),
        help: d.help.clone(),
        rendered: d.render(sources),
    }
}
