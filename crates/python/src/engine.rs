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
const SHIPPED_FORMAT: u32 = 1;

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
    /// Flatten and translate `source`, with `modifiers` (`name = value` text) applied to the
    /// top-level class when given (structural parameters).
    pub fn translate(source: Source) -> Result<Translated, TranslateError> {
        let load = LoadOptions {
            libs: source.libs.clone(),
            use_modelicapath: source.use_modelicapath,
            use_bundled: true,
        };
        TRANSLATIONS.fetch_add(1, Ordering::Relaxed);
        let mut flat = flatten_model(&load, &source.model).map_err(|f| TranslateError {
            kind: f.kind,
            diagnostics: locate_all(&f.diagnostics, &f.sources),
        })?;
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
        Self::from_program(shipped.source, starts, shipped.warnings, shipped.program)
            .map_err(|e| e.diagnostics.into_iter().map(|d| d.message).collect())
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
        model
            .set_parameter(name, value)
            .map_err(|e| RunError::Parameter {
                name: name.into(),
                structural: self.is_structural(name),
                message: e.message,
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
