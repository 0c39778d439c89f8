//! `moss fmu MODEL_OR_FILE -o Model.fmu`: export a model as a Functional Mock-up Unit.
//!
//! The FMU holds three things: `modelDescription.xml` (written by `moss_fmi::description`),
//! the model's translated program (`resources/moss_model.bin`, see `moss_fmi::payload`) and
//! the prebuilt runtime library (`binaries/linux64/<modelIdentifier>.so` for FMI 2.0,
//! `binaries/x86_64-linux/` for FMI 3.0), which is the same file for every model and both
//! versions: the `moss-fmi` crate built as a cdylib. No C compiler is involved.
//!
//! Where the runtime library comes from, in this order: `--runtime FILE`, the environment
//! variable `MOSS_FMI_RUNTIME`, then the newest of `libmoss_fmi.so` beside the `moss`
//! executable and `deps/libmoss_fmi.so` there (cargo builds it into `deps/` with `moss`,
//! `moss-cli` depending on `moss-fmi`) that was built from the same sources as this `moss`
//! (`moss_fmi::payload::library_matches`). Without one the command stops with a usage error
//! that says how to build it.
//!
//! Before writing anything the model is compiled and initialized once, so an FMU that would
//! fail at `fmi2Instantiate` or at initialization is reported here, with moss's diagnostics.
//!
//! Exit status: 0 success, 1 model error, 2 usage error (bad options, no runtime library).

use super::common::{load_model, LibArgs};
use moss_codegen::{ExecutableModel, Interpreter};
use moss_fmi::description::{self, Interfaces};
use moss_fmi::payload::{Payload, RESOURCE_FILE};
use moss_frontend::flat::{Causality, FlatModel};
use moss_symbolic::program::VarKind;
use moss_symbolic::CausalProgram;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `moss fmu`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Class name (e.g. `Modelica.Mechanics.Rotational.Examples.CoupledClutches`) or a `.mo`
    /// file (its last top-level class).
    #[arg(value_name = "MODEL_OR_FILE")]
    pub model: String,
    /// The FMU to write [default: `<ModelName>.fmu`, the last part of the class name].
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// FMI version: 2 (the default, read by most importers) or 3.
    #[arg(long = "fmi", default_value = "2", value_name = "VERSION")]
    pub fmi: String,
    /// Interfaces: `me` (Model Exchange), `cs` (Co-Simulation) or `both`.
    #[arg(long, default_value = "both", value_parser = parse_kind)]
    pub kind: Kind,
    /// Change a parameter's default value in the FMU: `-p NAME=VALUE` (repeatable).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = super::simulate::parse_param)]
    pub params: Vec<(String, f64)>,
    /// The FMU runtime library to package [default: `libmoss_fmi.so` beside `moss`].
    #[arg(long, value_name = "FILE")]
    pub runtime: Option<PathBuf>,
    #[command(flatten)]
    pub libs: LibArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    Fmi2,
    Fmi3,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    ModelExchange,
    CoSimulation,
    Both,
}

fn parse_kind(s: &str) -> Result<Kind, String> {
    match s.to_ascii_lowercase().as_str() {
        "me" | "modelexchange" => Ok(Kind::ModelExchange),
        "cs" | "cosimulation" => Ok(Kind::CoSimulation),
        "both" => Ok(Kind::Both),
        _ => Err(format!("unknown FMU kind `{s}`; use me, cs or both")),
    }
}

fn usage(msg: &str, help: &str) -> u8 {
    eprintln!("error: {msg}");
    eprintln!("   = help: {help}");
    super::EXIT_USAGE
}

pub fn run(args: Args) -> u8 {
    let started = Instant::now();
    let (version, runtime) = match check_usage(&args) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let export = match prepare(&args) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let path = args.output.clone().unwrap_or_else(|| {
        PathBuf::from(format!("{}.fmu", short_name(&export.payload.program.name)))
    });
    match write_fmu(&path, &export, &runtime, version) {
        Ok(size) => {
            eprintln!(
                "wrote {} ({:.1} MB, FMI {} {}) in {:.2} s",
                path.display(),
                size as f64 / 1e6,
                match version {
                    Version::Fmi2 => "2.0",
                    Version::Fmi3 => "3.0",
                },
                match args.kind {
                    Kind::ModelExchange => "Model Exchange",
                    Kind::CoSimulation => "Co-Simulation",
                    Kind::Both => "Model Exchange and Co-Simulation",
                },
                started.elapsed().as_secs_f64()
            );
            super::EXIT_OK
        }
        Err(msg) => {
            eprintln!("error: cannot write {}: {msg}", path.display());
            super::EXIT_MODEL_ERROR
        }
    }
}

