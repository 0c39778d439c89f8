//! The flat model as Modelica text (`moss flatten`). The output is itself a valid model:
//! functions and enumeration types come first as top-level classes with quoted full names,
//! then one `model` whose variables carry their full names as quoted identifiers
//! (`Real 'inertia1.phi'(start = 0, fixed = true);`).

use crate::flat::*;
use std::collections::BTreeMap;
use std::fmt::Write;

/// `a.b[2]` → `'a.b[2]'`; plain identifiers stay as they are.
pub fn quote_name(name: &str) -> String {
    let simple = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if simple || (name.starts_with('\'') && name.ends_with('\'') && name.len() > 1) {
        return name.to_string();
    }
    let mut s = String::from("'");
    for c in name.chars() {
        match c {
            '\'' => s.push_str("\\'"),
            '\\' => s.push_str("\\\\"),
            c => s.push(c),
        }
    }
    s.push('\'');
    s
}

pub fn quote_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn real(v: f64) -> String {
    if v.is_nan() {
        return "(0.0/0.0)".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "1e400".into()
        } else {
            "(-1e400)".into()
        };
    }
    format!("{v:?}")
}

/// Printing context: in function bodies variable names are plain locals.
#[derive(Clone, Copy)]
struct P {
    in_function: bool,
}

fn prec(e: &Expr) -> u8 {
    match e {
        Expr::If { .. } => 0,
        Expr::Binary { op, .. } => match op {
            BinaryOp::Or => 1,
            BinaryOp::And => 2,
            BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge
            | BinaryOp::Eq
            | BinaryOp::Ne => 4,
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::ElemAdd | BinaryOp::ElemSub => 5,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::ElemMul | BinaryOp::ElemDiv => 6,
            BinaryOp::Pow | BinaryOp::ElemPow => 7,
        },
        Expr::Unary {
            op: UnaryOp::Not, ..
        } => 3,
        Expr::Unary {
            op: UnaryOp::Neg, ..
        } => 5,
        Expr::Range { .. } => 0,
        Expr::Real(v) if *v < 0.0 => 5,
        Expr::Integer(v) if *v < 0 => 5,
        _ => 9,
    }
}

fn wrap(e: &Expr, p: P, min: u8) -> String {
    let s = expr(e, p);
    if prec(e) < min {
        format!("({s})")
    } else {
        s
    }
}

