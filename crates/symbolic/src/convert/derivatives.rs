//! Function annotations the symbolic stage differentiates and solves with: the
//! `derivative` annotations (first and second order, `noDerivative`/`zeroDerivative`), the
//! derivatives generated for functions without one ([`crate::autodiff`]), and the
//! `inverse` annotations.

use super::Conv;
use moss_frontend::flat::ScalarType;
use rustc_hash::FxHashMap as HashMap;

/// Does a `noDerivative`/`zeroDerivative` list name the function input `input`? A record
/// input is one flat input per field (`properties.rho`), and the annotation names the
/// record (`noDerivative = properties`): the name covers all its fields.
fn names_input(list: &[String], input: &str) -> bool {
    list.iter().any(|n| {
        input
            .strip_prefix(n.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
    })
}

/// The inverses offered by the `inverse` annotations of `functions`, with the arguments of
/// each inverse call mapped to the original call's arguments (one flat argument per record
/// field, as calls are flattened) or its value. An entry is left out where the mapping
/// fails: a function with more than one output or a non-scalar one, an input that is not a
/// Real scalar, an argument that is not a formal of the function, an inverse input left
/// to its default.
pub(super) fn inverse_annotations(
    functions: &std::collections::BTreeMap<String, moss_frontend::flat::Function>,
) -> HashMap<String, Vec<crate::ir::InverseFn>> {
    use crate::ir::{InverseArg, InverseFn};
    // the formal an input belongs to: `state` for `state.p`, `X` for `X[1]`
    fn formal(name: &str) -> &str {
        name.split(['.', '[']).next().unwrap_or(name)
    }
    let mut out: HashMap<String, Vec<InverseFn>> = HashMap::default();
    for f in functions.values() {
        let [output] = &f.outputs[..] else { continue };
        if output.ty != ScalarType::Real || !output.dims.is_empty() {
            continue;
        }
        for ann in &f.inverses {
            let Some(g) = functions.get(&ann.function) else {
                continue;
            };
            let Some(input) = f
                .inputs
                .iter()
                .position(|i| i.name == ann.input && i.ty == ScalarType::Real && i.dims.is_empty())
            else {
                continue;
            };
            // the inverse's inputs grouped by formal, in order
            let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
            for (k, gi) in g.inputs.iter().enumerate() {
                match groups.last_mut() {
                    Some((n, ks)) if *n == formal(&gi.name) => ks.push(k),
                    _ => groups.push((formal(&gi.name), vec![k])),
                }
            }
            let sources = |name: &str| -> Vec<InverseArg> {
                if name == output.name {
                    return vec![InverseArg::Output];
                }
                (0..f.inputs.len())
                    .filter(|&j| formal(&f.inputs[j].name) == name)
                    .map(InverseArg::Input)
                    .collect()
            };
            let mut args: Vec<Option<InverseArg>> = vec![None; g.inputs.len()];
            let mut ok = true;
            for (k, (named, name)) in ann.args.iter().enumerate() {
                let group = match named {
                    None => groups.get(k),
                    Some(n) => groups.iter().find(|(g, _)| g == n),
                };
                let src = sources(name);
                match group {
                    Some((_, slots)) if slots.len() == src.len() => {
                        for (&slot, s) in slots.iter().zip(src) {
                            args[slot] = Some(s);
                        }
                    }
                    _ => ok = false,
                }
            }
            let Some(args) = args.into_iter().collect::<Option<Vec<_>>>() else {
                continue;
            };
            if ok {
                out.entry(f.name.clone()).or_default().push(InverseFn {
                    input,
                    function: ann.function.clone(),
                    args,
                });
            }
        }
    }
    out
}

impl<'a> Conv<'a> {
    pub(super) fn collect_derivative_annotations(&mut self) {
        let mut fder = HashMap::default();
        let mut second = Vec::new();
        // First derivatives of other functions: an annotation on them names the derivative
        // of the derivative, whose extra inputs are the derivatives of their `du` inputs
        // only (see `second_derivatives_declared_on_the_first`), whatever its `order` says.
        let firsts: std::collections::HashSet<&str> = self
            .flat
            .functions
            .values()
            .filter_map(|f| {
                let d = f.derivatives.iter().find(|d| d.order == 1)?;
                (d.function != f.name).then_some(d.function.as_str())
            })
            .collect();
        for (name, f) in &self.flat.functions {
            if firsts.contains(name.as_str()) {
                continue;
            }
            let Some(ann) = f.derivatives.iter().find(|d| d.order == 1) else {
                continue;
            };
            let mask: Vec<bool> = f
                .inputs
                .iter()
                .map(|i| {
                    i.ty == ScalarType::Real
                        && !names_input(&ann.no_derivative, &i.name)
                        && !names_input(&ann.zero_derivative, &i.name)
                })
                .collect();
            // `derivative(order=2) = f_der2`: the derivative of f_der(u, du) is
            // f_der2(u, du, ddu), i.e. only the `du` inputs get a new derivative argument
            if let Some(ann2) = f.derivatives.iter().find(|d| d.order == 2) {
                let n_du = mask.iter().filter(|&&b| b).count();
                let mask2 = vec![false; f.inputs.len()]
                    .into_iter()
                    .chain(std::iter::repeat_n(true, n_du))
                    .collect();
                second.push((ann.function.clone(), ann2.function.clone(), mask2));
            }
            fder.insert(name.clone(), (ann.function.clone(), mask));
        }
        for (f_der, f_der2, mask2) in second {
            fder.entry(f_der).or_insert((f_der2, mask2));
        }
        self.second_derivatives_declared_on_the_first(&mut fder);
        self.m.arena.late_inline = std::sync::Arc::new(crate::inline::late_inline_functions(
            &self.flat.functions,
            &fder,
        ));
        self.m.arena.fder = std::sync::Arc::new(fder);
    }

    /// Derivatives of the algorithm functions without a `derivative` annotation
    /// ([`crate::autodiff`]), registered with the annotated ones. The model's algorithm
    /// sections go with them as functions ([`crate::algorithm_functions`]), for the ODE
    /// Jacobian.
    pub(super) fn generate_function_derivatives(&mut self) {
        let annotated = (*self.m.arena.fder).clone();
        let (sections, not_functions) = crate::algorithm_functions::algorithm_functions(&self.m);
        let mut generated =
            crate::autodiff::generate_derivatives_with(&self.flat.functions, sections, &annotated);
        generated.failures.extend(not_functions);
        let mut fder = annotated;
        fder.extend(generated.fder);
        self.m.arena.fder_outputs =
            std::sync::Arc::new(crate::autodiff::derivative_output_indices(
                &self.flat.functions,
                &generated.functions,
                &fder,
            ));
        self.m.arena.direction_args = std::sync::Arc::new(
            fder.values()
                .map(|(fd, mask)| (fd.clone(), mask.len()))
                .collect(),
        );
        self.m.arena.fder = std::sync::Arc::new(fder);
        self.m.arena.fder_zero_required = std::sync::Arc::new(generated.zero_required);
        self.m.arena.fder_failures = std::sync::Arc::new(generated.failures);
        self.m.arena.generated = std::sync::Arc::new(generated.functions);
    }

    /// Some libraries put `derivative(order=2) = f_der2` on the first derivative `f_der`
    /// itself rather than on `f`. Read that as the derivative of `f_der`: its inputs beyond
    /// those of `f` (the `du` arguments) get a derivative argument each.
    fn second_derivatives_declared_on_the_first(
        &self,
        fder: &mut HashMap<String, (String, Vec<bool>)>,
    ) {
        let firsts: Vec<(String, usize)> = self
            .flat
            .functions
            .values()
            .filter_map(|f| {
                let ann = f.derivatives.iter().find(|d| d.order == 1)?;
                Some((ann.function.clone(), f.inputs.len()))
            })
            .collect();
        for (f_der, n_original) in firsts {
            if fder.contains_key(&f_der) {
                continue;
            }
            let Some(fd) = self.flat.functions.get(&f_der) else {
                continue;
            };
            let Some(ann) = fd.derivatives.iter().min_by_key(|d| d.order) else {
                continue;
            };
            let mask: Vec<bool> = fd
                .inputs
                .iter()
                .enumerate()
                .map(|(i, inp)| {
                    i >= n_original
                        && inp.ty == ScalarType::Real
                        && !names_input(&ann.no_derivative, &inp.name)
                        && !names_input(&ann.zero_derivative, &inp.name)
                })
                .collect();
            fder.insert(f_der, (ann.function.clone(), mask));
        }
    }
}