/// The FMI version and the runtime library's bytes, or the exit code of a usage error.
fn check_usage(args: &Args) -> Result<(Version, Vec<u8>), u8> {
    let version = match args.fmi.as_str() {
        "2" | "2.0" => Version::Fmi2,
        "3" | "3.0" => Version::Fmi3,
        v => {
            return Err(usage(
                &format!("unknown FMI version `{v}`"),
                "use --fmi 2 or --fmi 3",
            ))
        }
    };
    let runtime = runtime_library(args.runtime.as_deref()).map_err(|msg| {
            usage(
                &msg,
                "build moss and its runtime together with `cargo build -p moss-cli` (add --release for a release moss), or name the runtime with --runtime FILE or MOSS_FMI_RUNTIME",
            )
        })?;
    Ok((version, runtime))
}

/// What goes into the FMU besides the runtime.
struct Export {
    payload: Payload,
    interfaces: Interfaces,
    /// `(name, displayUnit)` from the flat model.
    display_units: Vec<(String, String)>,
}

/// Flatten, translate, apply `-p`, and initialize once; printing diagnostics, or returning
/// the exit code.
fn prepare(args: &Args) -> Result<Export, u8> {
    let flat = load_model(&args.libs, &args.model)?;
    let outputs = top_level_outputs(&flat.model);
    let display_units = display_units(&flat.model);
    let mut program = moss_symbolic::translate(&flat.model).map_err(|diags| {
        let text = moss_syntax::diag::render_all(&diags, &flat.model.sources);
        eprint!("{text}");
        super::EXIT_MODEL_ERROR
    })?;
    for w in &program.report.warnings {
        eprintln!("warning: {w}");
    }
    apply_parameters(&mut program, &args.params).map_err(|msg| {
        usage(
            &msg,
            "-p takes independent parameters of the model: NAME=VALUE",
        )
    })?;
    try_initialize(&program).map_err(|msg| {
        eprintln!("error: the model cannot be initialized, so its FMU could not run: {msg}");
        super::EXIT_MODEL_ERROR
    })?;
    let interfaces = Interfaces {
        model_exchange: args.kind != Kind::CoSimulation,
        co_simulation: args.kind != Kind::ModelExchange,
        model_identifier: description::model_identifier(&program.name),
    };
    let payload = Payload::new(program, outputs)
        .map_err(|msg| {
            eprintln!("error: {msg}");
            super::EXIT_MODEL_ERROR
        })?
        .with_interfaces(interfaces.model_exchange, interfaces.co_simulation);
    Ok(Export {
        payload,
        interfaces,
        display_units,
    })
}

/// The last part of a class name (`A.B.C` → `C`), for the default file name.
fn short_name(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// Outputs of the model itself (not of its components): `y`, `y[2]`, but not `a.y`.
fn top_level_outputs(flat: &FlatModel) -> Vec<String> {
    flat.variables
        .iter()
        .filter(|v| v.causality == Causality::Output && is_top_level(&v.name))
        .map(|v| v.name.clone())
        .collect()
}

/// `(name, displayUnit)` of the variables that declare one (the causal program keeps units
/// but not display units; only modelDescription.xml needs them).
fn display_units(flat: &FlatModel) -> Vec<(String, String)> {
    flat.variables
        .iter()
        .filter_map(|v| {
            let d = v.attrs.display_unit.as_ref()?;
            Some((v.name.clone(), d.clone()))
        })
        .collect()
}

/// No `.` outside subscripts.
fn is_top_level(name: &str) -> bool {
    let mut depth = 0;
    for c in name.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            '.' if depth == 0 => return false,
            _ => {}
        }
    }
    true
}

/// `-p NAME=VALUE`: new default values of independent parameters, written into the program
/// (so they are also the start values modelDescription.xml shows).
fn apply_parameters(program: &mut CausalProgram, params: &[(String, f64)]) -> Result<(), String> {
    if params.is_empty() {
        return Ok(());
    }
    // The interpreter's checks give the same messages as `moss simulate -p`.
    let mut probe = Interpreter::new(program.clone()).map_err(|e| e.to_string())?;
    for (name, value) in params {
        probe.set_parameter(name, *value).map_err(|e| e.message)?;
        let (slot, raw) = match program.var_by_name(name) {
            Some(slot) => (slot, *value),
            None => {
                let a = program
                    .aliases
                    .iter()
                    .find(|a| &a.name == name)
                    .ok_or_else(|| format!("no parameter `{name}`"))?;
                (a.target, (value - a.offset) / a.scale)
            }
        };
        let var = &mut program.vars[slot as usize];
        debug_assert_eq!(var.kind, VarKind::Parameter);
        var.start = raw;
    }
    Ok(())
}

/// Compile and initialize the program once, as `fmi2Instantiate` and
/// `fmi2ExitInitializationMode` will.
fn try_initialize(program: &CausalProgram) -> Result<(), String> {
    let mut model = Interpreter::new(program.clone()).map_err(|e| e.to_string())?;
    let t0 = program.experiment.start_time.unwrap_or(0.0);
    model.initialize(t0).map_err(|e| e.to_string())
}

