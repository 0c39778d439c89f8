//! Readable text of a causal program (`moss translate --dump`).

use crate::program::{ArithOp, Block, CausalProgram, PExpr, RelOp};
use std::fmt::Write;

/// Text of an expression with variable names.
pub fn expr_text(p: &CausalProgram, e: &PExpr) -> String {
    let mut s = String::new();
    write_expr(p, e, &mut s);
    s
}

fn name(p: &CausalProgram, v: u32) -> &str {
    p.vars
        .get(v as usize)
        .map(|x| x.name.as_str())
        .unwrap_or("?")
}

fn write_expr(p: &CausalProgram, e: &PExpr, s: &mut String) {
    match e {
        PExpr::Const(v) => s.push_str(&crate::ir::fmt_num(*v)),
        PExpr::Str(t) => {
            let _ = write!(s, "{t:?}");
        }
        PExpr::Var(v) => s.push_str(name(p, *v)),
        PExpr::Pre(v) => {
            let _ = write!(s, "pre({})", name(p, *v));
        }
        PExpr::Time => s.push_str("time"),
        PExpr::Neg(a) if matches!(**a, PExpr::Var(_) | PExpr::Const(_) | PExpr::Call { .. }) => {
            s.push('-');
            write_expr(p, a, s);
        }
        PExpr::Neg(a) => {
            s.push_str("-(");
            write_expr(p, a, s);
            s.push(')');
        }
        PExpr::Not(a) => {
            s.push_str("not (");
            write_expr(p, a, s);
            s.push(')');
        }
        PExpr::Arith(op, a, b) => {
            let o = match op {
                ArithOp::Add => " + ",
                ArithOp::Sub => " - ",
                ArithOp::Mul => "*",
                ArithOp::Div => "/",
                ArithOp::Pow => "^",
            };
            s.push('(');
            write_expr(p, a, s);
            s.push_str(o);
            write_expr(p, b, s);
            s.push(')');
        }
        PExpr::And(a, b) | PExpr::Or(a, b) => {
            let o = if matches!(e, PExpr::And(..)) {
                " and "
            } else {
                " or "
            };
            s.push('(');
            write_expr(p, a, s);
            s.push_str(o);
            write_expr(p, b, s);
            s.push(')');
        }
        PExpr::Rel { op, lhs, rhs, zc } => {
            let o = match op {
                RelOp::Lt => "<",
                RelOp::Le => "<=",
                RelOp::Gt => ">",
                RelOp::Ge => ">=",
                RelOp::Eq => "==",
                RelOp::Ne => "<>",
            };
            s.push('(');
            write_expr(p, lhs, s);
            let _ = write!(s, " {o} ");
            write_expr(p, rhs, s);
            s.push(')');
            if let Some(z) = zc {
                let _ = write!(s, "@zc{z}");
            }
        }
        PExpr::If(c, a, b) => {
            s.push_str("(if ");
            write_expr(p, c, s);
            s.push_str(" then ");
            write_expr(p, a, s);
            s.push_str(" else ");
            write_expr(p, b, s);
            s.push(')');
        }
        PExpr::Call { func, args } => {
            s.push_str(func);
            s.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_expr(p, a, s);
            }
            s.push(')');
        }
        PExpr::Array(items) => {
            s.push('{');
            for (i, a) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_expr(p, a, s);
            }
            s.push('}');
        }
        PExpr::Initial => s.push_str("initial()"),
        PExpr::Terminal => s.push_str("terminal()"),
        PExpr::Sample(i) => {
            let _ = write!(s, "sample#{i}");
        }
    }
}