fn expr(e: &Expr, p: P) -> String {
    match e {
        Expr::Real(v) => real(*v),
        Expr::Integer(v) => v.to_string(),
        Expr::Boolean(b) => b.to_string(),
        Expr::String(s) => quote_string(s),
        Expr::Enum { ty, literal, .. } => format!("{}.{}", quote_name(ty), quote_name(literal)),
        Expr::Var { name, subscripts } => {
            // Function locals are plain identifiers, except scalarized record fields (`p.x`).
            // Function locals are plain identifiers, except scalarized record fields (`p.x`)
            // and the bound inputs of specializations (`f$A`).
            let mut s = if p.in_function && !name.contains(['.', '$']) {
                name.clone()
            } else {
                quote_name(name)
            };
            if !subscripts.is_empty() {
                let subs: Vec<String> = subscripts
                    .iter()
                    .map(|x| match x {
                        Subscript::All => ":".to_string(),
                        Subscript::Index(i) => expr(i, p),
                    })
                    .collect();
                let _ = write!(s, "[{}]", subs.join(", "));
            }
            s
        }
        Expr::Time => "time".into(),
        Expr::Unary { op, arg } => match op {
            UnaryOp::Neg => format!("-{}", wrap(arg, p, 6)),
            UnaryOp::Not => format!("not {}", wrap(arg, p, 4)),
        },
        Expr::Binary { op, lhs, rhs } => {
            let q = prec(e);
            // Relational operators and `^` do not chain; `-`, `/` are left-associative.
            let (lmin, rmin) = match op {
                BinaryOp::Pow | BinaryOp::ElemPow => (q + 1, q + 1),
                BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge
                | BinaryOp::Eq
                | BinaryOp::Ne => (q + 1, q + 1),
                _ => (q, q + 1),
            };
            format!(
                "{} {} {}",
                wrap(lhs, p, lmin),
                op.symbol(),
                wrap(rhs, p, rmin)
            )
        }
        Expr::Call { func, args } => {
            let a: Vec<String> = args.iter().map(|x| expr(x, p)).collect();
            let f = if BUILTINS.contains(&func.as_str()) {
                func.clone()
            } else {
                quote_name(func)
            };
            format!("{f}({})", a.join(", "))
        }
        Expr::If { branches, else_ } => {
            let mut s = String::new();
            for (k, (c, v)) in branches.iter().enumerate() {
                let kw = if k == 0 { "if" } else { " elseif" };
                let _ = write!(s, "{kw} {} then {}", expr(c, p), wrap(v, p, 1));
            }
            let _ = write!(s, " else {}", wrap(else_, p, 1));
            s
        }
        Expr::Array(items) => {
            let a: Vec<String> = items.iter().map(|x| expr(x, p)).collect();
            format!("{{{}}}", a.join(", "))
        }
        Expr::Range { start, step, stop } => match step {
            Some(st) => format!(
                "{}:{}:{}",
                wrap(start, p, 5),
                wrap(st, p, 5),
                wrap(stop, p, 5)
            ),
            None => format!("{}:{}", wrap(start, p, 5), wrap(stop, p, 5)),
        },
        Expr::Tuple(items) => {
            let a: Vec<String> = items
                .iter()
                .map(|x| x.as_ref().map(|x| expr(x, p)).unwrap_or_default())
                .collect();
            format!("({})", a.join(", "))
        }
        Expr::CallOutput { call, index } => {
            format!("/* output {} of */ {}", index + 1, expr(call, p))
        }
    }
}

/// Print an expression of the model (variables as quoted full names).
pub fn print_expr(e: &Expr) -> String {
    expr(e, P { in_function: false })
}

fn type_name(t: &ScalarType) -> String {
    match t {
        ScalarType::Real => "Real".into(),
        ScalarType::Integer => "Integer".into(),
        ScalarType::Boolean => "Boolean".into(),
        ScalarType::String => "String".into(),
        ScalarType::Clock => "Clock".into(),
        ScalarType::Enumeration { name, .. } => quote_name(name),
    }
}

fn attributes(a: &Attributes) -> Vec<String> {
    let p = P { in_function: false };
    let mut v = Vec::new();
    if let Some(x) = &a.quantity {
        v.push(format!("quantity = {}", quote_string(x)));
    }
    if let Some(x) = &a.unit {
        v.push(format!("unit = {}", quote_string(x)));
    }
    if let Some(x) = &a.display_unit {
        v.push(format!("displayUnit = {}", quote_string(x)));
    }
    if let Some(x) = &a.min {
        v.push(format!("min = {}", expr(x, p)));
    }
    if let Some(x) = &a.max {
        v.push(format!("max = {}", expr(x, p)));
    }
    if let Some(x) = &a.start {
        v.push(format!("start = {}", expr(x, p)));
    }
    if let Some(x) = a.fixed {
        v.push(format!("fixed = {x}"));
    }
    if let Some(x) = &a.nominal {
        v.push(format!("nominal = {}", expr(x, p)));
    }
    if let Some(x) = a.state_select {
        let lit = match x {
            StateSelect::Never => "never",
            StateSelect::Avoid => "avoid",
            StateSelect::Default => "default",
            StateSelect::Prefer => "prefer",
            StateSelect::Always => "always",
        };
        v.push(format!("stateSelect = StateSelect.{lit}"));
    }
    v
}

