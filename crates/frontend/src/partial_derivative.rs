//! Partial derivatives of functions (spec 12.7.2): `function f_T = der(f, T);` declares a
//! function with the inputs of `f` whose outputs are the partial derivatives of `f`'s
//! outputs with respect to the scalar Real input `T`.
//!
//! The frontend does not differentiate: the body of `f_T` calls `f`'s derivative function
//! (named by [`flat::generated_derivative_name`]), which the symbolic stage generates by
//! differentiating `f`'s algorithm (`moss_symbolic::autodiff`), with direction 1 for `T` and
//! 0 for every other Real input. Translation-time evaluation does not know that function, so
//! calls of `f_T` are kept for run time.

use crate::ctx::Flattener;
use crate::flat::{self, BinaryOp, Expr, Function, FunctionBody, ScalarType, Statement};
use crate::flatten::origin;
use crate::inst::*;
use crate::loader::ClassId;
use moss_syntax::ast;

impl<'a> Flattener<'a> {
    /// For a class `function f_T = der(f, T)`, the function `f` it differentiates.
    pub(crate) fn partial_derivative_of(&self, id: ClassId) -> Option<ClassId> {
        let ast::ClassSpecifier::Der { function, .. } = &self.lib().get(id).def.specifier else {
            return None;
        };
        self.lk.short_class_base(id, function)
    }

    /// The class whose inputs a call of `id` takes: `id` itself, or for a partial
    /// derivative the function it differentiates, through any chain (`der(der(f, x), y)`).
    pub(crate) fn signature_class(&self, id: ClassId) -> ClassId {
        let mut c = id;
        for _ in 0..16 {
            match self.partial_derivative_of(c) {
                Some(f) => c = f,
                None => break,
            }
        }
        c
    }

    /// The flat function of `function name = der(f, x)`.
    pub(crate) fn translate_partial_derivative(
        &self,
        name: &str,
        id: ClassId,
        of: &ast::Name,
        wrt: &[ast::Ident],
    ) -> Res<Function> {
        let Some(fid) = self.lk.short_class_base(id, of) else {
            return err(of.span, format!("unknown function `{of}`"));
        };
        if !matches!(
            self.lk.kind(self.lk.follow_short_class(fid)),
            ast::ClassKind::Function { .. }
        ) {
            return err(
                of.span,
                format!("`{of}` is not a function, so it has no partial derivative"),
            );
        }
        let x = match wrt {
            [x] => x,
            _ => {
                return err(
                    of.span,
                    format!(
                        "partial derivatives with respect to {} inputs at once are not supported",
                        wrt.len()
                    ),
                )
                .map_err(|d| {
                    Box::new(d.with_help(
                        "differentiate once per function: `function f_x = der(f, x); function f_xy = der(f_x, y);`",
                    ))
                })
            }
        };
        let f_name = self.lk.name_of(fid);
        self.functions.borrow_mut().insert(f_name.clone(), fid);
        let f = self.translate_function(&f_name, fid)?;
        let Some(input) = f.inputs.iter().find(|v| v.name == x.as_str()) else {
            return err(x.span, format!("`{x}` is not an input of `{f_name}`")).map_err(|d| {
                Box::new(d.with_help("name one of the function's inputs (spec 12.7.2)"))
            });
        };
        if input.ty != ScalarType::Real || !input.dims.is_empty() {
            return err(
                x.span,
                format!("`{x}` is not a scalar Real input of `{f_name}`, so `{f_name}` has no partial derivative with respect to it"),
            );
        }
        if f.outputs.is_empty() || f.outputs.iter().any(|o| o.ty != ScalarType::Real) {
            return err(
                of.span,
                format!("`{f_name}` has outputs that are not Real: only functions with Real outputs have partial derivatives here"),
            );
        }
        if !matches!(f.body, FunctionBody::Algorithm(_)) {
            return err(
                of.span,
                format!("`{f_name}` is an external function: its partial derivative cannot be generated from an algorithm"),
            );
        }
        let entry = self.lib().get(id);
        let at = origin(entry.def.name.span, &self.package_node(id));
        let var = |n: &str| Expr::Var {
            name: n.to_string(),
            subscripts: Vec::new(),
        };
        let mut args: Vec<Expr> = f.inputs.iter().map(|v| var(&v.name)).collect();
        for v in f.inputs.iter().filter(|v| v.ty == ScalarType::Real) {
            args.push(if v.name == input.name {
                Expr::Real(1.0)
            } else if v.dims.is_empty() {
                Expr::Real(0.0)
            } else {
                // a zero of the input's shape, whatever its size
                Expr::Binary {
                    op: BinaryOp::Mul,
                    lhs: Box::new(Expr::Real(0.0)),
                    rhs: Box::new(var(&v.name)),
                }
            });
        }
        let call = Expr::Call {
            func: flat::generated_derivative_name(&f_name),
            args,
        };
        let outputs: Vec<flat::FunctionVar> = f
            .outputs
            .iter()
            .map(|o| flat::FunctionVar {
                default: None,
                ..o.clone()
            })
            .collect();
        let body = match outputs.as_slice() {
            [only] => Statement::Assign {
                target: var(&only.name),
                value: call,
                origin: at.clone(),
            },
            _ => Statement::TupleAssign {
                targets: outputs.iter().map(|o| Some(var(&o.name))).collect(),
                value: call,
                origin: at.clone(),
            },
        };
        Ok(Function {
            name: name.to_string(),
            inputs: f.inputs.clone(),
            outputs,
            locals: Vec::new(),
            body: FunctionBody::Algorithm(vec![body]),
            derivatives: Vec::new(),
            inline: false,
            smooth_order: None,
            inverses: Vec::new(),
            is_impure: false,
            origin: at,
        })
    }
}