/// Text of a block list, one block per line (nested blocks indented).
pub fn blocks_text(p: &CausalProgram, blocks: &[Block], indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    for b in blocks {
        match b {
            Block::Assign { var, expr } => {
                let _ = writeln!(out, "{pad}{} := {}", name(p, *var), expr_text(p, expr));
            }
            Block::SolveScalar { var, residual, .. } => {
                let _ = writeln!(
                    out,
                    "{pad}solve 0 = {} for {}",
                    expr_text(p, residual),
                    name(p, *var)
                );
            }
            Block::Linear { vars, matrix, rhs } => {
                let names: Vec<&str> = vars.iter().map(|&v| name(p, v)).collect();
                let _ = writeln!(out, "{pad}linear system for [{}]:", names.join(", "));
                for (r, c, e) in matrix {
                    let _ = writeln!(out, "{pad}  A[{r},{c}] = {}", expr_text(p, e));
                }
                for (r, e) in rhs.iter().enumerate() {
                    let _ = writeln!(out, "{pad}  b[{r}] = {}", expr_text(p, e));
                }
            }
            Block::Nonlinear {
                iteration_vars,
                inner,
                residuals,
                jacobian,
                linear,
                fallback,
            } => {
                let names: Vec<&str> = iteration_vars.iter().map(|&v| name(p, v)).collect();
                let _ = writeln!(
                    out,
                    "{pad}{} system, iteration variables [{}]{}:",
                    if *linear { "torn linear" } else { "nonlinear" },
                    names.join(", "),
                    if jacobian.is_some() {
                        ", symbolic Jacobian"
                    } else {
                        ""
                    }
                );
                blocks_text(p, inner, indent + 1, out);
                for r in residuals {
                    let _ = writeln!(out, "{pad}  residual 0 = {}", expr_text(p, r));
                }
                if let Some(f) = fallback {
                    let _ = writeln!(
                        out,
                        "{pad}  where this fails (a divisor vanishes), the same loop torn by constant divisors:"
                    );
                    blocks_text(p, std::slice::from_ref(f.as_ref()), indent + 2, out);
                }
            }
            Block::CallOutputs {
                outputs,
                func,
                args,
            } => {
                let outs: Vec<&str> = outputs
                    .iter()
                    .map(|o| o.map(|v| name(p, v)).unwrap_or(""))
                    .collect();
                let args: Vec<String> = args.iter().map(|a| expr_text(p, a)).collect();
                let _ = writeln!(
                    out,
                    "{pad}({}) := {}({})",
                    outs.join(", "),
                    func,
                    args.join(", ")
                );
            }
            Block::Algorithm { outputs, .. } => {
                let outs: Vec<&str> = outputs.iter().map(|&v| name(p, v)).collect();
                let _ = writeln!(out, "{pad}algorithm -> [{}]", outs.join(", "));
            }
            Block::When { branches } => {
                for (i, br) in branches.iter().enumerate() {
                    let conds: Vec<&str> = br.conditions.iter().map(|&v| name(p, v)).collect();
                    let kw = if i == 0 { "when" } else { "elsewhen" };
                    let _ = writeln!(out, "{pad}{kw} {}:", conds.join(" or "));
                    blocks_text(p, &br.body, indent + 1, out);
                }
            }
            Block::Reinit { var, value } => {
                let _ = writeln!(
                    out,
                    "{pad}reinit({}, {})",
                    name(p, *var),
                    expr_text(p, value)
                );
            }
            Block::Assert { condition, .. } => {
                let _ = writeln!(out, "{pad}assert({})", expr_text(p, condition));
            }
            Block::Terminate { .. } => {
                let _ = writeln!(out, "{pad}terminate");
            }
        }
    }
}

/// The whole program.
pub fn program_text(p: &CausalProgram) -> String {
    let mut out = String::new();
    let sections = [
        ("parameter blocks", &p.parameter_blocks),
        ("start value blocks", &p.start_blocks),
        ("initialization blocks", &p.init_blocks),
        ("simulation blocks", &p.blocks),
    ];
    for (title, blocks) in sections {
        if blocks.is_empty() && std::ptr::eq(blocks, &p.start_blocks) {
            // most models have none; their dumps stay as they were
            continue;
        }
        let _ = writeln!(out, "{title} ({}):", blocks.len());
        blocks_text(p, blocks, 1, &mut out);
    }
    if let Some(j) = &p.ode_jacobian {
        let _ = writeln!(
            out,
            "ODE Jacobian tangent program ({} blocks; seeds {}):",
            j.blocks.len(),
            j.seeds
                .iter()
                .map(|&s| p.vars[s as usize].name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        blocks_text(p, &j.blocks, 1, &mut out);
    }
    if !p.zero_crossings.is_empty() {
        let _ = writeln!(out, "zero crossings ({}):", p.zero_crossings.len());
        for (i, z) in p.zero_crossings.iter().enumerate() {
            let te = z
                .time_event
                .as_ref()
                .map(|t| format!("  (time event at {})", expr_text(p, t)))
                .unwrap_or_default();
            let _ = writeln!(out, "  zc{i}: {}{te}", z.description);
        }
    }
    out
}
