//! Array-valued function calls used inside larger expressions (`C = inv(A) * B`).
//!
//! The expander scalarizes such a call into its elements `[](f(x), i, j)`, which later
//! stages cannot evaluate one by one. Each distinct call gets an auxiliary array variable
//! (`$array1`) with one equation binding the whole call, and its elements are read from
//! that variable instead. Equations and initial equations of the model are handled (the
//! auxiliary arrays of initial equations are `fixed = false` parameters, computed by
//! initialization); in algorithms the order of statements matters, so an element call
//! there stays an error.

use crate::flat::{Equation, Expr, FlatModel, Origin, ScalarType, Variability, Variable};
use crate::flatten::{is_index_call, names_array};
use rustc_hash::FxHashMap as HashMap;

/// One lifted call: its auxiliary variable and the dimensions of its result.
struct Lifted {
    name: String,
    call: Expr,
    dims: Vec<usize>,
    origin: Origin,
}

/// Replace elements of array-valued calls in equations by auxiliary variables. `dims` gives
/// the result dimensions recorded by the expander, keyed by the printed call.
pub fn lift_array_calls(model: &mut FlatModel, dims: &HashMap<String, Vec<usize>>) {
    lift_start_calls(model);
    let mut lifted: Vec<Lifted> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::default();
    for eq in model.equations.iter_mut() {
        lift_in_equation(eq, dims, &mut lifted, &mut by_key);
    }
    // Calls inside initial equations get auxiliary arrays of their own, computed by
    // initialization only: `fixed = false` parameters.
    let in_equations = lifted.len();
    let mut init_by_key: HashMap<String, usize> = HashMap::default();
    for eq in model.initial_equations.iter_mut() {
        lift_in_equation(eq, dims, &mut lifted, &mut init_by_key);
    }
    for (k, l) in lifted.into_iter().enumerate() {
        let initial = k >= in_equations;
        let ty = result_type(model, &l.call);
        let variability = if initial {
            Variability::Parameter
        } else if ty == ScalarType::Real {
            Variability::Continuous
        } else {
            Variability::Discrete
        };
        let attrs = crate::flat::Attributes {
            fixed: initial.then_some(false),
            ..Default::default()
        };
        for idx in crate::ctx::index_tuples(&l.dims) {
            model.variables.push(Variable {
                name: format!("{}{}", l.name, crate::ctx::format_indices(&idx)),
                ty: ty.clone(),
                variability,
                causality: crate::flat::Causality::Internal,
                binding: None,
                attrs: attrs.clone(),
                is_flow: false,
                is_stream: false,
                is_protected: true,
                evaluate: false,
                description: String::new(),
                origin: l.origin.clone(),
            });
        }
        let eq = Equation::Equal {
            lhs: names_array(&l.name, &l.dims, &mut Vec::new()),
            rhs: l.call,
            origin: l.origin,
        };
        if initial {
            model.initial_equations.push(eq);
        } else {
            model.equations.push(eq);
        }
    }
}

/// Start values that are elements of one array-valued call the frontend could not evaluate
/// (`discrete Integer state[2](start = initialState(seed))`, an external function) become
/// one initial equation for the whole array: `pre(state) = initialState(seed)` for discrete
/// variables (their start value is their `pre` value at initialization), `x = f(...)` for
/// variables with `fixed = true`; for the others the start value was only a guess and is
/// dropped.
fn lift_start_calls(model: &mut FlatModel) {
    // call (printed) -> (call, [(element index, variable name, discrete, fixed)])
    type Element = (Vec<usize>, String, bool, bool);
    let mut groups: Vec<(Expr, Vec<Element>, Origin)> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::default();
    for v in model.variables.iter_mut() {
        let Some(Expr::Call { func, args }) = &v.attrs.start else {
            continue;
        };
        if func != "[]" {
            continue;
        }
        let Some((call, idx)) = args.split_first() else {
            continue;
        };
        let indices: Option<Vec<usize>> = idx
            .iter()
            .map(|i| match i {
                Expr::Integer(k) if *k >= 1 => Some(*k as usize),
                _ => None,
            })
            .collect();
        let Some(indices) = indices else { continue };
        let key = crate::print::print_expr(call);
        let k = *by_key.entry(key).or_insert_with(|| {
            groups.push((call.clone(), Vec::new(), v.origin.clone()));
            groups.len() - 1
        });
        let discrete = v.variability == Variability::Discrete || !matches!(v.ty, ScalarType::Real);
        groups[k].1.push((
            indices,
            v.name.clone(),
            discrete,
            v.attrs.fixed == Some(true),
        ));
        v.attrs.start = None;
    }
    for (call, mut elements, origin) in groups {
        elements.sort();
        // only a call whose every element is a start value, in order, can be equated whole
        let whole = elements
            .iter()
            .enumerate()
            .all(|(i, (idx, ..))| idx.len() == 1 && idx[0] == i + 1);
        let all_discrete = elements.iter().all(|e| e.2);
        let all_fixed = elements.iter().all(|e| e.3);
        if !whole || !(all_discrete || all_fixed) {
            continue;
        }
        let target = |name: &str| {
            let v = Expr::Var {
                name: name.to_string(),
                subscripts: Vec::new(),
            };
            if all_discrete {
                Expr::Call {
                    func: "pre".into(),
                    args: vec![v],
                }
            } else {
                v
            }
        };
        model.initial_equations.push(Equation::Equal {
            lhs: Expr::Array(elements.iter().map(|e| target(&e.1)).collect()),
            rhs: call,
            origin,
        });
    }
}

