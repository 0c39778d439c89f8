//! Small helpers of the clock pass: the variable table, expression types and
//! translation-time Integer values.

use moss_frontend::flat::{BinaryOp, Expr, ScalarType, UnaryOp, Variability, Variable};
use rustc_hash::FxHashMap as HashMap;

/// The flat model's variables by name.
pub struct VarTable<'a> {
    pub vars: &'a [Variable],
    by_name: HashMap<&'a str, usize>,
}

impl<'a> VarTable<'a> {
    pub fn new(vars: &'a [Variable]) -> VarTable<'a> {
        let by_name = vars
            .iter()
            .enumerate()
            .map(|(i, v)| (v.name.as_str(), i))
            .collect();
        VarTable { vars, by_name }
    }

    pub fn index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    pub fn name(&self, i: usize) -> &str {
        &self.vars[i].name
    }

    pub fn get(&self, name: &str) -> Option<&'a Variable> {
        self.index(name).map(|i| &self.vars[i])
    }

    pub fn is_clock(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| v.ty == ScalarType::Clock)
    }

    /// Constants and parameters: not part of any partition.
    pub fn is_parameter(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| {
            matches!(
                v.variability,
                Variability::Constant | Variability::Parameter
            )
        })
    }
}

/// True for expressions of type `Clock`.
pub fn is_clock_expr(e: &Expr, vars: &VarTable) -> bool {
    match e {
        Expr::Var { name, .. } => vars.is_clock(name),
        Expr::Call { func, args } => match func.as_str() {
            "Clock" => true,
            "subSample" | "superSample" | "shiftSample" | "backSample" => {
                args.first().is_some_and(|a| is_clock_expr(a, vars))
            }
            _ => false,
        },
        Expr::If { else_, .. } => is_clock_expr(else_, vars),
        _ => false,
    }
}

/// The scalar type of an expression, as far as the clock pass needs it (Integer arithmetic
/// stays Integer, relations are Boolean, calls of unknown result type count as Real).
pub fn expr_type(e: &Expr, vars: &VarTable) -> ScalarType {
    match e {
        Expr::Real(_) | Expr::Time => ScalarType::Real,
        Expr::Integer(_) => ScalarType::Integer,
        Expr::Boolean(_) => ScalarType::Boolean,
        Expr::String(_) => ScalarType::String,
        Expr::Enum { ty, .. } => ScalarType::Enumeration {
            name: ty.clone(),
            literals: Vec::new(),
        },
        Expr::Var { name, .. } => vars
            .get(name)
            .map(|v| v.ty.clone())
            .unwrap_or(ScalarType::Real),
        Expr::Unary { op, arg } => match op {
            UnaryOp::Not => ScalarType::Boolean,
            UnaryOp::Neg => expr_type(arg, vars),
        },
        Expr::Binary { op, lhs, rhs } => match op {
            BinaryOp::And
            | BinaryOp::Or
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge
            | BinaryOp::Eq
            | BinaryOp::Ne => ScalarType::Boolean,
            BinaryOp::Div | BinaryOp::ElemDiv | BinaryOp::Pow | BinaryOp::ElemPow => {
                ScalarType::Real
            }
            _ => match (expr_type(lhs, vars), expr_type(rhs, vars)) {
                (ScalarType::Integer, ScalarType::Integer) => ScalarType::Integer,
                (ScalarType::String, _) => ScalarType::String,
                _ => ScalarType::Real,
            },
        },
        Expr::If { branches, else_ } => branches
            .first()
            .map(|(_, v)| expr_type(v, vars))
            .unwrap_or_else(|| expr_type(else_, vars)),
        Expr::Call { func, args } => match func.as_str() {
            "sample" | "previous" | "hold" | "subSample" | "superSample" | "shiftSample"
            | "backSample" | "noClock" | "pre" => args
                .first()
                .map(|a| expr_type(a, vars))
                .unwrap_or(ScalarType::Real),
            "firstTick" | "edge" | "change" | "initial" | "terminal" | "activeState" => {
                ScalarType::Boolean
            }
            "integer" | "Integer" | "div" | "mod" | "rem" | "ticksInState" => {
                if func == "div" || func == "mod" || func == "rem" {
                    match args
                        .iter()
                        .all(|a| expr_type(a, vars) == ScalarType::Integer)
                    {
                        true => ScalarType::Integer,
                        false => ScalarType::Real,
                    }
                } else {
                    ScalarType::Integer
                }
            }
            "abs" | "min" | "max" | "sign" => args
                .first()
                .map(|a| expr_type(a, vars))
                .unwrap_or(ScalarType::Real),
            "Boolean" => ScalarType::Boolean,
            "String" => ScalarType::String,
            _ => ScalarType::Real,
        },
        _ => ScalarType::Real,
    }
}

