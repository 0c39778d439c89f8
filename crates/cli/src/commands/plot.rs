//! `moss plot`: draw variables of one or more result files into an SVG or PNG image.
//!
//! Both `moss plot a.csv b.mat --vars x y -o out.svg` and `moss plot a.csv x y -o out.png`
//! work: positional arguments ending in `.csv` or `.mat` are result files, the others variable
//! names. With several results the legend reads `file:variable`.

use super::{EXIT_MODEL_ERROR, EXIT_OK, EXIT_USAGE};
use moss_results::plot::{value_label, Curve, Plot};
use moss_results::{read_result, Format, SimResult};
use std::path::{Path, PathBuf};

/// Arguments of `moss plot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Result files (.csv, .mat) and variable names, in any order.
    #[arg(required = true)]
    pub inputs: Vec<String>,
    /// Variables to plot (in addition to variable names among the inputs).
    #[arg(long, num_args = 1.., value_name = "VAR")]
    pub vars: Vec<String>,
    /// Output image: .svg or .png.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Plot title (default: the variable names).
    #[arg(long)]
    pub title: Option<String>,
    /// Image size in pixels, WIDTHxHEIGHT.
    #[arg(long, default_value = "1000x600")]
    pub size: String,
}

pub fn run(args: Args) -> u8 {
    match plot(&args) {
        Ok(()) => EXIT_OK,
        Err((code, message)) => {
            eprintln!("error: {message}");
            code
        }
    }
}

type Failure = (u8, String);

fn plot(args: &Args) -> Result<(), Failure> {
    let (files, mut vars) = split_inputs(&args.inputs);
    vars.extend(args.vars.iter().cloned());
    if files.is_empty() {
        return Err((
            EXIT_USAGE,
            "no result file given (arguments ending in .csv or .mat)".to_string(),
        ));
    }
    let (width, height) = parse_size(&args.size)?;
    let results = files
        .iter()
        .map(|f| load(f).map(|r| (f.clone(), r)))
        .collect::<Result<Vec<_>, _>>()?;
    if vars.is_empty() {
        return Err((
            EXIT_USAGE,
            format!(
                "no variable given; {} has: {}",
                files[0].display(),
                sample_names(&results[0].1)
            ),
        ));
    }
    let mut plot = Plot::new(
        args.title.clone().unwrap_or_else(|| vars.join(", ")),
        value_label(&common_unit(&results, &vars)),
    );
    plot.width = width;
    plot.height = height;
    for (file, result) in &results {
        for var in &vars {
            let values = result
                .series(var)
                .ok_or_else(|| (EXIT_MODEL_ERROR, unknown_variable(file, result, var)))?;
            let label = curve_label(file, var, results.len() > 1);
            plot.curves
                .push(Curve::new(label, result.time().to_vec(), values));
        }
    }
    plot.save(&args.output).map_err(|e| (EXIT_USAGE, e))?;
    println!("wrote {}", args.output.display());
    Ok(())
}

/// Result files (by extension) and variable names among the positional arguments.
fn split_inputs(inputs: &[String]) -> (Vec<PathBuf>, Vec<String>) {
    let (files, vars): (Vec<&String>, Vec<&String>) = inputs
        .iter()
        .partition(|i| Format::from_path(Path::new(i)).is_some());
    (
        files.into_iter().map(PathBuf::from).collect(),
        vars.into_iter().cloned().collect(),
    )
}

fn parse_size(size: &str) -> Result<(u32, u32), Failure> {
    let parsed = size
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)));
    match parsed {
        Some((w, h)) if (100..=10000).contains(&w) && (100..=10000).contains(&h) => Ok((w, h)),
        _ => Err((
            EXIT_USAGE,
            format!("--size must be WIDTHxHEIGHT, each 100..10000 pixels, got `{size}`"),
        )),
    }
}