fn variable(out: &mut String, v: &Variable) {
    let mut s = String::from("  ");
    match v.variability {
        Variability::Constant => s.push_str("constant "),
        Variability::Parameter => s.push_str("parameter "),
        Variability::Discrete if v.ty == ScalarType::Real => s.push_str("discrete "),
        _ => {}
    }
    match v.causality {
        Causality::Input => s.push_str("input "),
        Causality::Output => s.push_str("output "),
        Causality::Internal => {}
    }
    s.push_str(&type_name(&v.ty));
    s.push(' ');
    s.push_str(&quote_name(&v.name));
    let attrs = attributes(&v.attrs);
    if !attrs.is_empty() {
        let _ = write!(s, "({})", attrs.join(", "));
    }
    if let Some(b) = &v.binding {
        let _ = write!(s, " = {}", print_expr(b));
    }
    if !v.description.is_empty() {
        let _ = write!(s, " {}", quote_string(&v.description));
    }
    if v.evaluate {
        // kept so that the printed model, translated again, evaluates the same parameters
        s.push_str(" annotation(Evaluate=true)");
    }
    s.push_str(";\n");
    out.push_str(&s);
}

fn level(l: AssertLevel) -> &'static str {
    match l {
        AssertLevel::Error => "AssertionLevel.error",
        AssertLevel::Warning => "AssertionLevel.warning",
    }
}

fn equation(out: &mut String, e: &Equation, ind: usize) {
    let pad = "  ".repeat(ind);
    let p = P { in_function: false };
    match e {
        Equation::Equal { lhs, rhs, .. } => {
            let _ = writeln!(out, "{pad}{} = {};", expr(lhs, p), expr(rhs, p));
        }
        Equation::If {
            branches, else_, ..
        } => {
            for (k, (c, b)) in branches.iter().enumerate() {
                let kw = if k == 0 { "if" } else { "elseif" };
                let _ = writeln!(out, "{pad}{kw} {} then", expr(c, p));
                b.iter().for_each(|x| equation(out, x, ind + 1));
            }
            if !else_.is_empty() {
                let _ = writeln!(out, "{pad}else");
                else_.iter().for_each(|x| equation(out, x, ind + 1));
            }
            let _ = writeln!(out, "{pad}end if;");
        }
        Equation::When { branches, .. } => {
            for (k, (c, b)) in branches.iter().enumerate() {
                let kw = if k == 0 { "when" } else { "elsewhen" };
                let _ = writeln!(out, "{pad}{kw} {} then", expr(c, p));
                b.iter().for_each(|x| equation(out, x, ind + 1));
            }
            let _ = writeln!(out, "{pad}end when;");
        }
        Equation::Reinit { var, value, .. } => {
            let _ = writeln!(out, "{pad}reinit({}, {});", quote_name(var), expr(value, p));
        }
        Equation::Assert {
            condition,
            message,
            level: l,
            ..
        } => {
            let _ = writeln!(
                out,
                "{pad}assert({}, {}, {});",
                expr(condition, p),
                expr(message, p),
                level(*l)
            );
        }
        Equation::Terminate { message, .. } => {
            let _ = writeln!(out, "{pad}terminate({});", expr(message, p));
        }
        Equation::Call { func, args, .. } => {
            let c = Expr::Call {
                func: func.clone(),
                args: args.clone(),
            };
            let _ = writeln!(out, "{pad}{};", expr(&c, p));
        }
    }
}

