//! `moss translate MODEL_OR_FILE`: flatten a model, translate it to a causal program and
//! print its structure: states and how they were chosen, the index before reduction, dummy
//! derivatives, algebraic loops before/after tearing, zero crossings, time events and the
//! time each pass took. `--dump` also prints every block.

use moss_frontend::{flatten_model, LoadOptions};
use moss_symbolic::program::{CausalProgram, JacobianSource, VarKind};
use moss_syntax::diag::render_all;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `moss translate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Model: a full class name found on the library path, or a `.mo` file (its last class).
    pub model: String,
    /// Library directory to search before MODELICAPATH and the bundled library (repeatable).
    #[arg(long = "lib", value_name = "DIR")]
    pub libs: Vec<PathBuf>,
    /// Print the blocks of the causal program (parameters, initialization, simulation).
    #[arg(long)]
    pub dump: bool,
}

pub fn run(args: Args) -> u8 {
    let opts = LoadOptions {
        libs: args.libs.clone(),
        use_modelicapath: true,
        use_bundled: true,
    };
    let t = Instant::now();
    let flat = match flatten_model(&opts, &args.model) {
        Ok(f) => f,
        Err(fail) => {
            eprint!("{}", render_all(&fail.diagnostics, &fail.sources));
            return super::EXIT_MODEL_ERROR;
        }
    };
    let flatten_secs = t.elapsed().as_secs_f64();
    let sources = flat.model.sources.clone();
    if !flat.warnings.is_empty() {
        eprint!("{}", render_all(&flat.warnings, &sources));
    }
    let program = match moss_symbolic::translate(&flat.model) {
        Ok(p) => p,
        Err(diags) => {
            eprint!("{}", render_all(&diags, &sources));
            return super::EXIT_MODEL_ERROR;
        }
    };
    print!("{}", report(&program, flatten_secs));
    if args.dump {
        println!();
        print!("{}", moss_symbolic::dump::program_text(&program));
    }
    super::EXIT_OK
}

fn count(p: &CausalProgram, kind: VarKind) -> usize {
    p.vars.iter().filter(|v| v.kind == kind).count()
}

/// How the ODE Jacobian is computed, with its size.
fn jacobian_line(p: &CausalProgram) -> String {
    let nnz = p.jacobian_pattern.len();
    let n = p.states.len();
    match (&p.report.jacobian, &p.ode_jacobian) {
        (JacobianSource::Symbolic, Some(j)) => format!(
            "ODE Jacobian: {n}x{n}, {nnz} structural nonzeros, symbolic (tangent program of {} blocks)",
            j.blocks.len()
        ),
        (JacobianSource::FiniteDifferences(why), _) => format!(
            "ODE Jacobian: {n}x{n}, {nnz} structural nonzeros, finite differences: {why}"
        ),
        (JacobianSource::Symbolic, None) => {
            format!("ODE Jacobian: {n}x{n}, {nnz} structural nonzeros")
        }
    }
}

/// The human-readable summary of a translation.
fn report(p: &CausalProgram, flatten_secs: f64) -> String {
    let r = &p.report;
    let mut s = String::new();
    let _ = writeln!(s, "model {}", p.name);
    let _ = writeln!(
        s,
        "  {} slots: {} states, {} algebraic, {} discrete, {} parameters ({} dependent), {} inputs, {} tangent; {} aliases eliminated",
        p.vars.len(),
        p.states.len(),
        count(p, VarKind::Algebraic),
        count(p, VarKind::Discrete),
        count(p, VarKind::Parameter) + count(p, VarKind::Constant),
        count(p, VarKind::DependentParameter),
        count(p, VarKind::Input),
        count(p, VarKind::Tangent),
        p.aliases.len()
    );
    let _ = writeln!(
        s,
        "  blocks: {} simulation, {} initialization, {} parameter",
        p.blocks.len(),
        p.init_blocks.len(),
        p.parameter_blocks.len()
    );
    let _ = writeln!(s, "index before reduction: {}", r.index_before_reduction);
    if !r.hidden_constraints.is_empty() {
        let _ = writeln!(
            s,
            "hidden constraints ({}, from linear dependencies): {}",
            r.hidden_constraints.len(),
            r.hidden_constraints.join("; ")
        );
    }
    if r.dummy_derivatives.is_empty() {
        let _ = writeln!(s, "dummy derivatives: none");
    } else {
        let _ = writeln!(
            s,
            "dummy derivatives ({}): {}",
            r.dummy_derivatives.len(),
            r.dummy_derivatives.join(", ")
        );
    }
    for (i, set) in r.state_sets.iter().enumerate() {
        let _ = writeln!(
            s,
            "state set {} (dynamic state selection): {} of {} chosen at run time by `{}`: {}",
            i + 1,
            set.states.len(),
            set.candidates.len(),
            set.mask,
            set.candidates.join(", ")
        );
        for c in &set.constraints {
            let _ = writeln!(s, "  constraint: {c}");
        }
    }
    if !r.evaluated_parameters.is_empty() {
        let _ = writeln!(
            s,
            "evaluated parameters ({}), constants from now on:",
            r.evaluated_parameters.len()
        );
        for ep in &r.evaluated_parameters {
            let _ = writeln!(s, "  {} = {}: {}", ep.name, ep.value_text(), ep.why);
        }
    }
    let _ = writeln!(s, "states ({}):", r.state_choices.len());
    for (name, why) in &r.state_choices {
        let _ = writeln!(s, "  {name}: {why}");
    }
    let loops = r.loops_before_tearing.len();
    if loops == 0 {
        let _ = writeln!(s, "algebraic loops: none");
    } else {
        let before: Vec<String> = r
            .loops_before_tearing
            .iter()
            .map(|n| n.to_string())
            .collect();
        let after: Vec<String> = r
            .loops_after_tearing
            .iter()
            .map(|n| n.to_string())
            .collect();
        let _ = writeln!(
            s,
            "algebraic loops: {loops}; sizes before tearing [{}], after tearing [{}]",
            before.join(", "),
            after.join(", ")
        );
    }
    let _ = writeln!(s, "{}", jacobian_line(p));
    let time_events = p
        .zero_crossings
        .iter()
        .filter(|z| z.time_event.is_some())
        .count();
    let _ = writeln!(
        s,
        "zero crossings: {} ({} of them time events); samples: {}",
        p.zero_crossings.len(),
        time_events,
        p.samples.len()
    );
    for (i, z) in p.zero_crossings.iter().enumerate() {
        let mark = if z.time_event.is_some() {
            "  [time event]"
        } else {
            ""
        };
        let _ = writeln!(s, "  zc{i}: {}{mark}", z.description);
    }
    let _ = writeln!(s, "pass times:");
    let _ = writeln!(s, "  {:<30} {:.4} s", "flatten", flatten_secs);
    let mut total = flatten_secs;
    for (pass, secs) in &r.pass_times {
        let _ = writeln!(s, "  {pass:<30} {secs:.4} s");
        total += secs;
    }
    let _ = writeln!(s, "  {:<30} {:.4} s", "total", total);
    if !r.warnings.is_empty() {
        let _ = writeln!(s, "warnings:");
        for w in &r.warnings {
            let _ = writeln!(s, "  {w}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_lists_states_passes_and_loops() {
        let flat = moss_symbolic::bench_support::chain(3);
        let p = moss_symbolic::translate(&flat).expect("chain translates");
        let text = report(&p, 0.0);
        assert!(text.contains("states (6):"), "{text}");
        assert!(text.contains("mass[1].s: appears differentiated"), "{text}");
        assert!(text.contains("index before reduction: 1"), "{text}");
        assert!(text.contains("algebraic loops: none"), "{text}");
        assert!(text.contains("alias elimination"), "{text}");
        // der(s_i) = v_i: 3 entries; der(v_i) reads s_(i-1), s_i, s_(i+1): 2 + 3 + 2
        assert!(
            text.contains("ODE Jacobian: 6x6, 10 structural nonzeros, symbolic"),
            "{text}"
        );
    }
}