fn load(path: &Path) -> Result<SimResult, Failure> {
    if !path.exists() {
        return Err((EXIT_USAGE, format!("{}: no such file", path.display())));
    }
    read_result(path).map_err(|e| (EXIT_MODEL_ERROR, e.to_string()))
}

/// The unit shared by all plotted variables, or empty when unknown or mixed.
fn common_unit(results: &[(PathBuf, SimResult)], vars: &[String]) -> String {
    let mut units = results
        .iter()
        .flat_map(|(_, r)| vars.iter().map(move |v| r.unit(v)))
        .filter(|u| !u.is_empty());
    let Some(first) = units.next() else {
        return String::new();
    };
    if units.all(|u| u == first) {
        first.to_string()
    } else {
        String::new()
    }
}

fn curve_label(file: &Path, var: &str, several_results: bool) -> String {
    if several_results {
        let name = file.file_name().map_or_else(
            || file.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        format!("{name}:{var}")
    } else {
        var.to_string()
    }
}

fn unknown_variable(file: &Path, result: &SimResult, var: &str) -> String {
    let similar = similar_names(result.names(), var);
    let hint = if similar.is_empty() {
        format!("it has: {}", sample_names(result))
    } else {
        format!("did you mean: {}?", similar.join(", "))
    };
    format!("{}: no variable `{var}`; {hint}", file.display())
}

/// Names that are probably what the user meant by `var`: the closest by edit distance (a typo),
/// then those with the same last component (`gear.w` for `w`), then the members of the same
/// component (`ball.s` for `ball.height`). Short names are never suggested because they
/// happen to be contained in `var`.
fn similar_names<'a>(names: impl Iterator<Item = &'a str>, var: &str) -> Vec<&'a str> {
    let names: Vec<&str> = names.collect();
    // one edit per four characters: "bal.v" finds "ball.v", "w" does not find "e"
    let budget = var.chars().count() / 4;
    let mut typos: Vec<(usize, &str)> = names
        .iter()
        .map(|n| (strsim::levenshtein(n, var), *n))
        .filter(|(d, _)| *d > 0 && *d <= budget)
        .collect();
    typos.sort();
    let mut out: Vec<&str> = typos.into_iter().map(|(_, n)| n).collect();
    let last = var.rsplit('.').next().unwrap_or(var);
    out.extend(names.iter().filter(|n| n.rsplit('.').next() == Some(last)));
    if let Some((prefix, _)) = var.rsplit_once('.') {
        let members = format!("{prefix}.");
        out.extend(names.iter().filter(|n| n.starts_with(&members)));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|n| *n != var && seen.insert(*n));
    out.truncate(5);
    out
}

/// Up to 10 variable names of a result, for error messages.
fn sample_names(result: &SimResult) -> String {
    let names: Vec<&str> = result.names().take(10).collect();
    let more = result.vars().len().saturating_sub(names.len());
    if more > 0 {
        format!("{} (and {more} more)", names.join(", "))
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_typos_same_leaf_or_siblings_not_substrings() {
        let names = ["e", "ball.s", "ball.v", "gear.w", "inertia1.w", "h"];
        let similar = |var| similar_names(names.iter().copied(), var);
        assert_eq!(similar("ball.height"), ["ball.s", "ball.v"]);
        assert_eq!(similar("bal.v"), ["ball.v"]);
        assert_eq!(similar("w"), ["gear.w", "inertia1.w"]);
        assert!(similar("pressure").is_empty());
    }

    #[test]
    fn inputs_split_by_extension() {
        let inputs = ["a.csv", "x", "B.MAT", "y[2]"].map(String::from);
        let (files, vars) = split_inputs(&inputs);
        assert_eq!(files, [PathBuf::from("a.csv"), PathBuf::from("B.MAT")]);
        assert_eq!(vars, ["x", "y[2]"]);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("800x400").unwrap(), (800, 400));
        assert!(parse_size("800").is_err());
        assert!(parse_size("0x0").is_err());
    }
}