fn statement(out: &mut String, s: &Statement, ind: usize, p: P) {
    let pad = "  ".repeat(ind);
    match s {
        Statement::Assign { target, value, .. } => {
            let _ = writeln!(out, "{pad}{} := {};", expr(target, p), expr(value, p));
        }
        Statement::TupleAssign { targets, value, .. } => {
            let t = Expr::Tuple(targets.clone());
            let _ = writeln!(out, "{pad}{} := {};", expr(&t, p), expr(value, p));
        }
        Statement::If {
            branches, else_, ..
        } => {
            for (k, (c, b)) in branches.iter().enumerate() {
                let kw = if k == 0 { "if" } else { "elseif" };
                let _ = writeln!(out, "{pad}{kw} {} then", expr(c, p));
                b.iter().for_each(|x| statement(out, x, ind + 1, p));
            }
            if !else_.is_empty() {
                let _ = writeln!(out, "{pad}else");
                else_.iter().for_each(|x| statement(out, x, ind + 1, p));
            }
            let _ = writeln!(out, "{pad}end if;");
        }
        Statement::For {
            var, range, body, ..
        } => {
            let _ = writeln!(
                out,
                "{pad}for {} in {} loop",
                quote_name(var),
                expr(range, p)
            );
            body.iter().for_each(|x| statement(out, x, ind + 1, p));
            let _ = writeln!(out, "{pad}end for;");
        }
        Statement::While {
            condition, body, ..
        } => {
            let _ = writeln!(out, "{pad}while {} loop", expr(condition, p));
            body.iter().for_each(|x| statement(out, x, ind + 1, p));
            let _ = writeln!(out, "{pad}end while;");
        }
        Statement::When { branches, .. } => {
            for (k, (c, b)) in branches.iter().enumerate() {
                let kw = if k == 0 { "when" } else { "elsewhen" };
                let _ = writeln!(out, "{pad}{kw} {} then", expr(c, p));
                b.iter().for_each(|x| statement(out, x, ind + 1, p));
            }
            let _ = writeln!(out, "{pad}end when;");
        }
        Statement::Reinit { var, value, .. } => {
            let _ = writeln!(out, "{pad}reinit({}, {});", quote_name(var), expr(value, p));
        }
        Statement::Assert {
            condition,
            message,
            level: l,
            ..
        } => {
            let _ = writeln!(
                out,
                "{pad}assert({}, {}, {});",
                expr(condition, p),
                expr(message, p),
                level(*l)
            );
        }
        Statement::Terminate { message, .. } => {
            let _ = writeln!(out, "{pad}terminate({});", expr(message, p));
        }
        Statement::Call { func, args, .. } => {
            let c = Expr::Call {
                func: func.clone(),
                args: args.clone(),
            };
            let _ = writeln!(out, "{pad}{};", expr(&c, p));
        }
        Statement::Return { .. } => {
            let _ = writeln!(out, "{pad}return;");
        }
        Statement::Break { .. } => {
            let _ = writeln!(out, "{pad}break;");
        }
    }
}

fn function_var(out: &mut String, prefix: &str, v: &FunctionVar) {
    let p = P { in_function: true };
    let mut s = format!("  {prefix}{} {}", type_name(&v.ty), quote_name(&v.name));
    if !v.dims.is_empty() {
        let d: Vec<String> = v
            .dims
            .iter()
            .map(|d| d.as_ref().map(|x| expr(x, p)).unwrap_or_else(|| ":".into()))
            .collect();
        let _ = write!(s, "[{}]", d.join(", "));
    }
    if let Some(d) = &v.default {
        let _ = write!(s, " = {}", expr(d, p));
    }
    s.push_str(";\n");
    out.push_str(&s);
}