/// The runtime library to package, as bytes (see the module documentation for the search
/// order).
fn runtime_library(explicit: Option<&Path>) -> Result<Vec<u8>, String> {
    if let Some(p) = explicit {
        if !p.is_file() {
            return Err(format!("--runtime {}: no such file", p.display()));
        }
        return load_runtime(p);
    }
    if let Some(p) = std::env::var_os("MOSS_FMI_RUNTIME") {
        let p = PathBuf::from(p);
        if !p.is_file() {
            return Err(format!("MOSS_FMI_RUNTIME={}: no such file", p.display()));
        }
        return load_runtime(&p);
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot locate the moss executable: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    // Cargo writes the library to `deps/` whenever it builds `moss-cli`, and copies it
    // beside the executable only when `moss-fmi` itself is built: one of them may be left
    // from another build, so the newest that was built with this moss is taken.
    let mut candidates: Vec<PathBuf> = [
        dir.join(moss_fmi::RUNTIME_LIBRARY),
        dir.join("deps").join(moss_fmi::RUNTIME_LIBRARY),
    ]
    .into_iter()
    .filter(|p| p.is_file())
    .collect();
    if candidates.is_empty() {
        return Err(format!(
            "the FMU runtime library {} is not beside the moss executable ({})",
            moss_fmi::RUNTIME_LIBRARY,
            dir.display()
        ));
    }
    let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    candidates.sort_by_key(|p| std::cmp::Reverse(modified(p)));
    let mut last_error = String::new();
    for p in &candidates {
        match load_runtime(p) {
            Ok(bytes) => return Ok(bytes),
            Err(e) => last_error = e,
        }
    }
    Err(last_error)
}

/// The runtime library's bytes, if it was built from the same sources as this `moss` (the
/// payload has no schema: see `moss_fmi::payload::FINGERPRINT`).
fn load_runtime(path: &Path) -> Result<Vec<u8>, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("cannot read the runtime library {}: {e}", path.display()))?;
    if moss_fmi::payload::library_matches(&bytes) {
        Ok(bytes)
    } else {
        Err(format!(
            "the runtime library {} was not built from the same sources as this moss",
            path.display()
        ))
    }
}

/// Write the FMU archive; returns its size in bytes. The archive is written beside `path`
/// and renamed at the end, so a failure never leaves a truncated FMU behind.
fn write_fmu(
    path: &Path,
    export: &Export,
    library: &[u8],
    version: Version,
) -> Result<u64, String> {
    let payload = &export.payload;
    let ifs = &export.interfaces;
    let mut table = moss_fmi::variables::table(&payload.program, &payload.outputs);
    let display_units = export.display_units.iter();
    table.set_display_units(display_units.map(|(n, d)| (n.as_str(), d.as_str())));
    let initial = description::initial_unknowns(&table);
    let deps = moss_fmi::deps::analyse(&payload.program, &table, &initial);
    let (xml, platform) = match version {
        Version::Fmi2 => (description::fmi2(payload, &table, &deps, ifs), "linux64"),
        Version::Fmi3 => (
            description::fmi3(payload, &table, &deps, ifs),
            "x86_64-linux",
        ),
    };
    let model = payload.to_bytes()?;
    let entries: [(String, &[u8]); 3] = [
        ("modelDescription.xml".into(), xml.as_bytes()),
        (
            format!("binaries/{platform}/{}.so", ifs.model_identifier),
            library,
        ),
        (format!("resources/{RESOURCE_FILE}"), &model),
    ];
    let partial = path.with_extension("fmu.part");
    let written = write_zip(&partial, &entries).and_then(|size| {
        std::fs::rename(&partial, path).map_err(|e| e.to_string())?;
        Ok(size)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

/// A zip archive of `entries` (deflated) at `path`; returns its size in bytes.
fn write_zip(path: &Path, entries: &[(String, &[u8])]) -> Result<u64, String> {
    let file = std::fs::File::create(path).map_err(|e| e.to_string())?;
    let mut zip = zip::ZipWriter::new(file);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        zip.start_file(name.as_str(), opts)
            .map_err(|e| e.to_string())?;
        zip.write_all(bytes).map_err(|e| e.to_string())?;
    }
    let file = zip.finish().map_err(|e| e.to_string())?;
    file.metadata().map(|m| m.len()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_names() {
        assert!(is_top_level("y"));
        assert!(is_top_level("y[2]"));
        assert!(is_top_level("y[a.b]"));
        assert!(!is_top_level("a.y"));
        assert_eq!(short_name("A.B.Model"), "Model");
    }

    #[test]
    fn kinds_parse() {
        assert_eq!(parse_kind("ME"), Ok(Kind::ModelExchange));
        assert_eq!(parse_kind("cs"), Ok(Kind::CoSimulation));
        assert!(parse_kind("hybrid").is_err());
    }
}