fn lift_in_equation(
    eq: &mut Equation,
    dims: &HashMap<String, Vec<usize>>,
    lifted: &mut Vec<Lifted>,
    by_key: &mut HashMap<String, usize>,
) {
    match eq {
        Equation::Equal { lhs, rhs, origin } => {
            // `x = f(y)` with the whole call on one side stays; only elements of other calls
            // inside its arguments (`f(a + g(b))` with `g` array-valued) are lifted.
            let origin = origin.clone();
            for e in [lhs, rhs] {
                replace_elements(e, dims, lifted, by_key, &origin);
            }
        }
        Equation::If {
            branches,
            else_,
            origin,
        } => {
            let origin = origin.clone();
            for (c, body) in branches.iter_mut() {
                replace_elements(c, dims, lifted, by_key, &origin);
                for e in body {
                    lift_in_equation(e, dims, lifted, by_key);
                }
            }
            for e in else_ {
                lift_in_equation(e, dims, lifted, by_key);
            }
        }
        Equation::Assert {
            condition,
            message,
            origin,
            ..
        } => {
            let origin = origin.clone();
            replace_elements(condition, dims, lifted, by_key, &origin);
            replace_elements(message, dims, lifted, by_key, &origin);
        }
        _ => {}
    }
}

fn replace_elements(
    e: &mut Expr,
    dims: &HashMap<String, Vec<usize>>,
    lifted: &mut Vec<Lifted>,
    by_key: &mut HashMap<String, usize>,
    origin: &Origin,
) {
    if is_index_call(e) {
        let Expr::Call { args, .. } = &*e else {
            return;
        };
        let Some((call, idx)) = args.split_first() else {
            return;
        };
        // Elements of other array-valued calls in this call's arguments are lifted first.
        let mut call = call.clone();
        crate::walk::exprs_mut(&mut call, &mut |x| {
            replace_elements(x, dims, lifted, by_key, origin)
        });
        let indices: Option<Vec<usize>> = idx
            .iter()
            .map(|i| match i {
                Expr::Integer(k) if *k >= 1 => Some(*k as usize),
                _ => None,
            })
            .collect();
        let Some(indices) = indices else { return };
        let key = crate::print::print_expr(&call);
        let Some(d) = dims.get(&crate::print::print_expr(&args[0])) else {
            return;
        };
        if d.len() != indices.len() || indices.iter().zip(d).any(|(i, n)| i > n) {
            return;
        }
        let k = *by_key.entry(key).or_insert_with(|| {
            lifted.push(Lifted {
                name: format!("$array{}", lifted.len() + 1),
                call,
                dims: d.clone(),
                origin: origin.clone(),
            });
            lifted.len() - 1
        });
        *e = Expr::Var {
            name: format!("{}{}", lifted[k].name, crate::ctx::format_indices(&indices)),
            subscripts: Vec::new(),
        };
        return;
    }
    crate::walk::exprs_mut(e, &mut |x| {
        replace_elements(x, dims, lifted, by_key, origin)
    });
}

/// The scalar type of the (first) output of the called function; Real if unknown.
fn result_type(model: &FlatModel, call: &Expr) -> ScalarType {
    let Expr::Call { func, .. } = call else {
        return ScalarType::Real;
    };
    model
        .functions
        .get(func)
        .and_then(|f| f.outputs.first())
        .map_or(ScalarType::Real, |o| o.ty.clone())
}