pub fn print_function(out: &mut String, f: &Function) {
    let p = P { in_function: true };
    let name = quote_name(&f.name);
    let kw = if f.is_impure {
        "impure function"
    } else {
        "function"
    };
    let _ = writeln!(out, "{kw} {name}");
    f.inputs.iter().for_each(|v| function_var(out, "input ", v));
    f.outputs
        .iter()
        .for_each(|v| function_var(out, "output ", v));
    if !f.locals.is_empty() {
        out.push_str("protected\n");
        f.locals.iter().for_each(|v| function_var(out, "", v));
    }
    match &f.body {
        FunctionBody::Algorithm(stmts) => {
            out.push_str("algorithm\n");
            stmts.iter().for_each(|s| statement(out, s, 1, p));
        }
        FunctionBody::External {
            language,
            name,
            output,
            args,
            ..
        } => {
            let a: Vec<String> = args.iter().map(|x| expr(x, p)).collect();
            let lhs = output
                .as_ref()
                .map(|o| format!("{o} = "))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "external {} {lhs}{name}({});",
                quote_string(language),
                a.join(", ")
            );
        }
    }
    let mut ann = Vec::new();
    for d in &f.derivatives {
        let mut opts = Vec::new();
        if d.order != 1 {
            opts.push(format!("order = {}", d.order));
        }
        for n in &d.no_derivative {
            opts.push(format!("noDerivative = {n}"));
        }
        for z in &d.zero_derivative {
            opts.push(format!("zeroDerivative = {z}"));
        }
        let o = if opts.is_empty() {
            String::new()
        } else {
            format!("({})", opts.join(", "))
        };
        ann.push(format!("derivative{o} = {}", quote_name(&d.function)));
    }
    if f.inline {
        ann.push("Inline = true".into());
    }
    if let Some(k) = f.smooth_order {
        ann.push(format!("smoothOrder = {k}"));
    }
    if !ann.is_empty() {
        let _ = writeln!(out, "  annotation({});", ann.join(", "));
    }
    let _ = writeln!(out, "end {name};\n");
}

/// Enumeration types used by variables, by full name.
fn enumerations(m: &FlatModel) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut add = |t: &ScalarType| {
        if let ScalarType::Enumeration { name, literals } = t {
            if &**name != "StateSelect" && &**name != "AssertionLevel" {
                out.insert(
                    name.to_string(),
                    literals.iter().map(|l| l.to_string()).collect(),
                );
            }
        }
    };
    m.variables.iter().for_each(|v| add(&v.ty));
    for f in m.functions.values() {
        f.inputs
            .iter()
            .chain(&f.outputs)
            .chain(&f.locals)
            .for_each(|v| add(&v.ty));
    }
    out
}

/// The whole flat model as Modelica text.
pub fn print_model(m: &FlatModel) -> String {
    let mut out = String::new();
    for (name, lits) in enumerations(m) {
        let l: Vec<String> = lits.iter().map(|l| quote_name(l)).collect();
        let _ = writeln!(
            out,
            "type {} = enumeration({});\n",
            quote_name(&name),
            l.join(", ")
        );
    }
    for f in m.functions.values() {
        print_function(&mut out, f);
    }
    let name = quote_name(&m.name);
    let _ = writeln!(out, "model {name}");
    m.variables.iter().for_each(|v| variable(&mut out, v));
    if !m.initial_equations.is_empty() {
        out.push_str("initial equation\n");
        m.initial_equations
            .iter()
            .for_each(|e| equation(&mut out, e, 1));
    }
    for a in &m.initial_algorithms {
        out.push_str("initial algorithm\n");
        a.statements
            .iter()
            .for_each(|s| statement(&mut out, s, 1, P { in_function: false }));
    }
    if !m.equations.is_empty() {
        out.push_str("equation\n");
        m.equations.iter().for_each(|e| equation(&mut out, e, 1));
    }
    for a in &m.algorithms {
        out.push_str("algorithm\n");
        a.statements
            .iter()
            .for_each(|s| statement(&mut out, s, 1, P { in_function: false }));
    }
    let x = &m.experiment;
    let mut ex = Vec::new();
    if let Some(v) = x.start_time {
        ex.push(format!("StartTime = {}", real(v)));
    }
    if let Some(v) = x.stop_time {
        ex.push(format!("StopTime = {}", real(v)));
    }
    if let Some(v) = x.tolerance {
        ex.push(format!("Tolerance = {}", real(v)));
    }
    if let Some(v) = x.interval {
        ex.push(format!("Interval = {}", real(v)));
    }
    if !ex.is_empty() {
        let _ = writeln!(out, "  annotation(experiment({}));", ex.join(", "));
    }
    let _ = writeln!(out, "end {name};");
    out
}