/// The value of an Integer expression of literals and parameters with literal bindings.
pub fn eval_integer(e: &Expr, vars: &VarTable) -> Option<i64> {
    eval_integer_depth(e, vars, 0)
}

fn eval_integer_depth(e: &Expr, vars: &VarTable, depth: usize) -> Option<i64> {
    if depth > 32 {
        return None;
    }
    match e {
        Expr::Integer(n) => Some(*n),
        Expr::Real(x) if x.fract() == 0.0 && x.abs() < 9e15 => Some(*x as i64),
        Expr::Var { name, .. } => {
            let v = vars.get(name)?;
            if !matches!(
                v.variability,
                Variability::Constant | Variability::Parameter
            ) {
                return None;
            }
            eval_integer_depth(v.binding.as_ref()?, vars, depth + 1)
        }
        Expr::Unary {
            op: UnaryOp::Neg,
            arg,
        } => eval_integer_depth(arg, vars, depth + 1).map(|x| -x),
        Expr::Binary { op, lhs, rhs } => {
            let a = eval_integer_depth(lhs, vars, depth + 1)?;
            let b = eval_integer_depth(rhs, vars, depth + 1)?;
            match op {
                BinaryOp::Add => a.checked_add(b),
                BinaryOp::Sub => a.checked_sub(b),
                BinaryOp::Mul => a.checked_mul(b),
                _ => None,
            }
        }
        Expr::Call { func, args } if args.len() == 2 && func == "div" => {
            let a = eval_integer_depth(&args[0], vars, depth + 1)?;
            let b = eval_integer_depth(&args[1], vars, depth + 1)?;
            (b != 0).then(|| a / b)
        }
        _ => None,
    }
}

/// The value of a String literal or of a String parameter bound to one.
pub fn eval_string(e: &Expr, vars: &VarTable) -> Option<String> {
    let mut e = e;
    for _ in 0..32 {
        match e {
            Expr::String(s) => return Some(s.clone()),
            Expr::Var { name, .. } if vars.is_parameter(name) => {
                e = vars.get(name)?.binding.as_ref()?
            }
            _ => return None,
        }
    }
    None
}

/// The default value of a type (the start value when none is given).
pub fn default_value(ty: &ScalarType) -> Expr {
    match ty {
        ScalarType::Integer => Expr::Integer(0),
        ScalarType::Boolean => Expr::Boolean(false),
        ScalarType::String => Expr::String(String::new()),
        _ => Expr::Real(0.0),
    }
}

pub fn var(name: &str) -> Expr {
    Expr::Var {
        name: name.to_string(),
        subscripts: Vec::new(),
    }
}

pub fn call(func: &str, args: Vec<Expr>) -> Expr {
    Expr::Call {
        func: func.to_string(),
        args,
    }
}

pub fn bin(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr::Binary {
        op,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
    }
}

/// The first variable of `e` that is not a parameter or constant.
pub fn first_non_parameter(e: &Expr, vars: &VarTable) -> Option<String> {
    let mut found = None;
    moss_frontend::walk::visit(e, &mut |x| {
        if let Expr::Var { name, .. } = x {
            if found.is_none() && !vars.is_parameter(name) {
                found = Some(name.clone());
            }
        }
    });
    found
}
